#include "handler.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <new>
#include <utility>

namespace comm {

namespace {

bool would_block(int error) noexcept {
    return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

} // namespace

ssize_t SessionIo::receive(int fd, void *buf, std::size_t n) {
    return ::recv(fd, buf, n, 0);
}

ssize_t SessionIo::send(int fd, const void *buf, std::size_t n) {
    return ::send(fd, buf, n, MSG_NOSIGNAL);
}

void SessionIo::shutdown_write(int fd) {
    ::shutdown(fd, SHUT_WR);
}

void SessionIo::log(const char *line) {
    std::fputs(line, stderr);
}

SessionIo &SessionIo::system() noexcept {
    static SessionIo io;
    return io;
}

Session::Session(Fd socket, SessionLimits limits, SessionIo &io) noexcept
    : socket_(std::move(socket)), limits_(limits), io_(&io) {}

Interest Session::on_readable(ByteBuffer &scratch) {
    if (broken_ || phase_ == Phase::input_over)
        return interest();
    if (phase_ == Phase::discarding)
        return discard(scratch);
    return blocked_ ? absorb() : read_into(scratch);
}

// The usual case: what the session kept (at most an incomplete frame) goes to the front of the
// lent buffer, one read fills the rest, the replies go out, and whatever is left is kept.
Interest Session::read_into(ByteBuffer &scratch) {
    scratch.clear();
    scratch.reserve(limits_.buffer_size);
    scratch.append(own_.data(), own_.size()); // smaller than the buffer: larger ones stream
    own_.clear();
    const ssize_t got = io_->receive(fd(), scratch.tail(), scratch.room());
    if (got < 0 && !would_block(errno))
        return Interest::close; // reset by the peer: nobody is left to answer
    if (got == 0) {
        if (pass_left_ > 0)
            return Interest::close; // a streamed reply is cut short: nothing more can be said
        // Everything complete is answered, then the socket closes; an incomplete frame gets
        // no reply.
        stop_reading(scratch, Phase::input_over);
    } else if (got > 0) {
        scratch.commit(static_cast<std::size_t>(got));
        parse(scratch);
    }
    flush(scratch);
    keep_leftovers(scratch);
    return interest();
}

// Replies are stuck in the socket and the peer is inside a frame: take the rest of that frame
// into the session's own buffer (so a peer that writes a whole message before reading can
// finish writing it), and nothing after it.
Interest Session::absorb() {
    const std::uint64_t wanted = left_in_frame();
    if (wanted == 0)
        return interest();
    if (own_.room() == 0) {
        // First move the unsent replies to the front, then grow (geometrically, never past
        // the end of the frame; the frame is within the cap).
        own_.erase_front(out_begin_);
        out_end_ -= out_begin_;
        out_begin_ = 0;
        if (own_.room() == 0) {
            const std::size_t step = std::max(own_.capacity(), limits_.buffer_size);
            own_.reserve(own_.size() +
                         static_cast<std::size_t>(std::min<std::uint64_t>(wanted, step)));
        }
    }
    const auto ask = static_cast<std::size_t>(std::min<std::uint64_t>(own_.room(), wanted));
    const ssize_t got = io_->receive(fd(), own_.tail(), ask);
    if (got < 0)
        return would_block(errno) ? interest() : Interest::close;
    if (got == 0) {
        if (pass_left_ > 0)
            return Interest::close;
        stop_reading(own_, Phase::input_over); // the replies before the frame still go out
        return interest();
    }
    own_.commit(static_cast<std::size_t>(got));
    parse(own_);
    return interest();
}

// After END, QUIT or a refused length: input is read into the lent buffer and dropped.
Interest Session::discard(ByteBuffer &scratch) {
    scratch.clear();
    scratch.reserve(limits_.buffer_size);
    const ssize_t got = io_->receive(fd(), scratch.data(), scratch.capacity());
    if (got < 0)
        return would_block(errno) ? interest() : Interest::close;
    if (got == 0) {
        phase_ = Phase::input_over; // the peer is done too: close once the replies are out
        return interest();
    }
    discarded_ += static_cast<std::uint64_t>(got);
    if (discarded_ > limits_.linger_bytes)
        return Interest::close; // a peer that will not stop: a clean close is not owed
    return interest();
}

// Input ends here: what follows out_end_ is dropped, and no more frames are read.
void Session::stop_reading(ByteBuffer &buf, Phase next) noexcept {
    buf.truncate(out_end_);
    pass_left_ = 0;
    phase_ = next;
}

Interest Session::on_writable() {
    flush(own_);
    if (!blocked_ && !broken_) {
        // All sent: keep only the incomplete frame, if any.
        own_.erase_front(out_end_);
        out_begin_ = out_end_ = 0;
        trim();
    }
    return interest();
}

void Session::parse(ByteBuffer &buf) noexcept {
    std::uint8_t *const bytes = buf.data();
    const std::size_t end = buf.size();
    while (phase_ == Phase::open) {
        if (pass_left_ > 0) {
            const auto n =
                static_cast<std::size_t>(std::min<std::uint64_t>(pass_left_, end - out_end_));
            out_end_ += n;
            pass_left_ -= n;
            if (pass_left_ > 0)
                return;
        }
        const std::size_t avail = end - out_end_;
        if (avail < kHeaderSize)
            return;
        std::uint8_t *const head = bytes + out_end_;
        const Header h = decode_header(head);
        if (h.length > limits_.max_body) {
            refuse(buf, h.length);
            return;
        }
        if (ends_session(h.type)) {
            encode_header({kEnd, 0}, head); // the END reply takes the place of the request
            out_end_ += kHeaderSize;
            stop_reading(buf, Phase::discarding); // whatever follows it is not answered
            return;
        }
        // Lengths are compared, never summed with offsets: a huge length cannot wrap.
        const std::uint64_t have = avail - kHeaderSize;
        if (h.length <= have) {
            head[0] = kReply;
            out_end_ += kHeaderSize + static_cast<std::size_t>(h.length);
            continue;
        }
        if (h.length <= limits_.buffer_size - kHeaderSize)
            return;       // incomplete but small: echoed whole once it has all arrived
        head[0] = kReply; // larger than the read buffer: stream it through
        out_end_ = end;
        pass_left_ = h.length - have;
        return;
    }
}

void Session::refuse(ByteBuffer &buf, std::uint64_t length) noexcept {
    char line[160];
    std::snprintf(line, sizeof line,
                  "comm-cpp-server: a body of %llu bytes is above --max-body %llu: closing the "
                  "connection\n",
                  static_cast<unsigned long long>(length),
                  static_cast<unsigned long long>(limits_.max_body));
    io_->log(line);
    stop_reading(buf, Phase::discarding); // the replies before it still go out
}

void Session::flush(ByteBuffer &buf) noexcept {
    while (out_begin_ < out_end_) {
        const ssize_t put = io_->send(fd(), buf.data() + out_begin_, out_end_ - out_begin_);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                blocked_ = true;
            else
                broken_ = true;
            return;
        }
        out_begin_ += static_cast<std::size_t>(put);
        if (out_begin_ < out_end_) {
            blocked_ = true; // the socket is full: another try now would only say EAGAIN
            return;
        }
    }
    blocked_ = false;
    if (phase_ == Phase::discarding && !half_closed_) {
        io_->shutdown_write(fd()); // FIN after the last reply; input is still drained
        half_closed_ = true;
    }
}

// Moves what the lent buffer still holds (unsent replies, an incomplete frame) into own_.
void Session::keep_leftovers(const ByteBuffer &scratch) {
    if (broken_)
        return;
    own_.append(scratch.data() + out_begin_, scratch.size() - out_begin_);
    out_end_ -= out_begin_;
    out_begin_ = 0;
    trim();
}

// A buffer grown past kept_size (for a blocked socket or a large frame) is given back as soon
// as what it holds fits in kept_size again.
void Session::trim() noexcept {
    if (own_.capacity() <= limits_.kept_size || own_.size() > limits_.kept_size)
        return;
    try {
        if (own_.empty())
            own_ = ByteBuffer();
        else
            own_.shrink_to(limits_.kept_size);
    } catch (const std::bad_alloc &) {
        // keeping the larger buffer is fine
    }
}

std::uint64_t Session::left_in_frame() const noexcept {
    if (phase_ != Phase::open)
        return 0;
    if (pass_left_ > 0)
        return pass_left_;
    const std::size_t partial = own_.size() - out_end_;
    if (partial == 0)
        return 0;
    if (partial < kHeaderSize)
        return kHeaderSize - partial;
    // Not streamed, so the whole frame is no larger than buffer_size.
    return kHeaderSize + decode_header(own_.data() + out_end_).length - partial;
}

Interest Session::interest() const noexcept {
    if (broken_)
        return Interest::close;
    const bool pending = out_begin_ < out_end_;
    switch (phase_) {
    case Phase::open:
        if (!pending)
            return Interest::read;
        return left_in_frame() > 0 ? Interest::read_write : Interest::write;
    case Phase::discarding:
        return pending ? Interest::read_write : Interest::read; // until the peer's EOF
    case Phase::input_over:
        break;
    }
    return pending ? Interest::write : Interest::close;
}

} // namespace comm
