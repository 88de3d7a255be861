#include "framing.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <thread>
#include <vector>

namespace nativemsg {
namespace {

using testing::bytewise;
using testing::frame;
using testing::header;
using testing::ScriptedSource;

std::string body_of(const ReadResult &r) {
    return {r.body.data(), r.body.size()};
}

// Reads every frame until EOF or an error; returns the bodies and the final result.
std::vector<std::string> read_all(FrameReader &reader, ReadResult &last) {
    std::vector<std::string> bodies;
    for (;;) {
        last = reader.next();
        if (last.status != ReadStatus::frame) {
            return bodies;
        }
        bodies.push_back(body_of(last));
    }
}

TEST(FrameReader, ReadsOneFrame) {
    ScriptedSource source({frame(R"({"op":"ping"})")});
    FrameReader reader(source);
    const ReadResult r = reader.next();
    ASSERT_EQ(r.status, ReadStatus::frame);
    EXPECT_EQ(body_of(r), R"({"op":"ping"})");
    EXPECT_EQ(reader.next().status, ReadStatus::eof);
}

TEST(FrameReader, LengthIsFourBytesLittleEndian) {
    // Two frames back to back: an 8-byte length would swallow the second frame's header, a
    // big-endian reader would see 0x05000000 and wait for 80 MiB.
    ScriptedSource source({frame("hello") + frame("w")});
    FrameReader reader(source);
    ReadResult last;
    EXPECT_EQ(read_all(reader, last), (std::vector<std::string>{"hello", "w"}));
    EXPECT_EQ(last.status, ReadStatus::eof);
}

TEST(FrameReader, LengthCountsBytesNotCharacters) {
    const std::string text = "\"é€😀\""; // 5 characters, 11 bytes
    ScriptedSource source({frame(text) + frame("next")});
    FrameReader reader(source);
    ReadResult last;
    EXPECT_EQ(read_all(reader, last), (std::vector<std::string>{text, "next"}));
}

TEST(FrameReader, EmptyBody) {
    ScriptedSource source({frame("") + frame("x")});
    FrameReader reader(source);
    ReadResult last;
    EXPECT_EQ(read_all(reader, last), (std::vector<std::string>{"", "x"}));
    EXPECT_EQ(last.status, ReadStatus::eof);
}

TEST(FrameReader, BodyIsNulTerminatedWithoutHarmingTheNextFrame) {
    ScriptedSource source({frame("abc") + frame("defg")});
    FrameReader reader(source);
    ReadResult r = reader.next();
    ASSERT_EQ(r.status, ReadStatus::frame);
    EXPECT_EQ(r.body.data()[r.body.size()], '\0');
    r = reader.next(); // its header's first byte sat under the terminator
    ASSERT_EQ(r.status, ReadStatus::frame);
    EXPECT_EQ(body_of(r), "defg");
    EXPECT_EQ(r.body.data()[r.body.size()], '\0');
}

TEST(FrameReader, EveryByteInItsOwnRead) {
    const std::vector<std::string> bodies = {R"({"op":"ping"})", "", "é€😀",
                                             std::string(70000, 'y')};
    std::string stream;
    for (const auto &b : bodies) {
        stream += frame(b);
    }
    ScriptedSource source(bytewise(stream));
    FrameReader reader(source);
    ReadResult last;
    EXPECT_EQ(read_all(reader, last), bodies);
    EXPECT_EQ(last.status, ReadStatus::eof);
}

TEST(FrameReader, EverySplitPointOfTwoFrames) {
    const std::string stream = frame(R"({"op":"echo","data":[1,2]})") + frame("xyz");
    for (std::size_t cut = 1; cut < stream.size(); ++cut) { // (an empty chunk would be EOF)
        ScriptedSource source({stream.substr(0, cut), stream.substr(cut)});
        FrameReader reader(source);
        ReadResult last;
        EXPECT_EQ(read_all(reader, last),
                  (std::vector<std::string>{R"({"op":"echo","data":[1,2]})", "xyz"}))
            << "cut at " << cut;
        EXPECT_EQ(last.status, ReadStatus::eof) << "cut at " << cut;
    }
}

TEST(FrameReader, ManyFramesInOneReadCostOneRead) {
    std::string stream;
    for (int i = 0; i < 100; ++i) {
        stream += frame("frame " + std::to_string(i));
    }
    ScriptedSource source({stream});
    FrameReader reader(source);
    ReadResult last;
    const auto bodies = read_all(reader, last);
    ASSERT_EQ(bodies.size(), 100u);
    EXPECT_EQ(bodies[42], "frame 42");
    EXPECT_EQ(source.reads, 2); // the data, then EOF
}

TEST(FrameReader, FramesLargerThanTheInitialBuffer) {
    const std::string big(300 * 1024, 'b');
    const std::string bigger(1024 * 1024 + 7, 'c');
    std::string stream = frame("small") + frame(big) + frame("mid") + frame(bigger);
    std::deque<std::string> chunks;
    for (std::size_t i = 0; i < stream.size(); i += 4093) { // odd chunks straddle everything
        chunks.push_back(stream.substr(i, 4093));
    }
    ScriptedSource source(std::move(chunks));
    FrameReader reader(source);
    ReadResult last;
    EXPECT_EQ(read_all(reader, last), (std::vector<std::string>{"small", big, "mid", bigger}));
    EXPECT_EQ(last.status, ReadStatus::eof);
}

TEST(FrameReader, EofBeforeAnyFrameIsClean) {
    ScriptedSource source({});
    FrameReader reader(source);
    EXPECT_EQ(reader.next().status, ReadStatus::eof);
}

TEST(FrameReader, EofInsideLengthPrefixIsAnError) {
    for (std::size_t n = 1; n < kHeaderBytes; ++n) {
        ScriptedSource source({frame("ok") + header(5).substr(0, n)});
        FrameReader reader(source);
        ASSERT_EQ(reader.next().status, ReadStatus::frame);
        const ReadResult r = reader.next();
        EXPECT_EQ(r.status, ReadStatus::error) << n << " header bytes";
        EXPECT_NE(r.error.find("length prefix"), std::string::npos) << r.error;
    }
}

TEST(FrameReader, EofInsideBodyIsAnError) {
    ScriptedSource source({header(10) + "12345"});
    FrameReader reader(source);
    const ReadResult r = reader.next();
    EXPECT_EQ(r.status, ReadStatus::error);
    EXPECT_NE(r.error.find("5 of 10"), std::string::npos) << r.error;
}

TEST(FrameReader, LengthAboveCapFailsAtOnce) {
    // Only the header is available and the source would then block (here: more chunks that
    // must stay unread). The reader must give up without reading or allocating for the body.
    for (std::uint32_t length : {std::uint32_t{kMaxRequestBytes + 1}, std::uint32_t{0x80000000},
                                 std::uint32_t{0xFFFFFFFF}}) {
        ScriptedSource source({header(length), "never read"});
        FrameReader reader(source);
        const ReadResult r = reader.next();
        EXPECT_EQ(r.status, ReadStatus::error) << length;
        EXPECT_NE(r.error.find("64 MiB"), std::string::npos) << r.error;
        EXPECT_EQ(source.chunks_left(), 1u) << "read past an oversized length prefix";
    }
}

TEST(FrameReader, LengthAtCapIsRead) {
    std::string body(kMaxRequestBytes, 'z');
    ScriptedSource source({header(static_cast<std::uint32_t>(kMaxRequestBytes)), body});
    FrameReader reader(source);
    const ReadResult r = reader.next();
    ASSERT_EQ(r.status, ReadStatus::frame);
    EXPECT_EQ(r.body.size(), kMaxRequestBytes);
    EXPECT_EQ(r.body.back(), 'z');
    EXPECT_EQ(reader.next().status, ReadStatus::eof);
}

TEST(FrameReader, InterruptedReadIsRetried) {
    ScriptedSource source({header(2), std::string(ScriptedSource::kInterrupt), "ok"});
    FrameReader reader(source);
    const ReadResult r = reader.next();
    ASSERT_EQ(r.status, ReadStatus::frame);
    EXPECT_EQ(body_of(r), "ok");
}

TEST(FrameReader, ReadErrorIsReported) {
    ScriptedSource source({header(2), std::string(ScriptedSource::kFailure)});
    FrameReader reader(source);
    const ReadResult r = reader.next();
    EXPECT_EQ(r.status, ReadStatus::error);
    EXPECT_NE(r.error.find("Input/output error"), std::string::npos) << r.error;
}

// Reads everything from `fd` until EOF (on a thread, so writes larger than a pipe can complete).
class PipeDrain {
  public:
    explicit PipeDrain(int fd)
        : thread_([this, fd] {
              char buf[65536];
              ssize_t n = 0;
              while ((n = ::read(fd, buf, sizeof buf)) > 0) {
                  data_.append(buf, static_cast<std::size_t>(n));
              }
          }) {}
    std::string finish() {
        thread_.join();
        return data_;
    }

