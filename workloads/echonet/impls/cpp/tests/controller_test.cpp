// The controller (SPEC §8): requests encoded from the controller object, replies matched by
// TID, source address and ESV, everything else ignored, bounded retries of the same bytes.
// A scripted node on loopback answers; both sides use one ephemeral port, as they would 3610.
#include "controller.hpp"
#include "test_support.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <functional>
#include <thread>

namespace echonet {
namespace {

using test::bytes;
using namespace std::chrono_literals;

in_addr ip(const char *text) {
    in_addr a{};
    inet_pton(AF_INET, text, &a);
    return a;
}

std::optional<UdpSocket> open_on(const char *addr, std::uint16_t port) {
    SocketError error;
    std::optional<SocketWarning> warning;
    return UdpSocket::open({ip(addr), ip(addr), port, false}, error, warning);
}

std::uint16_t local_port(int fd) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len);
    return ntohs(sa.sin_port);
}

using Datagram = std::vector<std::uint8_t>;
using Replies = std::vector<Datagram>;
// What the scripted node does with the n-th request (from 0): the datagrams to send back.
using Script = std::function<Replies(std::size_t n, const Datagram &request)>;

// The Get_Res of the node profile's 0x80 to a request with this TID.
std::vector<std::uint8_t> get_res(const std::vector<std::uint8_t> &request) {
    auto r = bytes("10 81 00 00 0E F0 01 05 FF 01 72 01 80 01 30");
    r[2] = request[2];
    r[3] = request[3];
    return r;
}

std::vector<std::uint8_t> get_80() {
    std::vector<std::uint8_t> frame(64);
    const Property p{0x80, {}};
    frame.resize(build_request(frame, kNodeProfile, Esv::get, {&p, 1}));
    return frame;
}

// A controller on 127.0.0.2 and a scripted node on 127.0.0.1, on the same port.
class ControllerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        for (int i = 0; i < 20 && !node_; ++i) {
            auto ctl = open_on("127.0.0.2", 0);
            ASSERT_TRUE(ctl);
            port_ = local_port(ctl->fd());
            node_ = open_on("127.0.0.1", port_);
            if (node_)
                ctl_.emplace(std::move(*ctl), ControllerSettings{50ms, 2});
        }
        ASSERT_TRUE(node_) << "no port free on both addresses";
        node_->set_receive_timeout(2s);
    }
    void TearDown() override {
        if (thread_.joinable())
            thread_.join();
    }
    // Serves `requests` requests with `script`, in a thread; `sender` sends the replies.
    void serve(std::size_t requests, Script script, UdpSocket *sender = nullptr) {
        thread_ = std::thread([this, requests, script, sender] {
            std::vector<std::uint8_t> buf(kMaxDatagram);
            for (std::size_t n = 0; n < requests; ++n) {
                sockaddr_in from{};
                const ssize_t size = node_->receive(buf, from);
                if (size < 0)
                    return;
                seen_.emplace_back(buf.begin(), buf.begin() + size);
                for (const auto &reply : script(n, seen_.back()))
                    (sender ? sender : &*node_)->send_to(reply, from);
            }
        });
    }

    std::uint16_t port_ = 0;
    std::optional<UdpSocket> node_;
    std::optional<Controller> ctl_;
    std::thread thread_;
    Replies seen_;
    Datagram frame_ = get_80();
};

TEST(ControllerRules, RepliesMatchTheirRequests) {
    EXPECT_TRUE(answers(Esv::get, Esv::get_res));
    EXPECT_TRUE(answers(Esv::get, Esv::get_sna));
    EXPECT_TRUE(answers(Esv::setc, Esv::set_res));
    EXPECT_TRUE(answers(Esv::setc, Esv::setc_sna));
    EXPECT_TRUE(answers(Esv::seti, Esv::seti_sna));
    EXPECT_FALSE(answers(Esv::seti, Esv::set_res));
    EXPECT_TRUE(answers(Esv::setget, Esv::setget_res));
    EXPECT_TRUE(answers(Esv::setget, Esv::setget_sna));
    EXPECT_TRUE(answers(Esv::inf_req, Esv::inf));
    EXPECT_TRUE(answers(Esv::inf_req, Esv::inf_sna));
    EXPECT_TRUE(answers(Esv::infc, Esv::infc_res));
    EXPECT_FALSE(answers(Esv::get, Esv::set_res));
    EXPECT_FALSE(answers(Esv::get, Esv::get));
    EXPECT_FALSE(answers(Esv::get, Esv::inf));
}

TEST(ControllerRules, TidsCountFromOneAndSkipZero) {
    EXPECT_EQ(1, tid_after(0));
    EXPECT_EQ(2, tid_after(1));
    EXPECT_EQ(1, tid_after(0xFFFF));
}

