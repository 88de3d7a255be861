// The session rules of SPEC §2, through a real (AF_UNIX) socket pair.
#include "handler.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace comm {
namespace {

using namespace comm::test;

struct Harness {
    explicit Harness(SessionLimits limits = {})
        : scratch(limits.buffer_size), session(wire.take_server(), limits) {}
    Interest run(Interest want = Interest::read) {
        return test::run(session, scratch, want);
    }
    bool step(Interest &want) {
        return test::step(session, want, scratch);
    }
    Wire wire;
    ByteBuffer scratch; // the worker's read buffer
    Session session;
};

// Small buffers, so that a few KiB exercise streaming and absorbing.
SessionLimits small() {
    SessionLimits limits;
    limits.buffer_size = 4096;
    limits.kept_size = 4096;
    return limits;
}

TEST(Session, BetweenFramesASessionHoldsNoBuffer) {
    Harness h;
    EXPECT_EQ(0u, h.session.held_capacity());
    h.wire.send(frame(kDefault, body_of(5000)) + frame(kText, body_of(3)));
    h.run();
    EXPECT_EQ(frame(kReply, body_of(5000)) + frame(kReply, body_of(3)), h.wire.receive());
    EXPECT_EQ(0u, h.session.held_capacity());
}

TEST(Session, KeepsOnlyTheIncompleteFrameBetweenReads) {
    Harness h;
    const Bytes second = frame(kDefault, body_of(300));
    h.wire.send(frame(kDefault, body_of(10)) + Bytes(second.begin(), second.begin() + 100));
    Interest want = h.run();
    EXPECT_EQ(frame(kReply, body_of(10)), h.wire.receive());
    EXPECT_GE(h.session.held_capacity(), 100u);
    EXPECT_LT(h.session.held_capacity(), 1024u);
    h.wire.send(Bytes(second.begin() + 100, second.end()));
    h.run(want);
    EXPECT_EQ(frame(kReply, body_of(300)), h.wire.receive());
}

TEST(Session, EchoesEveryFrameAsReplyInOrder) {
    Harness h;
    const Bytes a = body_of(100, 1), b = body_of(0), c = body_of(4097, 3);
    h.wire.send(frame(kDefault, a) + frame(kText, b) + frame(3, c));
    EXPECT_EQ(Interest::read, h.run());
    EXPECT_EQ(frame(kReply, a) + frame(kReply, b) + frame(kReply, c), h.wire.receive());
}

TEST(Session, EveryTypeButEndAndQuitIsEchoedAsReply) {
    for (int t = 0; t < 256; ++t) {
        const auto type = static_cast<std::uint8_t>(t);
        if (ends_session(type))
            continue;
        Harness h;
        h.wire.send(frame(type, body_of(7, type)));
        h.run();
        EXPECT_EQ(frame(kReply, body_of(7, type)), h.wire.receive()) << t;
    }
}

TEST(Session, FramesSplitAtEveryOffsetGiveTheSameReplies) {
    const Bytes stream = frame(kDefault, body_of(5)) + frame(kText) + frame(kBinary, body_of(40));
    const Bytes expected = frame(kReply, body_of(5)) + frame(kReply) + frame(kReply, body_of(40));
    for (std::size_t cut = 1; cut < stream.size(); ++cut) {
        Harness h;
        h.wire.send(Bytes(stream.begin(), stream.begin() + static_cast<long>(cut)));
        Interest want = h.run();
        h.wire.send(Bytes(stream.begin() + static_cast<long>(cut), stream.end()));
        h.run(want);
        EXPECT_EQ(expected, h.wire.receive()) << "cut at " << cut;
    }
}

TEST(Session, EndAndQuitDrainThenEndThenClose) {
    for (const std::uint8_t closer : {kEnd, kQuit}) {
        Harness h;
        h.wire.send(frame(kDefault, body_of(2000)) + frame(closer) + frame(kDefault, body_of(3)));
        // Half-closed after the END reply; the frame after END is not answered.
        EXPECT_EQ(Interest::read, h.run());
        EXPECT_EQ(frame(kReply, body_of(2000)) + frame(kEnd), h.wire.receive());
        EXPECT_TRUE(h.wire.eof);
        // The socket closes once the peer closes its side.
        h.wire.shut_write();
        EXPECT_EQ(Interest::close, h.run());
    }
}

TEST(Session, EndWithABodyStillGetsAHeaderOnlyEnd) {
    Harness h;
    h.wire.send(frame(kEnd, body_of(10)));
    h.run();
    EXPECT_EQ(frame(kEnd), h.wire.receive());
    EXPECT_TRUE(h.wire.eof);
}

TEST(Session, InputAfterEndIsDiscardedNotLeftUnread) {
    // Unread input at close would reset the connection and destroy replies in flight.
    SessionLimits limits = small();
    limits.linger_bytes = 100000;
    Harness h(limits);
    h.wire.send(frame(kDefault, body_of(10)) + frame(kEnd) + body_of(50000));
    EXPECT_EQ(Interest::read, h.run());
    EXPECT_EQ(frame(kReply, body_of(10)) + frame(kEnd), h.wire.receive());
    EXPECT_EQ(0u, h.session.held_capacity()); // thrown away, not kept
    // A peer that will not stop sending is cut off after linger_bytes.
    h.wire.send(body_of(60000));
    EXPECT_EQ(Interest::close, h.run());
}

TEST(Session, EofAfterACompleteFrameDrainsThenCloses) {
    Harness h;
    h.wire.send(frame(kText, body_of(3000)) + frame(kText, body_of(1)));
    h.wire.shut_write();
    EXPECT_EQ(Interest::close, h.run());
    EXPECT_EQ(frame(kReply, body_of(3000)) + frame(kReply, body_of(1)), h.wire.receive());
}

TEST(Session, EofInsideAFrameClosesWithNothingMore) {
    const Bytes whole = frame(kDefault, body_of(5));
    const Bytes partial = frame(kDefault, body_of(6));
    for (const std::size_t tail : {1u, 4u, 12u}) {
        Harness h;
        h.wire.send(whole + Bytes(partial.begin(), partial.begin() + static_cast<long>(tail)));
        h.wire.shut_write();
        EXPECT_EQ(Interest::close, h.run());
        EXPECT_EQ(frame(kReply, body_of(5)), h.wire.receive()) << tail;
    }
}

TEST(Session, LengthAboveTheCapClosesWithoutAllocating) {
    SessionLimits limits = small();
    limits.max_body = 1000;
    for (const std::uint64_t length : {1001ull, 1ull << 40, ~0ull}) {
        Harness h(limits);
        h.wire.send(frame(kDefault, body_of(1000)) + header(kDefault, length) + body_of(500));
        h.run();
        EXPECT_EQ(frame(kReply, body_of(1000)), h.wire.receive());
        EXPECT_TRUE(h.wire.eof);
        EXPECT_EQ(0u, h.session.held_capacity()); // nothing kept, nothing allocated
        h.wire.shut_write();
        EXPECT_EQ(Interest::close, h.run());
    }
}

TEST(Session, FrameLargerThanTheBufferIsStreamedThrough) {
    const SessionLimits limits = small();
    Harness h(limits);
    const Bytes body = body_of(1 << 20, 9);
    std::thread sender([&] { h.wire.send(frame(kBinary, body) + frame(kEnd)); });
    // A client that reads while it sends: the session never needs more than its buffer.
    Bytes got;
    Interest want = Interest::read;
    std::size_t most = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!h.wire.eof && std::chrono::steady_clock::now() < deadline) {
        h.step(want);
        most = std::max(most, h.session.held_capacity());
        const Bytes part = h.wire.receive();
        got.insert(got.end(), part.begin(), part.end());
    }
    sender.join();
    EXPECT_EQ(frame(kReply, body) + frame(kEnd), got);
    EXPECT_LT(most, kHeaderSize * 4); // a partial header at most
}

