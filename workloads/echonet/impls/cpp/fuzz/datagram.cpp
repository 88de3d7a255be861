// Fuzz target `datagram` (workloads/echonet/fuzz/README.md): the input is one UDP datagram.
//
// - decode() (the node's and the controller's decoder: one function): a frame it accepts must
//   encode back to the very same bytes with FrameWriter, and format 2 / malformed must agree
//   with the header bytes.
// - The node: a fresh Node's Responder handles the datagram twice (the second time after any
//   Set the first one made). Every reply must decode, answer the request (answers(): the ESV
//   pairs of SPEC §6), keep its TID, go back to the request's SEOJ from an object the request's
//   DEOJ addresses, list the request's EPCs in order, and no more replies than objects addressed.
// - The controller: instance_list() (discovery's reading of 0xD6) over the decoded properties,
//   never naming more instances than the bytes hold.
#include "controller.hpp"
#include "frame.hpp"
#include "objects.hpp"
#include "responder.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

namespace {

using namespace echonet;

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "fuzz-echonet-cpp-datagram: %s\n", what);
    std::abort();
}

void check_round_trip(Bytes datagram, const Frame &frame) {
    std::vector<std::uint8_t> buf(datagram.size() + 16);
    FrameWriter w(buf);
    w.header(frame.tid, frame.seoj, frame.deoj, frame.esv);
    for (const Property p : frame.properties) {
        w.property(p);
    }
    if (has_two_parts(frame.esv)) {
        w.second_part();
        for (const Property p : frame.get_part) {
            w.property(p);
        }
    }
    const Bytes again = w.bytes();
    if (!w.ok() || !std::equal(again.begin(), again.end(), datagram.begin(), datagram.end())) {
        fail("a decoded frame does not encode back to its bytes");
    }
}

std::vector<std::uint8_t> epcs(const PropertyList &list) {
    std::vector<std::uint8_t> out;
    for (const Property p : list) {
        out.push_back(p.epc);
    }
    return out;
}

void check_reply(const Frame &request, Bytes reply, Node &node) {
    if (reply.size() > kMaxReply) {
        fail("a reply beyond kMaxReply");
    }
    Frame answer;
    if (decode(reply, answer) != Decoded::ok) {
        fail("a reply that does not decode");
    }
    check_round_trip(reply, answer);
    if (!answers(request.esv, answer.esv)) {
        fail("a reply whose ESV does not answer the request's");
    }
    if (answer.tid != request.tid || answer.deoj != request.seoj) {
        fail("a reply with another TID or not sent back to the requester's SEOJ");
    }
    bool from_addressed = false;
    for (const DeviceObject &object : node.objects()) {
        from_addressed |= object.eoj() == answer.seoj && request.deoj.addresses(object.eoj());
    }
    if (!from_addressed) {
        fail("a reply from an object the request did not address");
    }
    if (epcs(answer.properties) != epcs(request.properties) ||
        epcs(answer.get_part) != epcs(request.get_part)) {
        fail("a reply that does not list the request's properties in order");
    }
}

void serve(Bytes datagram, bool decoded, const Frame &request) {
    Node node({192, 0, 2, 1});
    Responder responder(node);
    std::size_t addressed = 0;
    for (const DeviceObject &object : node.objects()) {
        addressed += decoded && request.deoj.addresses(object.eoj()) ? 1 : 0;
    }
    for (int round = 0; round < 2; ++round) {
        std::size_t replies = 0;
        const Verdict verdict = responder.handle(datagram, [&](Bytes reply) {
            ++replies;
            if (!decoded) {
                fail("a reply to a datagram that does not decode");
            }
            check_reply(request, reply, node);
        });
        if (decoded != (verdict == Verdict::request || verdict == Verdict::ignored)) {
            fail("the verdict disagrees with decode()");
        }
        if (replies > addressed || (replies > 0 && verdict != Verdict::request)) {
            fail("more replies than objects addressed");
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const Bytes datagram(data, size);
    Frame frame;
    const Decoded result = decode(datagram, frame);
    const bool format2 = size >= kHeaderSize && data[0] == kEhd1 && data[1] == kFormat2;
    if ((result == Decoded::format2) != format2) {
        fail("format 2 recognised wrongly");
    }
    if (result == Decoded::ok) {
        if (size < kHeaderSize || data[0] != kEhd1 || data[1] != kFormat1) {
            fail("a frame decoded without its EHD1/EHD2");
        }
        check_round_trip(datagram, frame);
        for (const Property p : frame.properties) {
            if (p.epc == 0xD6 && !p.edt.empty()) {
                if (instance_list(frame.properties).size() > (p.edt.size() - 1) / 3) {
                    fail("instance_list names more instances than the bytes hold");
                }
                break;
            }
        }
        (void)instance_list(frame.get_part);
    }
    serve(datagram, result == Decoded::ok, frame);
    return 0;
}
