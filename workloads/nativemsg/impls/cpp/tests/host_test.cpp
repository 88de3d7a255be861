#include "host.hpp"
#include "test_support.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <string>

namespace nativemsg {
namespace {

using testing::bytewise;
using testing::frame;
using testing::header;
using testing::ScriptedSource;

// Runs serve() over scripted input; stdout and stderr go to temporary files.
struct Session {
    explicit Session(std::deque<std::string> input) : source(std::move(input)) {
        out = make_temp();
        log = make_temp();
        status = serve(source, out, log);
    }
    ~Session() {
        ::close(out);
        ::close(log);
    }
    static int make_temp() {
        char name[] = "/tmp/nativemsg-cpp-test-XXXXXX";
        const int fd = ::mkstemp(name);
        EXPECT_GE(fd, 0);
        ::unlink(name);
        return fd;
    }
    static std::string contents(int fd) {
        std::string data;
        char buf[4096];
        ssize_t n = 0;
        ::lseek(fd, 0, SEEK_SET);
        while ((n = ::read(fd, buf, sizeof buf)) > 0) {
            data.append(buf, static_cast<std::size_t>(n));
        }
        return data;
    }
    std::string stdout_text() const {
        return contents(out);
    }
    std::string stderr_text() const {
        return contents(log);
    }

    ScriptedSource source;
    int out = -1;
    int log = -1;
    int status = -1;
};

const std::string kPing = R"({"op":"ping"})";
const std::string kPong = R"({"op":"pong"})";

TEST(Host, AnswersEveryFrameThenExitsZeroAtEof) {
    Session s({frame(kPing) + frame("{") + frame(kPing)});
    EXPECT_EQ(s.status, 0);
    const std::string out = s.stdout_text();
    EXPECT_EQ(out.substr(0, 17), frame(kPong));
    EXPECT_EQ(out.substr(out.size() - 17), frame(kPong));
    EXPECT_NE(out.find(R"({"error":)"), std::string::npos);
    EXPECT_EQ(s.stderr_text(), "");
}

TEST(Host, NoInputMeansNoOutputAndStatusZero) {
    Session s({});
    EXPECT_EQ(s.status, 0);
    EXPECT_EQ(s.stdout_text(), "");
}

TEST(Host, ByteByByteInputIsServedTheSame) {
    Session s(bytewise(frame(kPing) + frame(R"({"op":"echo","data":"é"})")));
    EXPECT_EQ(s.status, 0);
    EXPECT_EQ(s.stdout_text(), frame(kPong) + frame(R"({"op":"echo","data":"é"})"));
}

TEST(Host, EofMidFrameExitsOneWithAMessage) {
    for (const std::string &tail : {header(9).substr(0, 3), header(9) + "{\"op\""}) {
        Session s({frame(kPing) + tail});
        EXPECT_EQ(s.status, 1);
        EXPECT_EQ(s.stdout_text(), frame(kPong)); // the complete frame was still answered
        EXPECT_NE(s.stderr_text().find("nativemsg-cpp: EOF inside"), std::string::npos)
            << s.stderr_text();
    }
}

TEST(Host, OversizedLengthExitsOneAtOnce) {
    Session s({header(static_cast<std::uint32_t>(kMaxRequestBytes) + 1), "body never sent"});
    EXPECT_EQ(s.status, 1);
    EXPECT_EQ(s.stdout_text(), "");
    EXPECT_NE(s.stderr_text().find("exceeds the 64 MiB limit"), std::string::npos);
    EXPECT_EQ(s.source.chunks_left(), 1u);
}

TEST(Host, WriteErrorExitsOne) {
    std::signal(SIGPIPE, SIG_IGN); // as main() does
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    ScriptedSource source({frame(kPing)});
    const int log = Session::make_temp();
    EXPECT_EQ(serve(source, fds[1], log), 1);
    EXPECT_NE(Session::contents(log).find("Broken pipe"), std::string::npos);
    ::close(fds[1]);
    ::close(log);
}

} // namespace
} // namespace nativemsg
