#include "bounded_queue.hpp"

#include "frame.hpp"

namespace comm {

bool FrameQueue::wait_for_room(std::unique_lock<std::mutex> &lock) {
    not_full_.wait(lock, [&] { return closed_ || aborted_ || queued_.size() < limit_; });
    return !closed_ && !aborted_;
}

void FrameQueue::queued(bool was_empty) {
    // Only a transition from empty can find the consumer waiting.
    if (was_empty)
        not_empty_.notify_one();
}

bool FrameQueue::push_frame(std::uint8_t type, std::span<const std::uint8_t> body) {
    std::uint8_t header[kHeaderSize];
    encode_header({type, body.size()}, header);
    std::unique_lock lock(mutex_);
    if (!wait_for_room(lock))
        return false;
    const bool was_empty = queued_.empty();
    queued_.append(header, kHeaderSize);
    queued_.append(body.data(), body.size());
    lock.unlock();
    queued(was_empty);
    return true;
}

bool FrameQueue::push_prefix(ByteBuffer &from, std::size_t n) {
    if (n == 0)
        return true;
    std::unique_lock lock(mutex_);
    if (!wait_for_room(lock))
        return false;
    const bool was_empty = queued_.empty();
    if (was_empty) {
        // Trade buffers: the queue takes `from` whole, `from` gets the queue's spare buffer
        // back with the bytes after the prefix (an incomplete frame, usually small).
        queued_.swap(from);
        from.clear();
        from.reserve(queued_.capacity());
        from.append(queued_.data() + n, queued_.size() - n);
        queued_.truncate(n);
    } else {
        queued_.append(from.data(), n);
        from.erase_front(n);
    }
    lock.unlock();
    queued(was_empty);
    return true;
}

bool FrameQueue::take(ByteBuffer &into) {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return aborted_ || closed_ || !queued_.empty(); });
    if (aborted_ || queued_.empty())
        return false;
    const bool was_full = queued_.size() >= limit_;
    into.clear();
    into.swap(queued_);
    lock.unlock();
    if (was_full)
        not_full_.notify_all();
    return true;
}

void FrameQueue::close() {
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    not_empty_.notify_all();
    not_full_.notify_all();
}

void FrameQueue::abort() {
    {
        std::lock_guard lock(mutex_);
        aborted_ = true;
        queued_.clear();
    }
    not_empty_.notify_all();
    not_full_.notify_all();
}

} // namespace comm
