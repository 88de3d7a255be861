// The ECHONET Lite wire format, format 1 (SPEC §3): a 12-byte header (EHD1 EHD2 TID SEOJ DEOJ
// ESV OPC) and OPC properties (EPC, PDC, PDC bytes of EDT); SetGet carries a second count and
// run of properties after the first.
//
// Decoding never copies: a decoded Frame is a set of views into the datagram, valid as long as
// the datagram's bytes are. Encoding writes into a caller's buffer and never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace echonet {

using Bytes = std::span<const std::uint8_t>;

inline constexpr std::uint8_t kEhd1 = 0x10;
inline constexpr std::uint8_t kFormat1 = 0x81;
inline constexpr std::uint8_t kFormat2 = 0x82;
inline constexpr std::size_t kHeaderSize = 12; // up to and including OPC (OPCSet for SetGet)
inline constexpr std::size_t kTidOffset = 2;
inline constexpr std::size_t kEsvOffset = 10;
// A receive buffer this large reads any IPv4 UDP payload whole (at most 65,507 bytes).
inline constexpr std::size_t kMaxDatagram = 65536;

// Services (ESV). Any other byte may arrive as well: it is neither a request nor a reply.
enum class Esv : std::uint8_t {
    seti = 0x60,
    setc = 0x61,
    get = 0x62,
    inf_req = 0x63,
    setget = 0x6E,
    set_res = 0x71,
    get_res = 0x72,
    inf = 0x73,
    infc = 0x74,
    infc_res = 0x7A,
    setget_res = 0x7E,
    seti_sna = 0x50,
    setc_sna = 0x51,
    get_sna = 0x52,
    inf_sna = 0x53,
    setget_sna = 0x5E,
};

// The services a node answers (SPEC §6); INFC is a notification that asks for a response.
constexpr bool is_request(Esv esv) noexcept {
    switch (esv) {
    case Esv::seti:
    case Esv::setc:
    case Esv::get:
    case Esv::inf_req:
    case Esv::setget:
    case Esv::infc:
        return true;
    default:
        return false;
    }
}

// SetGet and its two replies carry two property runs (OPCSet, then OPCGet).
constexpr bool has_two_parts(Esv esv) noexcept {
    return esv == Esv::setget || esv == Esv::setget_res || esv == Esv::setget_sna;
}

// An ECHONET object: class group, class, instance. Instance 0 in a DEOJ addresses every
// instance of the class.
struct Eoj {
    std::uint8_t group = 0;
    std::uint8_t cls = 0;
    std::uint8_t instance = 0;

    bool operator==(const Eoj &) const = default;
    constexpr bool same_class(Eoj other) const noexcept {
        return group == other.group && cls == other.cls;
    }
    // Whether a request sent to this EOJ (as DEOJ) is meant for `object`.
    constexpr bool addresses(Eoj object) const noexcept {
        return same_class(object) && (instance == 0 || instance == object.instance);
    }
};

inline constexpr Eoj kNodeProfile{0x0E, 0xF0, 0x01};
inline constexpr Eoj kAirConditioner{0x01, 0x30, 0x01};
inline constexpr Eoj kController{0x05, 0xFF, 0x01};

struct Property {
    std::uint8_t epc = 0;
    Bytes edt; // PDC = edt.size()
};

struct Frame;

enum class Decoded {
    ok,
    malformed, // SPEC §3: dropped, counted in dropped_malformed
    format2,   // EHD2 = 0x82: well-formed, not supported; counted in dropped_format2
};

// Reads one datagram. Fills `out` only when the result is ok.
Decoded decode(Bytes datagram, Frame &out) noexcept;

// A run of properties that decode() has already walked with bounds checks, so iterating it
// trusts PDC: it cannot run past the bytes.
class PropertyList {
  public:
    class iterator {
      public:
        using value_type = Property;
        using difference_type = std::ptrdiff_t;
        iterator() noexcept = default;
        Property operator*() const noexcept {
            return {p_[0], Bytes(p_ + 2, p_[1])};
        }
        iterator &operator++() noexcept {
            p_ += 2 + p_[1];
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator old = *this;
            ++*this;
            return old;
        }
        bool operator==(const iterator &) const = default;

      private:
        friend class PropertyList;
        explicit iterator(const std::uint8_t *p) noexcept : p_(p) {}
        const std::uint8_t *p_ = nullptr;
    };

    PropertyList() noexcept = default;
    std::size_t size() const noexcept { // OPC
        return count_;
    }
    bool empty() const noexcept {
        return count_ == 0;
    }
    // The encoded run (EPC PDC EDT...), without its count byte.
    Bytes bytes() const noexcept {
        return bytes_;
    }
    iterator begin() const noexcept {
        return iterator(bytes_.data());
    }
    iterator end() const noexcept {
        return iterator(bytes_.data() + bytes_.size());
    }

  private:
    friend Decoded decode(Bytes datagram, Frame &out) noexcept;
    PropertyList(Bytes bytes, std::size_t count) noexcept : bytes_(bytes), count_(count) {}
    Bytes bytes_;
    std::size_t count_ = 0;
};

struct Frame {
    std::uint16_t tid = 0; // the two TID bytes, big-endian: written back as they came
    Eoj seoj;
    Eoj deoj;
    Esv esv = Esv::get;
    PropertyList properties; // the set part for SetGet and its replies
    PropertyList get_part;   // SetGet and its replies only; empty otherwise
};

// Builds one frame in a caller's buffer. Anything that does not fit (or a 256th property in a
// run) makes the writer fail, and ok() stays false from then on.
class FrameWriter {
  public:
    explicit FrameWriter(std::span<std::uint8_t> out) noexcept : out_(out) {}

    // Starts the frame over with the header and an empty first run (OPC = 0).
    void header(std::uint16_t tid, Eoj seoj, Eoj deoj, Esv esv) noexcept;
    // Appends a property to the current run and counts it in the run's OPC.
    void property(std::uint8_t epc, Bytes edt) noexcept;
    void property(Property p) noexcept {
        property(p.epc, p.edt);
    }
    // SetGet: ends the set run and starts the get run (appends OPCGet = 0).
    void second_part() noexcept;

    bool ok() const noexcept {
        return ok_;
    }
    std::size_t size() const noexcept {
        return size_;
    }
    // The frame so far; empty when the writer failed.
    Bytes bytes() const noexcept {
        return ok_ ? Bytes(out_.data(), size_) : Bytes();
    }

  private:
    bool room(std::size_t n) noexcept;
    std::span<std::uint8_t> out_;
    std::size_t size_ = 0;
    std::size_t count_at_ = 0; // offset of the current run's count byte
    bool ok_ = false;
};

// Writes `tid` into an encoded frame (a requester's next attempt reuses the same bytes).
inline void set_tid(std::span<std::uint8_t> frame, std::uint16_t tid) noexcept {
    frame[kTidOffset] = static_cast<std::uint8_t>(tid >> 8);
    frame[kTidOffset + 1] = static_cast<std::uint8_t>(tid);
}

} // namespace echonet
