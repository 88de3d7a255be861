// The per-connection handler: echoes every message as REPLY and applies the session rules of
// SPEC §2 (END and QUIT, EOF between and inside frames, the body-length cap). It owns the
// socket but no thread: a worker's event loop calls it when the socket is readable or
// writable and waits for what it returns.
//
// The echo is done in place. A reply differs from its request only in the type byte, so a
// complete frame becomes its reply by overwriting that byte, and every reply of a read sits in
// one contiguous run of the buffer that goes back with one send(2): header and body together,
// batched with the other replies, no body copied in user space.
//
// Memory. Input is read into the worker's read buffer, lent to the session for the call; the
// session keeps only what is left when the call ends, in a buffer of its own: an incomplete
// frame, and, if the socket could not take every reply, the replies not yet sent. So an idle
// or between-frames connection holds next to nothing, whatever the read size. A frame larger
// than the read buffer is streamed: its reply header goes out at once and its body is passed
// through as it arrives. While replies wait for room in the socket, reading stops at the next
// frame boundary; inside a frame it goes on to the end of that frame, into the session's own
// buffer (bounded by the cap), so a client that writes a whole message before reading any
// reply cannot deadlock with the server. A buffer grown that way is given back once its
// replies are sent.
//
// Closing. After END, QUIT or a refused length the peer may still be sending; closing a socket
// with unread input makes the kernel reset the connection and throw away replies it has not
// transmitted yet. So the session reads and discards input from then on, half-closes once the
// last reply is handed to the kernel, and closes when the peer does (or after linger_bytes of
// discarded input).
#pragma once

#include "byte_buffer.hpp"
#include "fd.hpp"
#include "frame.hpp"

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace comm {

struct SessionLimits {
    std::uint64_t max_body = kDefaultMaxBody;
    // The read size; a frame up to this size (header included) is echoed whole, a larger one
    // is streamed.
    std::size_t buffer_size = 256 * 1024;
    // What a session may keep between events without giving it back.
    std::size_t kept_size = 64 * 1024;
    // Input discarded after END, QUIT or a refused length before the session gives up on a
    // clean close.
    std::uint64_t linger_bytes = 64ull << 20;
};

// What a session does outside itself: its socket calls and its log line. The server's sessions
// use the default, SessionIo::system(): recv(2), send(2) and shutdown(2) on the session's socket,
// the log on stderr. The fuzz target runs a session over memory with its own.
class SessionIo {
  public:
    virtual ~SessionIo() = default;
    // As recv(2) / send(2) without flags (send never raises SIGPIPE): a count, or -1 and errno.
    virtual ssize_t receive(int fd, void *buf, std::size_t n);
    virtual ssize_t send(int fd, const void *buf, std::size_t n);
    virtual void shutdown_write(int fd);
    virtual void log(const char *line);

    static SessionIo &system() noexcept;
};

// What the event loop should wait for next.
enum class Interest : std::uint8_t {
    read,       // input; nothing is waiting to be sent
    write,      // replies are waiting for room in the socket; read nothing meanwhile
    read_write, // replies are waiting, and the peer is inside a frame: take both
    close,      // the session is over: drop it (which closes the socket)
};

class Session {
  public:
    Session(Fd socket, SessionLimits limits, SessionIo &io = SessionIo::system()) noexcept;

    int fd() const noexcept {
        return socket_.get();
    }
    // `scratch` is the worker's read buffer, lent for this call (its content is not kept);
    // it needs a capacity of at least limits.buffer_size.
    Interest on_readable(ByteBuffer &scratch);
    Interest on_writable();

    // The memory the session holds between events (for tests).
    std::size_t held_capacity() const noexcept {
        return own_.capacity();
    }

  private:
    enum class Phase : std::uint8_t {
        open,       // frames are read and answered
        discarding, // END, QUIT or a refused length: replies finish, input is thrown away
        input_over, // the peer closed its side: replies finish, then the socket closes
    };

    Interest read_into(ByteBuffer &scratch);
    Interest absorb();
    Interest discard(ByteBuffer &scratch);
    void stop_reading(ByteBuffer &buf, Phase next) noexcept;
    void parse(ByteBuffer &buf) noexcept;
    void refuse(ByteBuffer &buf, std::uint64_t length) noexcept;
    void flush(ByteBuffer &buf) noexcept;
    void keep_leftovers(const ByteBuffer &scratch);
    void trim() noexcept;
    std::uint64_t left_in_frame() const noexcept;
    Interest interest() const noexcept;

    Fd socket_;
    SessionLimits limits_;
    SessionIo *io_;
    // The bytes being worked on are in the lent read buffer during on_readable, and in own_
    // between events. In either, [out_begin_, out_end_) are replies not yet sent and
    // [out_end_, size) is input not yet parsed (an incomplete frame).
    ByteBuffer own_;
    std::size_t out_begin_ = 0;
    std::size_t out_end_ = 0;
    std::uint64_t pass_left_ = 0; // body bytes of a streamed frame still to pass through
    std::uint64_t discarded_ = 0; // input thrown away while discarding
    Phase phase_ = Phase::open;
    bool blocked_ = false;     // the socket took less than offered: wait for EPOLLOUT
    bool half_closed_ = false; // our FIN is queued after the last reply
    bool broken_ = false;      // the peer is gone: close now
};

} // namespace comm
