// Native Messaging framing: a 4-byte length in native byte order, then that many bytes.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace nativemsg {

// The length prefix is a uint32_t, never size_t: an 8-byte length is the classic bug.
inline constexpr std::size_t kHeaderBytes = sizeof(std::uint32_t);
// Browser -> host limit: Chromium refuses to send more.
inline constexpr std::size_t kMaxRequestBytes = 64 * 1024 * 1024;
// Host -> browser limit: Chromium drops the connection at one byte more.
inline constexpr std::size_t kMaxReplyBytes = 1024 * 1024;
// Readable bytes FrameReader keeps after the NUL that ends each body. RapidJSON's SIMD scanners
// load whole aligned 16-byte blocks, so they may look at up to 15 bytes past the NUL.
inline constexpr std::size_t kBodySlack = 16;

// Where frames come from: read(2) on stdin in the host, scripted chunks in the unit tests (so a
// test can split a frame at every byte deterministically).
class ByteSource {
  public:
    virtual ~ByteSource() = default;
    // Reads up to dest.size() bytes: the count, 0 at EOF, or -1 with errno set.
    virtual ssize_t read_some(std::span<char> dest) = 0;
};

class FdSource final : public ByteSource {
  public:
    explicit FdSource(int fd) : fd_(fd) {}
    ssize_t read_some(std::span<char> dest) override;

  private:
    int fd_;
};

enum class ReadStatus {
    frame, // one request body is available
    eof,   // EOF at a frame boundary: the clean end of a session
    error, // the stream is broken (EOF mid-frame, oversized length, read error)
};

struct ReadResult {
    ReadStatus status;
    // status == frame: the body. It is mutable (a parser may work in place) and followed by a
    // NUL byte and kBodySlack more readable bytes; all valid until the next call to next().
    std::span<char> body;
    // status == error: a human-readable reason.
    std::string error;
};

// Reads frames out of one reusable buffer filled by large reads, so a burst of small frames
// costs one system call and a frame split over many reads is reassembled in place. It reads
// only while the buffer lacks a whole frame, so it never blocks with a request in hand.
class FrameReader {
  public:
    explicit FrameReader(ByteSource &source);

    ReadResult next();

  private:
    enum class Fill { ok, eof, error };
    // Reads until `want` bytes from begin_ are buffered.
    Fill buffer(std::size_t want);
    // Makes room for `want` bytes from begin_ (moving or growing the buffer).
    void make_room(std::size_t want);
    static std::unique_ptr<char[]> allocate(std::size_t capacity);

    ByteSource &source_;
    std::unique_ptr<char[]> buf_;
    std::size_t capacity_;
    std::size_t begin_ = 0;    // first byte of the current frame
    std::size_t end_ = 0;      // one past the last byte read
    std::size_t consumed_ = 0; // size of the frame last handed out (dropped on the next call)
    // The byte the NUL terminator of the last body replaced (the start of the next frame when it
    // is already buffered); put back on the next call.
    std::size_t terminator_at_ = 0;
    char saved_byte_ = 0;
    int read_errno_ = 0;
};

// Writes one frame (header and body together with a single writev(2), so the reader never sees
// a header without its body and a reply costs one system call). Refuses bodies over
// kMaxReplyBytes with std::errc::message_size: a browser would drop the connection.
std::error_code write_frame(int fd, std::string_view body);

// Where replies go: write_frame() on stdout in the host, memory in the fuzz target (so the serve
// loop runs without a file descriptor).
class FrameSink {
  public:
    virtual ~FrameSink() = default;
    // Sends one reply body as a frame; an error ends the session.
    virtual std::error_code write(std::string_view body) = 0;
};

class FdSink final : public FrameSink {
  public:
    explicit FdSink(int fd) : fd_(fd) {}
    std::error_code write(std::string_view body) override {
        return write_frame(fd_, body);
    }

  private:
    int fd_;
};

} // namespace nativemsg
