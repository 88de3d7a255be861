// The Connector's send and receive queues: a bounded queue of whole encoded frames between
// one producer thread and one consumer thread.
//
// The queue holds bytes, not message objects: a frame is appended where the previous one
// ends, and the consumer takes everything queued at once by trading buffers with it. So a
// posted message costs one copy into the queue and no allocation once the buffers have grown,
// and the send thread writes a whole batch of frames with one system call.
#pragma once

#include "byte_buffer.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>

namespace comm {

class FrameQueue {
  public:
    // Producers wait while `limit` bytes or more are queued (one frame may exceed it).
    explicit FrameQueue(std::size_t limit) noexcept : limit_(limit) {}

    // Appends one frame. false once the queue is closed or aborted.
    bool push_frame(std::uint8_t type, std::span<const std::uint8_t> body);
    // Moves the first n bytes of `from` (whole frames) into the queue and drops them from
    // `from`. When the queue is empty the two buffers trade places and only the bytes after
    // the n are copied. false once the queue is closed or aborted.
    bool push_prefix(ByteBuffer &from, std::size_t n);
    // Waits for queued bytes and trades them for `into`'s buffer (whose content is dropped).
    // false when the queue is closed and drained, or aborted.
    bool take(ByteBuffer &into);

    // No more frames; take() drains what is queued, then returns false.
    void close();
    // Both sides stop at once; queued frames are dropped.
    void abort();

  private:
    bool wait_for_room(std::unique_lock<std::mutex> &lock);
    void queued(bool was_empty);

    std::size_t limit_;
    std::mutex mutex_;
    std::condition_variable not_empty_, not_full_;
    ByteBuffer queued_;
    bool closed_ = false;
    bool aborted_ = false;
};

} // namespace comm
