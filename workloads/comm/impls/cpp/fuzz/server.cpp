// Fuzz target `server` (workloads/comm/fuzz/README.md): the input is the bytes of one client. A
// Session (the server's per-connection handler: frame decoding, in-place echo, END/QUIT, EOF, the
// body cap, streaming and absorbing) runs over them in memory through a SessionIo of our own,
// driven the way a worker's event loop drives it, twice: once with every read and send taking all
// it can, once with reads and sends cut short, EAGAIN and EINTR at points chosen from the input.
// Small limits (512-byte reads, 1 MiB cap) make streaming, absorbing and refusing reachable.
//
// Both runs must send exactly what SPEC §2 says, worked out here from the input alone: every
// complete frame echoed as REPLY with its body, in order, up to the first END/QUIT (answered by
// one END), a length above the cap (one log line, no reply), or EOF; nothing sent after a FIN
// (shutdown). Only where the session may close early (EOF inside a streamed
// frame, a peer going on past linger_bytes after the end) must the output merely be a prefix.
#include "byte_buffer.hpp"
#include "frame.hpp"
#include "handler.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

namespace {

using comm::Interest;
using Bytes = std::vector<std::uint8_t>;

constexpr comm::SessionLimits kLimits{
    .max_body = 1u << 20, .buffer_size = 512, .kept_size = 256, .linger_bytes = 1024};

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "fuzz-comm-cpp-server: %s\n", what);
    std::abort();
}

// xorshift64, seeded from the input: the schedule of short reads and sends.
class Schedule {
  public:
    explicit Schedule(std::span<const std::uint8_t> input) {
        for (const std::uint8_t b : input) {
            state_ = (state_ ^ b) * 0x100000001B3ull; // FNV-1a
        }
    }
    std::uint64_t next() {
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        return state_;
    }

  private:
    std::uint64_t state_ = 0xCBF29CE484222325ull;
};

class MemoryIo final : public comm::SessionIo {
  public:
    MemoryIo(std::span<const std::uint8_t> input, bool adversarial)
        : input_(input), schedule_(input), adversarial_(adversarial) {}

    ssize_t receive(int /*fd*/, void *buf, std::size_t n) override {
        std::size_t take = std::min(n, input_.size() - at_);
        if (adversarial_ && take > 0) {
            const std::uint64_t r = schedule_.next();
            if (r % 8 == 0) {
                errno = r % 16 == 0 ? EAGAIN : EINTR;
                return -1;
            }
            take = std::min<std::size_t>(take, 1 + (r >> 8) % 600);
        }
        std::memcpy(buf, input_.data() + at_, take);
        at_ += take;
        return static_cast<ssize_t>(take);
    }

    ssize_t send(int /*fd*/, const void *buf, std::size_t n) override {
        if (fin) {
            fail("sent after shutdown(SHUT_WR)");
        }
        std::size_t take = n;
        if (adversarial_) {
            const std::uint64_t r = schedule_.next();
            if (r % 4 == 0 && !refused_last_) {
                refused_last_ = true; // the next send takes something: the loop progresses
                errno = r % 8 == 0 ? EAGAIN : EINTR;
                return -1;
            }
            take = std::min<std::size_t>(n, 1 + (r >> 8) % 700);
        }
        refused_last_ = false;
        const auto *bytes = static_cast<const std::uint8_t *>(buf);
        sent.insert(sent.end(), bytes, bytes + take);
        return static_cast<ssize_t>(take);
    }

    void shutdown_write(int /*fd*/) override {
        if (fin) {
            fail("shutdown(SHUT_WR) twice");
        }
        fin = true;
    }

    void log(const char * /*line*/) override {
        ++log_lines;
    }

    // A worker's choice, when the session waits for both, of which event comes first.
    bool writable_first() {
        return !adversarial_ || schedule_.next() % 2 == 0;
    }

    Bytes sent;
    bool fin = false;
    int log_lines = 0;

  private:
    std::span<const std::uint8_t> input_;
    std::size_t at_ = 0;
    Schedule schedule_;
    bool adversarial_;
    bool refused_last_ = false;
};

// What SPEC §2 says the server sends for this input.
struct Expected {
    Bytes replies;
    bool refused = false;  // one log line
    bool may_stop = false; // the session may close before sending everything
};

Expected expected(std::span<const std::uint8_t> input) {
    Expected e;
    std::size_t at = 0;
    for (;;) {
        const std::size_t left = input.size() - at;
        if (left < comm::kHeaderSize) {
            return e; // EOF between frames or inside a header: nothing more
        }
        const comm::Header h = comm::decode_header(input.data() + at);
        const std::size_t after = left - comm::kHeaderSize; // bytes after the header
        if (h.length > kLimits.max_body) {
            e.refused = true;
            e.may_stop = after > kLimits.linger_bytes;
            return e;
        }
        if (comm::ends_session(h.type)) {
            Bytes end(comm::kHeaderSize);
            comm::encode_header({comm::kEnd, 0}, end.data());
            e.replies.insert(e.replies.end(), end.begin(), end.end());
            e.may_stop = after > kLimits.linger_bytes;
            return e;
        }
        Bytes header(comm::kHeaderSize);
        comm::encode_header({comm::kReply, h.length}, header.data());
        const auto *body = input.data() + at + comm::kHeaderSize;
        if (h.length <= after) {
            e.replies.insert(e.replies.end(), header.begin(), header.end());
            e.replies.insert(e.replies.end(), body, body + h.length);
            at += comm::kHeaderSize + h.length;
            continue;
        }
        // EOF inside a body. A frame larger than the read buffer is streamed: its reply may be
        // partly out when the session closes.
        if (comm::kHeaderSize + h.length > kLimits.buffer_size) {
            e.replies.insert(e.replies.end(), header.begin(), header.end());
            e.replies.insert(e.replies.end(), body, body + after);
            e.may_stop = true;
        }
        return e;
    }
}

void run(std::span<const std::uint8_t> input, bool adversarial, const Expected &want) {
    MemoryIo io(input, adversarial);
    comm::ByteBuffer scratch(kLimits.buffer_size); // the worker's read buffer
    {
        comm::Session session(comm::Fd(), kLimits, io);
        Interest next = Interest::read;
        for (std::size_t steps = 0; next != Interest::close; ++steps) {
            if (steps > 100'000) {
                fail("the session never closes");
            }
            switch (next) {
            case Interest::read:
                next = session.on_readable(scratch);
                break;
            case Interest::write:
                next = session.on_writable();
                break;
            case Interest::read_write:
                next = io.writable_first() ? session.on_writable() : session.on_readable(scratch);
                break;
            case Interest::close:
                break;
            }
            // Memory follows what arrived (grown by doubling), never an announced length.
            if (session.held_capacity() > 2 * (input.size() + kLimits.buffer_size)) {
                fail("the session holds more memory than the input explains");
            }
        }
    }
    if (io.log_lines != (want.refused ? 1 : 0)) {
        fail("a refused length is not logged exactly once (or something else is logged)");
    }
    const bool complete = io.sent == want.replies;
    const bool prefix = io.sent.size() <= want.replies.size() &&
                        std::equal(io.sent.begin(), io.sent.end(), want.replies.begin());
    if (!(complete || (want.may_stop && prefix))) {
        std::fprintf(stderr, "sent %zu bytes, expected %zu%s\n", io.sent.size(),
                     want.replies.size(), want.may_stop ? " (or a prefix)" : "");
        fail("the replies differ from the requests' echo");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::span<const std::uint8_t> input(data, size);
    const Expected want = expected(input);
    run(input, false, want);
    run(input, true, want);
    return 0;
}