  private:
    std::string data_;
    std::thread thread_;
};

struct Pipe {
    Pipe() {
        int fds[2];
        EXPECT_EQ(::pipe(fds), 0);
        read_end = fds[0];
        write_end = fds[1];
    }
    ~Pipe() {
        close_write();
        ::close(read_end);
    }
    void close_write() {
        if (write_end >= 0) {
            ::close(write_end);
            write_end = -1;
        }
    }
    int read_end;
    int write_end;
};

TEST(WriteFrame, WritesFourByteLittleEndianLengthThenBody) {
    Pipe pipe;
    PipeDrain drain(pipe.read_end);
    const std::string body = R"({"op":"echo","data":"é€😀"})";
    EXPECT_FALSE(write_frame(pipe.write_end, body));
    EXPECT_FALSE(write_frame(pipe.write_end, ""));
    pipe.close_write();
    EXPECT_EQ(drain.finish(), frame(body) + frame(""));
}

TEST(WriteFrame, ExactlyOneMebibyteIsAllowed) {
    Pipe pipe;
    PipeDrain drain(pipe.read_end);
    const std::string body(kMaxReplyBytes, 'x');
    EXPECT_FALSE(write_frame(pipe.write_end, body));
    pipe.close_write();
    const std::string written = drain.finish();
    ASSERT_EQ(written.size(), kHeaderBytes + kMaxReplyBytes);
    EXPECT_EQ(written.substr(0, 4), std::string("\x00\x00\x10\x00", 4));
}

TEST(WriteFrame, OverOneMebibyteIsRefusedAndNothingIsWritten) {
    Pipe pipe;
    PipeDrain drain(pipe.read_end);
    const std::string body(kMaxReplyBytes + 1, 'x');
    EXPECT_EQ(write_frame(pipe.write_end, body), std::errc::message_size);
    pipe.close_write();
    EXPECT_EQ(drain.finish(), "");
}

TEST(WriteFrame, ClosedReaderIsAnError) {
    std::signal(SIGPIPE, SIG_IGN); // as main() does
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    EXPECT_EQ(write_frame(fds[1], "{}"), std::errc::broken_pipe);
    ::close(fds[1]);
}

} // namespace
} // namespace nativemsg
