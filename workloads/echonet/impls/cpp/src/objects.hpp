// The object model (SPEC §5): a node profile 0x0EF001 and one home air conditioner 0x013001,
// each with the mandatory properties of its class and super class, their exact values, and
// the rules a Set must pass.
#pragma once

#include "frame.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace echonet {

// The longest value any property holds (0x83 identification number, 0x9F bitmap map).
inline constexpr std::size_t kMaxValueSize = 17;

// Whether a Set may store this one-byte value; nullptr: the property is not settable.
using SetRule = bool (*)(std::uint8_t value) noexcept;

struct PropertySpec {
    std::uint8_t epc = 0;
    std::vector<std::uint8_t> value; // the initial EDT
    bool announced = false;          // listed in the announcement map 0x9D
    SetRule settable = nullptr;      // listed in the set map 0x9E when not null
};

// One object and its properties. Every property is readable; the maps 0x9D, 0x9E and 0x9F are
// made from the specs, so they cannot drift from what the object actually does.
class DeviceObject {
  public:
    // Throws std::invalid_argument for a value longer than kMaxValueSize or an EPC given twice
    // (a mistake in a table, found at start).
    DeviceObject(Eoj eoj, std::span<const PropertySpec> specs);

    Eoj eoj() const noexcept {
        return eoj_;
    }
    // The property's EDT, or nullopt when the object has no such property. The view stays
    // valid until the property is set.
    std::optional<Bytes> get(std::uint8_t epc) const noexcept;
    // Stores `edt` when the property is settable, PDC is 1 and the rule accepts the value;
    // otherwise changes nothing and returns false.
    bool set(std::uint8_t epc, Bytes edt) noexcept;

  private:
    struct Slot {
        std::array<std::uint8_t, kMaxValueSize> value{};
        std::uint8_t size = 0;
        SetRule settable = nullptr;
    };
    void add(std::uint8_t epc, Bytes value, SetRule settable);

    Eoj eoj_;
    std::array<std::uint8_t, 256> index_{}; // EPC -> slot + 1; 0: no such property
    std::vector<Slot> slots_;
};

// The specs of the classes this node carries (exposed for the tests).
std::vector<PropertySpec> air_conditioner_specs();
std::vector<PropertySpec> node_profile_specs(std::array<std::uint8_t, 4> addr,
                                             std::span<const Eoj> devices);

// Everything a node carries: the node profile first, then its devices.
class Node {
  public:
    // `addr`: the node's own IPv4 address in network order, shown in 0x83.
    explicit Node(std::array<std::uint8_t, 4> addr);

    std::span<DeviceObject> objects() noexcept {
        return objects_;
    }
    const DeviceObject &profile() const noexcept {
        return objects_.front();
    }

  private:
    std::vector<DeviceObject> objects_;
};

} // namespace echonet
