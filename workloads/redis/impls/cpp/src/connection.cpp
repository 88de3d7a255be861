// One client's turn: read what the socket has, run every complete request, reply with one
// write(2); and the slow path when the socket is full.
#include "connection.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace redis {

void Server::on_readable(Client &c) {
    if (c.closing) {
        return; // no more requests from a client that is being closed
    }
    // Replies go to the loop-wide buffer unless earlier replies are still waiting: then they
    // queue behind them in the client's own buffer.
    ByteBuffer &staged = c.out.empty() ? shared_out_ : c.out;
    Reply reply(staged, c.session.protocol);
    if (c.in.empty()) {
        const ssize_t n = ::read(c.fd.get(), read_buf_.get(), kReadChunk);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                close_client(c);
            }
            return;
        }
        const std::string_view data(read_buf_.get(), static_cast<std::size_t>(n));
        const std::size_t used = process(c, data, reply);
        if (used < data.size() && !c.closing) {
            c.in.append(data.substr(used)); // a partial request waits in the client's buffer
        }
    } else {
        // Read more of a partial request; a large pending argument is read in larger chunks.
        std::size_t want = kReadChunk;
        const std::size_t needed = c.parser.bytes_needed();
        if (needed > c.in.size() + want) {
            want = std::min(needed - c.in.size(), kMaxReadChunk);
        }
        char *dst = c.in.reserve(want);
        const ssize_t n = ::read(c.fd.get(), dst, want);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                close_client(c);
            }
            return;
        }
        c.in.commit(static_cast<std::size_t>(n));
        const std::size_t used = process(c, c.in.view(), reply);
        c.in.consume(used);
        if (c.in.empty() && c.in.capacity() > kKeepInputCapacity) {
            c.in.release();
        }
    }
    flush(c, staged);
}

std::size_t Server::process(Client &c, std::string_view data, Reply &reply) {
    Context ctx{store_, c.session, reply, stats_, rng_, now_ms_, scratch_};
    std::size_t pos = 0;
    while (pos < data.size()) {
        const auto status = c.parser.parse(data.substr(pos));
        if (status == RequestParser::Status::incomplete) {
            break;
        }
        if (status == RequestParser::Status::error) {
            reply.error(c.parser.error());
            c.closing = true;
            c.parser.reset();
            return data.size();
        }
        const auto args = c.parser.args();
        if (!args.empty()) {
            try {
                execute(ctx, args);
            } catch (const std::bad_alloc &) {
                reply.error("ERR out of memory");
                c.closing = true;
            }
        }
        pos += c.parser.consumed();
        c.parser.reset();
        if (c.session.close_after_reply) {
            c.closing = true;
        }
        if (reply.full()) {
            // Over the output limit while running the batch (redis checks on every reply it
            // adds): the client is dropped with its replies, as redis does.
            c.overflow = true;
            return data.size();
        }
        if (c.closing) {
            break;
        }
    }
    // The scratch string held a large value (APPEND, SETRANGE): give the memory back.
    if (scratch_.capacity() > kKeepOutputCapacity) {
        std::string().swap(scratch_);
    }
    return c.closing ? data.size() : pos;
}

void Server::flush(Client &c, ByteBuffer &staged) {
    if (c.overflow) {
        staged.clear();
        if (staged.capacity() > kKeepOutputCapacity) {
            staged.release();
        }
        close_client(c);
        return;
    }
    if (&staged == &shared_out_) {
        if (!shared_out_.empty()) {
            const ssize_t n = ::write(c.fd.get(), shared_out_.data(), shared_out_.size());
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                shared_out_.clear();
                close_client(c);
                return;
            }
            const std::size_t sent = n > 0 ? static_cast<std::size_t>(n) : 0;
            if (sent < shared_out_.size()) {
                c.out.append(shared_out_.data() + sent, shared_out_.size() - sent);
            }
            shared_out_.clear();
            if (shared_out_.capacity() > kKeepOutputCapacity) {
                shared_out_.release();
            }
        }
    } else if (!c.want_write && !c.out.empty()) {
        on_writable(c);
        return;
    }
    if (c.out.size() > kMaxOutputBytes) {
        close_client(c); // a client that does not read its replies is dropped
        return;
    }
    if (!c.out.empty()) {
        set_want_write(c, true);
    } else if (c.closing) {
        close_client(c);
    }
}

void Server::on_writable(Client &c) {
    while (!c.out.empty()) {
        const ssize_t n = ::write(c.fd.get(), c.out.data(), c.out.size());
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            close_client(c);
            return;
        }
        c.out.consume(static_cast<std::size_t>(n));
    }
    if (c.out.size() > kMaxOutputBytes) {
        close_client(c);
        return;
    }
    if (c.out.empty()) {
        c.out.release();
        set_want_write(c, false);
        if (c.closing) {
            close_client(c);
        }
    } else {
        set_want_write(c, true);
    }
}

void Server::set_want_write(Client &c, bool on) {
    if (c.want_write == on) {
        return;
    }
    epoll_event ev{};
    ev.events = on ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
    ev.data.fd = c.fd.get();
    epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
    c.want_write = on;
}

void Server::close_client(Client &c) {
    const auto fd = static_cast<std::size_t>(c.fd.get());
    --stats_.connected_clients;
    clients_[fd].reset(); // closing the descriptor also removes it from the epoll set
}

} // namespace redis
