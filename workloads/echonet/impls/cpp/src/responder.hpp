// One request in, the reply (or none) out (SPEC §6): Get, SetI, SetC, SetGet, INF_REQ and
// INFC, addressed to one instance or to every instance of a class (instance 0x00).
#pragma once

#include "frame.hpp"
#include "objects.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace echonet {

// What became of one datagram; node_main counts each kind.
enum class Verdict {
    request,   // handled: answered by every object it names (or silently, a successful SetI)
    ignored,   // well-formed, but not a request or not for an object of this node
    malformed, // SPEC §3
    format2,
};

// The largest reply to a datagram of at most kMaxDatagram bytes: a reply property is never
// longer than the request's, except a Get's, which grows by at most kMaxValueSize bytes, 255
// times.
inline constexpr std::size_t kMaxReply = kMaxDatagram + 255 * kMaxValueSize;

// Writes `object`'s reply to `request` into `out` and returns its size; 0 when there is none
// (a SetI that succeeded) or, which the sizes above rule out, when it did not fit. A Set
// changes the object as it goes: accepted properties stay set even when another is refused.
std::size_t answer(const Frame &request, DeviceObject &object, std::span<std::uint8_t> out);

// Handles whole datagrams for a node, with one reply buffer allocated at start.
class Responder {
  public:
    // The reply buffer is not zeroed: only the pages replies reach become resident.
    explicit Responder(Node &node)
        : node_(node), reply_(std::make_unique_for_overwrite<std::uint8_t[]>(kMaxReply)) {}

    // Decodes `datagram` and calls emit(Bytes reply) once per reply, in object order; the
    // reply's bytes are valid only during the call.
    template <typename Emit> Verdict handle(Bytes datagram, Emit &&emit) {
        Frame request;
        switch (decode(datagram, request)) {
        case Decoded::malformed:
            return Verdict::malformed;
        case Decoded::format2:
            return Verdict::format2;
        case Decoded::ok:
            break;
        }
        if (!is_request(request.esv))
            return Verdict::ignored;
        bool addressed = false;
        for (DeviceObject &object : node_.objects()) {
            if (!request.deoj.addresses(object.eoj()))
                continue;
            addressed = true;
            if (const std::size_t n = answer(request, object, {reply_.get(), kMaxReply}))
                emit(Bytes(reply_.get(), n));
        }
        return addressed ? Verdict::request : Verdict::ignored;
    }

  private:
    Node &node_;
    std::unique_ptr<std::uint8_t[]> reply_;
};

} // namespace echonet