TEST(ControllerRules, RequestsComeFromTheControllerObject) {
    std::uint8_t buf[64];
    const std::uint8_t on[] = {0x30};
    const Property sets[] = {{0x80, on}};
    const Property gets[] = {{0x80, {}}, {0xB3, {}}};
    ASSERT_EQ(20u, build_request(buf, kAirConditioner, Esv::setget, sets, gets));
    EXPECT_EQ(bytes("10 81 00 00 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B3 00"),
              std::vector<std::uint8_t>(buf, buf + 20));
    EXPECT_EQ(0u, build_request(std::span(buf, 13), kNodeProfile, Esv::get, gets));
}

TEST_F(ControllerTest, MatchesTheReplyAndNumbersTids) {
    serve(2, [](std::size_t, const Datagram &req) { return Replies{get_res(req)}; });
    auto frame = get_80();
    for (std::uint16_t tid = 1; tid <= 2; ++tid) {
        const auto reply = ctl_->exchange(ip("127.0.0.1"), frame);
        ASSERT_TRUE(reply);
        EXPECT_EQ(tid, reply->frame.tid);
        EXPECT_EQ(Esv::get_res, reply->frame.esv);
        EXPECT_EQ(1u, reply->attempts);
    }
    thread_.join();
    EXPECT_EQ(bytes("10 81 00 01 05 FF 01 0E F0 01 62 01 80 00"), seen_[0]);
    EXPECT_EQ(bytes("10 81 00 02 05 FF 01 0E F0 01 62 01 80 00"), seen_[1]);
    EXPECT_EQ(0u, ctl_->ignored());
}

TEST_F(ControllerTest, IgnoresEverythingElse) {
    serve(1, [](std::size_t, const Datagram &req) {
        auto other_tid = get_res(req);
        other_tid[3] ^= 0xFF;
        auto wrong_esv = get_res(req);
        wrong_esv[10] = 0x71; // Set_Res is no answer to a Get
        auto malformed = get_res(req);
        malformed.pop_back();
        auto format2 = get_res(req);
        format2[1] = 0x82;
        return Replies{other_tid, wrong_esv, malformed, format2, get_res(req), get_res(req)};
    });
    const auto reply = ctl_->exchange(ip("127.0.0.1"), frame_);
    ASSERT_TRUE(reply);
    EXPECT_EQ(1u, reply->attempts);
    EXPECT_EQ(4u, ctl_->ignored());
    // The duplicate arrives during the next exchange, which ignores it.
    thread_.join();
    EXPECT_FALSE(ctl_->exchange(ip("127.0.0.1"), frame_, 1));
    EXPECT_EQ(5u, ctl_->ignored());
}

TEST_F(ControllerTest, IgnoresRepliesFromAnotherAddress) {
    auto impostor = open_on("127.0.0.3", 0);
    ASSERT_TRUE(impostor);
    serve(
        1, [](std::size_t, const Datagram &req) { return Replies{get_res(req)}; }, &*impostor);
    EXPECT_FALSE(ctl_->exchange(ip("127.0.0.1"), frame_, 1));
    EXPECT_EQ(1u, ctl_->ignored());
}

TEST_F(ControllerTest, RetriesTheSameBytes) {
    serve(3, [](std::size_t n, const Datagram &req) {
        return n < 2 ? Replies{} : Replies{get_res(req)};
    });
    const auto reply = ctl_->exchange(ip("127.0.0.1"), frame_);
    ASSERT_TRUE(reply);
    EXPECT_EQ(3u, reply->attempts);
    EXPECT_EQ(2u, ctl_->resent());
    thread_.join();
    EXPECT_EQ(seen_[0], seen_[1]);
    EXPECT_EQ(seen_[0], seen_[2]);
}

TEST_F(ControllerTest, GivesUpAfterTheLastAttempt) {
    serve(3, [](std::size_t, const Datagram &) { return Replies{}; });
    const auto start = Clock::now();
    EXPECT_FALSE(ctl_->exchange(ip("127.0.0.1"), frame_));
    const auto took = Clock::now() - start;
    EXPECT_GE(took, 150ms); // 3 attempts of 50 ms
    EXPECT_LT(took, 1s);
    thread_.join();
    EXPECT_EQ(3u, seen_.size());
}

TEST_F(ControllerTest, LateRepliesShortenNothing) {
    // A stream of ignored datagrams within the timeout, then the answer: still matched.
    serve(1, [](std::size_t, const Datagram &req) {
        Replies out;
        for (int i = 0; i < 20; ++i) {
            auto r = get_res(req);
            r[2] ^= 0x80;
            out.push_back(r);
        }
        out.push_back(get_res(req));
        return out;
    });
    const auto reply = ctl_->exchange(ip("127.0.0.1"), frame_);
    ASSERT_TRUE(reply);
    EXPECT_EQ(20u, ctl_->ignored());
}

} // namespace
} // namespace echonet
