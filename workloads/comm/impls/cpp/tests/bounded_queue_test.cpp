// The Connector's queues: order, batching, bounds, close and abort.
#include "bounded_queue.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace comm {
namespace {

using namespace comm::test;

Bytes contents(const ByteBuffer &b) {
    return {b.data(), b.data() + b.size()};
}

TEST(FrameQueue, TakeReturnsEverythingQueuedInOrder) {
    FrameQueue q(1 << 20);
    ASSERT_TRUE(q.push_frame(kDefault, body_of(3)));
    ASSERT_TRUE(q.push_frame(kText, {}));
    ByteBuffer batch;
    ASSERT_TRUE(q.take(batch));
    EXPECT_EQ(frame(kDefault, body_of(3)) + frame(kText), contents(batch));
}

TEST(FrameQueue, CloseDrainsThenEnds) {
    FrameQueue q(1 << 20);
    ASSERT_TRUE(q.push_frame(kDefault, body_of(1)));
    q.close();
    EXPECT_FALSE(q.push_frame(kDefault, body_of(1)));
    ByteBuffer batch;
    EXPECT_TRUE(q.take(batch));
    EXPECT_EQ(frame(kDefault, body_of(1)), contents(batch));
    EXPECT_FALSE(q.take(batch));
}

TEST(FrameQueue, AbortDropsWhatIsQueued) {
    FrameQueue q(1 << 20);
    ASSERT_TRUE(q.push_frame(kDefault, body_of(1)));
    q.abort();
    ByteBuffer batch;
    EXPECT_FALSE(q.take(batch));
    EXPECT_FALSE(q.push_frame(kDefault, body_of(1)));
}

TEST(FrameQueue, PushPrefixKeepsTheIncompleteRest) {
    const Bytes whole = frame(kReply, body_of(10)) + frame(kReply, body_of(20));
    const Bytes rest = Bytes{kReply, 0, 0};
    for (const bool queue_empty : {true, false}) {
        FrameQueue q(1 << 20);
        Bytes expected = whole;
        if (!queue_empty) {
            ASSERT_TRUE(q.push_frame(kDefault, body_of(4)));
            expected = frame(kDefault, body_of(4)) + whole;
        }
        ByteBuffer fill(64);
        const Bytes read = whole + rest;
        fill.append(read.data(), read.size());
        ASSERT_TRUE(q.push_prefix(fill, whole.size()));
        EXPECT_EQ(rest, contents(fill));
        EXPECT_GE(fill.capacity(), 64u); // still room to read into
        ByteBuffer batch;
        ASSERT_TRUE(q.take(batch));
        EXPECT_EQ(expected, contents(batch));
    }
}

TEST(FrameQueue, ProducerWaitsWhileTheQueueIsFull) {
    FrameQueue q(100);
    ASSERT_TRUE(q.push_frame(kDefault, body_of(200))); // admitted: the queue was below its limit
    std::atomic<bool> pushed{false};
    std::thread producer([&] { pushed = q.push_frame(kDefault, body_of(1)); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(pushed);
    ByteBuffer batch;
    ASSERT_TRUE(q.take(batch));
    producer.join();
    EXPECT_TRUE(pushed);
}

TEST(FrameQueue, ConsumerWaitsForAProducer) {
    FrameQueue q(1 << 20);
    std::thread producer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        q.push_frame(kText, body_of(5));
        q.close();
    });
    ByteBuffer batch;
    Bytes all;
    while (q.take(batch))
        all = all + contents(batch);
    producer.join();
    EXPECT_EQ(frame(kText, body_of(5)), all);
}

} // namespace
} // namespace comm
