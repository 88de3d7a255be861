#include "framing.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nativemsg {

namespace {

// A pipe holds 64 KiB by default on Linux: one read can drain it.
constexpr std::size_t kInitialCapacity = 64 * 1024;
// The largest frame plus the NUL placed after its body.
constexpr std::size_t kMaxCapacity = kHeaderBytes + kMaxRequestBytes + 1;

std::string describe_read_error(int err) {
    return "cannot read stdin: " + std::generic_category().message(err);
}

} // namespace

ssize_t FdSource::read_some(std::span<char> dest) {
    return ::read(fd_, dest.data(), dest.size());
}

// Every buffer has kBodySlack bytes beyond capacity_ that reads never fill. They are zeroed so
// a SIMD scanner that looks at them reads defined bytes.
std::unique_ptr<char[]> FrameReader::allocate(std::size_t capacity) {
    auto buffer = std::make_unique_for_overwrite<char[]>(capacity + kBodySlack);
    std::memset(&buffer[capacity], 0, kBodySlack);
    return buffer;
}

FrameReader::FrameReader(ByteSource &source)
    : source_(source), buf_(allocate(kInitialCapacity)), capacity_(kInitialCapacity) {}

ReadResult FrameReader::next() {
    // Undo what the last call did to the buffer: put back the byte under the terminator and
    // drop the frame the caller has answered.
    if (consumed_ != 0) {
        buf_[terminator_at_] = saved_byte_;
        begin_ += consumed_;
        consumed_ = 0;
    }
    if (begin_ == end_) {
        begin_ = end_ = 0; // nothing pending: start over at the front, no copy needed
    }

    switch (buffer(kHeaderBytes)) {
    case Fill::ok:
        break;
    case Fill::eof:
        if (end_ == begin_) {
            return {ReadStatus::eof, {}, {}};
        }
        return {ReadStatus::error,
                {},
                "EOF inside a length prefix (" + std::to_string(end_ - begin_) + " of " +
                    std::to_string(kHeaderBytes) + " bytes)"};
    case Fill::error:
        return {ReadStatus::error, {}, describe_read_error(read_errno_)};
    }

    // Native byte order, as the browser writes it; memcpy because the prefix may be unaligned.
    std::uint32_t length = 0;
    std::memcpy(&length, &buf_[begin_], sizeof length);
    // Checked before anything is allocated or read for the body.
    if (length > kMaxRequestBytes) {
        return {ReadStatus::error,
                {},
                "length prefix " + std::to_string(length) + " exceeds the 64 MiB limit (" +
                    std::to_string(kMaxRequestBytes) + " bytes)"};
    }

    const std::size_t frame_size = kHeaderBytes + length;
    switch (buffer(frame_size)) {
    case Fill::ok:
        break;
    case Fill::eof:
        return {ReadStatus::error,
                {},
                "EOF inside a message body (" + std::to_string(end_ - begin_ - kHeaderBytes) +
                    " of " + std::to_string(length) + " bytes)"};
    case Fill::error:
        return {ReadStatus::error, {}, describe_read_error(read_errno_)};
    }

    // NUL-terminate the body in place: RapidJSON's SIMD scanners work on terminated strings, and
    // this spares a copy of every request. buffer() reserved the byte.
    terminator_at_ = begin_ + frame_size;
    saved_byte_ = buf_[terminator_at_];
    buf_[terminator_at_] = '\0';
    consumed_ = frame_size;
    return {ReadStatus::frame, {&buf_[begin_ + kHeaderBytes], length}, {}};
}

FrameReader::Fill FrameReader::buffer(std::size_t want) {
    if (end_ - begin_ >= want) {
        return Fill::ok;
    }
    make_room(want + 1); // + 1 for the terminator next() puts after a body
    while (end_ - begin_ < want) {
        // Ask for all the free space, not just what this frame lacks: later frames that are
        // already in the pipe come along in the same system call.
        const ssize_t n = source_.read_some({&buf_[end_], capacity_ - end_});
        if (n > 0) {
            end_ += static_cast<std::size_t>(n);
        } else if (n == 0) {
            return Fill::eof;
        } else if (errno != EINTR) {
            read_errno_ = errno;
            return Fill::error;
        }
    }
    return Fill::ok;
}

void FrameReader::make_room(std::size_t want) {
    if (capacity_ - begin_ >= want) {
        return;
    }
    const std::size_t pending = end_ - begin_;
    if (capacity_ >= want) {
        // Enough space, but behind us: slide the partial frame to the front.
        std::memmove(buf_.get(), &buf_[begin_], pending);
    } else {
        // Doubling keeps a stream of growing frames from reallocating every time; the cap keeps
        // the largest legal frame from reserving twice its size. _for_overwrite: no zeroing.
        const std::size_t capacity = std::min(std::max(want, 2 * capacity_), kMaxCapacity);
        auto grown = allocate(capacity);
        std::memcpy(grown.get(), &buf_[begin_], pending);
        buf_ = std::move(grown);
        capacity_ = capacity;
    }
    begin_ = 0;
    end_ = pending;
}

std::error_code write_frame(int fd, std::string_view body) {
    if (body.size() > kMaxReplyBytes) {
        return std::make_error_code(std::errc::message_size);
    }
    const auto length = static_cast<std::uint32_t>(body.size());
    char header[kHeaderBytes];
    std::memcpy(header, &length, sizeof length);

    iovec parts[2] = {
        {header, sizeof header},
        {const_cast<char *>(body.data()), body.size()},
    };
    std::span<iovec> pending(parts);
    // A blocking pipe write completes in one call unless a signal interrupts it; the loop covers
    // that and any partial write without giving up the single-syscall common case.
    while (!pending.empty()) {
        const ssize_t n = ::writev(fd, pending.data(), static_cast<int>(pending.size()));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return {errno, std::generic_category()};
        }
        auto written = static_cast<std::size_t>(n);
        while (!pending.empty() && written >= pending.front().iov_len) {
            written -= pending.front().iov_len;
            pending = pending.subspan(1);
        }
        if (!pending.empty()) {
            pending.front().iov_base = static_cast<char *>(pending.front().iov_base) + written;
            pending.front().iov_len -= written;
        }
    }
    return {};
}

} // namespace nativemsg