TEST(Session, PeerThatWritesAWholeMessageBeforeReadingCannotDeadlock) {
    const SessionLimits limits = small();
    Harness h(limits);
    const Bytes body = body_of(4 << 20, 5);
    std::atomic<bool> sent{false};
    std::thread sender([&] {
        h.wire.send(frame(kDefault, body_of(100)) + frame(kBinary, body) + frame(kEnd));
        sent = true;
    });
    // Nobody reads the replies until the whole request is written: the session must take the
    // rest of the frame it is in even though its replies are stuck.
    Interest want = Interest::read;
    std::size_t most = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!sent && std::chrono::steady_clock::now() < deadline) {
        if (!h.step(want))
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        most = std::max(most, h.session.held_capacity());
    }
    sender.join();
    ASSERT_TRUE(sent);
    EXPECT_GT(most, limits.buffer_size); // it did hold the rest of the frame
    EXPECT_LE(most, 2 * (body.size() + kHeaderSize));
    Bytes got;
    while (!h.wire.eof && std::chrono::steady_clock::now() < deadline) {
        h.step(want);
        const Bytes part = h.wire.receive();
        got.insert(got.end(), part.begin(), part.end());
    }
    EXPECT_EQ(frame(kReply, body_of(100)) + frame(kReply, body) + frame(kEnd), got);
}

TEST(Session, GrownBufferShrinksBackOnceRepliesAreSent) {
    const SessionLimits limits = small();
    Harness h(limits);
    const Bytes big = body_of(2 << 20, 1);
    std::atomic<bool> sent{false};
    std::thread sender([&] {
        h.wire.send(frame(kDefault, big));
        sent = true;
    });
    Interest want = Interest::read;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!sent && std::chrono::steady_clock::now() < deadline) {
        if (!h.step(want))
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    sender.join();
    Bytes got;
    const Bytes expected = frame(kReply, big);
    while (got.size() < expected.size() && std::chrono::steady_clock::now() < deadline) {
        h.step(want);
        const Bytes part = h.wire.receive();
        got.insert(got.end(), part.begin(), part.end());
    }
    EXPECT_EQ(expected, got);
    EXPECT_EQ(Interest::read, want);
    EXPECT_EQ(0u, h.session.held_capacity());
    // And the session goes on as before.
    h.wire.send(frame(kText, body_of(10)));
    h.run(want);
    EXPECT_EQ(frame(kReply, body_of(10)), h.wire.receive());
}

} // namespace
} // namespace comm
