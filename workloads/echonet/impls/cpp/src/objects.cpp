#include "objects.hpp"

#include "propmap.hpp"

#include <algorithm>
#include <stdexcept>

namespace echonet {

namespace {

constexpr std::uint8_t kAnnouncementMap = 0x9D;
constexpr std::uint8_t kSetMap = 0x9E;
constexpr std::uint8_t kGetMap = 0x9F;

// Set rules of the air conditioner (SPEC §5, "Set accepts").
bool on_or_off(std::uint8_t v) noexcept {
    return v == 0x30 || v == 0x31;
}
bool any_byte(std::uint8_t) noexcept {
    return true;
}
bool air_flow_rate(std::uint8_t v) noexcept {
    return (v >= 0x31 && v <= 0x38) || v == 0x41; // levels 1-8, or automatic
}
bool operation_mode(std::uint8_t v) noexcept {
    return v >= 0x40 && v <= 0x45; // other, automatic, cooling, heating, dry, fan
}
bool temperature_0_to_50(std::uint8_t v) noexcept {
    return v <= 0x32;
}

// `n` in `width` bytes, most significant first.
std::vector<std::uint8_t> big_endian(std::size_t n, std::size_t width) {
    std::vector<std::uint8_t> out(width);
    for (std::size_t i = width; i-- > 0; n >>= 8)
        out[i] = static_cast<std::uint8_t>(n);
    return out;
}

} // namespace

DeviceObject::DeviceObject(Eoj eoj, std::span<const PropertySpec> specs) : eoj_(eoj) {
    EpcSet announced, settable, gettable;
    for (const PropertySpec &s : specs) {
        announced[s.epc] = s.announced;
        settable[s.epc] = s.settable != nullptr;
        gettable.set(s.epc);
    }
    gettable.set(kAnnouncementMap).set(kSetMap).set(kGetMap);
    slots_.reserve(specs.size() + 3);
    for (const PropertySpec &s : specs)
        add(s.epc, s.value, s.settable);
    add(kAnnouncementMap, encode_property_map(announced).view(), nullptr);
    add(kSetMap, encode_property_map(settable).view(), nullptr);
    add(kGetMap, encode_property_map(gettable).view(), nullptr);
}

void DeviceObject::add(std::uint8_t epc, Bytes value, SetRule settable) {
    if (value.size() > kMaxValueSize || index_[epc] != 0)
        throw std::invalid_argument("bad property table");
    Slot slot;
    std::ranges::copy(value, slot.value.begin());
    slot.size = static_cast<std::uint8_t>(value.size());
    slot.settable = settable;
    slots_.push_back(slot);
    index_[epc] = static_cast<std::uint8_t>(slots_.size());
}

std::optional<Bytes> DeviceObject::get(std::uint8_t epc) const noexcept {
    if (index_[epc] == 0)
        return std::nullopt;
    const Slot &slot = slots_[index_[epc] - 1u];
    return Bytes(slot.value.data(), slot.size);
}

bool DeviceObject::set(std::uint8_t epc, Bytes edt) noexcept {
    if (index_[epc] == 0)
        return false;
    Slot &slot = slots_[index_[epc] - 1u];
    // Every settable property here is one byte wide.
    if (slot.settable == nullptr || edt.size() != 1 || !slot.settable(edt[0]))
        return false;
    slot.value[0] = edt[0];
    slot.size = 1;
    return true;
}

std::vector<PropertySpec> air_conditioner_specs() {
    return {
        {0x80, {0x31}, true, on_or_off},                  // operating status: off
        {0x81, {0x00}, true, any_byte},                   // installation location
        {0x82, {0x00, 0x00, 0x52, 0x01}, false, nullptr}, // standard version: Appendix R
        {0x88, {0x42}, true, nullptr},                    // fault status: no fault
        {0x8A, {0xFF, 0xFF, 0xFF}, false, nullptr},       // manufacturer code
        {0x8F, {0x42}, false, nullptr},                   // power-saving operation: normal
        {0x93, {0x42}, false, nullptr},                   // remote control setting
        {0x97, {0x0C, 0x00}, false, nullptr},             // current time 12:00
        {0x98, {0x07, 0xE6, 0x01, 0x01}, false, nullptr}, // current date 2022-01-01
        {0xA0, {0x41}, false, air_flow_rate},             // air flow rate: automatic
        {0xB0, {0x41}, true, operation_mode},             // operation mode: automatic
        {0xB1, {0x41}, false, nullptr},                   // automatic temperature control
        {0xB3, {0x14}, false, temperature_0_to_50},       // set temperature 20 °C
        {0xBA, {0x32}, false, nullptr},                   // room relative humidity 50 %
        {0xBB, {0x14}, false, nullptr},                   // room temperature 20 °C
    };
}

std::vector<PropertySpec> node_profile_specs(std::array<std::uint8_t, 4> addr,
                                             std::span<const Eoj> devices) {
    // 0x83: 0xFE, a 3-byte manufacturer code (experimental FF FF FF), then 13 bytes unique to
    // the node: nine zeros and its IPv4 address.
    std::vector<std::uint8_t> id = {0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    id.insert(id.end(), addr.begin(), addr.end());

    // The instance and class lists count the devices only; 0xD4 counts the node profile too.
    std::vector<std::uint8_t> instances = {static_cast<std::uint8_t>(devices.size())};
    std::vector<Eoj> classes;
    for (Eoj d : devices) {
        instances.insert(instances.end(), {d.group, d.cls, d.instance});
        if (std::ranges::none_of(classes, [&](Eoj c) { return c.same_class(d); }))
            classes.push_back(d);
    }
    std::vector<std::uint8_t> class_list = {static_cast<std::uint8_t>(classes.size())};
    for (Eoj c : classes)
        class_list.insert(class_list.end(), {c.group, c.cls});

    return {
        {0x80, {0x30}, true, nullptr},                             // operating status: on
        {0x82, {0x01, 0x0E, 0x01, 0x00}, false, nullptr},          // version 1.14, format 1
        {0x83, id, false, nullptr},                                // identification number
        {0x8A, {0xFF, 0xFF, 0xFF}, false, nullptr},                // manufacturer code
        {0xD3, big_endian(devices.size(), 3), false, nullptr},     // self-node instances
        {0xD4, big_endian(classes.size() + 1, 2), false, nullptr}, // self-node classes
        {0xD5, instances, true, nullptr},                          // instance list notification
        {0xD6, instances, false, nullptr},                         // self-node instance list S
        {0xD7, class_list, false, nullptr},                        // self-node class list S
    };
}

Node::Node(std::array<std::uint8_t, 4> addr) {
    static constexpr Eoj devices[] = {kAirConditioner};
    objects_.reserve(1 + std::size(devices));
    objects_.emplace_back(kNodeProfile, node_profile_specs(addr, devices));
    objects_.emplace_back(kAirConditioner, air_conditioner_specs());
}

} // namespace echonet
