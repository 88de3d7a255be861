// The iteration loops (SPEC §4-§5): object and bytes in every combination, and a client
// against a server (the real one, a wrong one, one that quits) over two pipes.
#include "carsales.hpp"
#include "modes.hpp"
#include "stream.hpp"

#include "errors.hpp"

#include <kj/io.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <thread>

namespace capbench {
namespace {

Options options(CaseId id, Mode mode, bool reuse, bool packed, std::uint64_t iterations) {
    Options o;
    o.case_id = id;
    o.mode = mode;
    o.reuse = reuse;
    o.packed = packed;
    o.iterations = iterations;
    return o;
}

constexpr CaseId kCases[] = {CaseId::carsales, CaseId::catrank, CaseId::eval};

TEST(Modes, ObjectChecksEveryIteration) {
    for (const CaseId id : kCases)
        for (const bool reuse : {false, true}) {
            Progress progress;
            const Report r = run_client_side(options(id, Mode::object, reuse, false, 40),
                                             Clock::now(), progress);
            EXPECT_EQ(42u, r.checked);
            EXPECT_EQ(0u, r.request_bytes);
            EXPECT_EQ(0u, r.response_bytes);
            EXPECT_GE(r.elapsed_s, 0.0);
        }
}

TEST(Modes, BytesChecksEveryIterationAndCountsBytes) {
    for (const CaseId id : kCases)
        for (const bool reuse : {false, true})
            for (const bool packed : {false, true}) {
                Progress progress;
                const Report r = run_client_side(options(id, Mode::bytes, reuse, packed, 40),
                                                 Clock::now(), progress);
                EXPECT_EQ(42u, r.checked);
                EXPECT_GT(r.request_bytes, 40u * 8);
                EXPECT_GT(r.response_bytes, 40u);
            }
}

TEST(Modes, PackingMakesCarsalesSmaller) {
    Progress progress;
    const auto plain = run_client_side(options(CaseId::carsales, Mode::bytes, true, false, 20),
                                       Clock::now(), progress);
    const auto packed = run_client_side(options(CaseId::carsales, Mode::bytes, true, true, 20),
                                        Clock::now(), progress);
    EXPECT_LT(packed.request_bytes, plain.request_bytes);
}

// Two pipes: the client's requests to a server and its responses back.
struct Pipes {
    kj::AutoCloseFd request_read, request_write, response_read, response_write;
    Pipes() {
        int requests[2], responses[2];
        if (::pipe2(requests, O_CLOEXEC) != 0 || ::pipe2(responses, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe2");
        request_read = kj::AutoCloseFd(requests[0]);
        request_write = kj::AutoCloseFd(requests[1]);
        response_read = kj::AutoCloseFd(responses[0]);
        response_write = kj::AutoCloseFd(responses[1]);
    }
};

TEST(Modes, ClientAgainstServerOverPipes) {
    for (const CaseId id : kCases)
        for (const bool packed : {false, true}) {
            Pipes pipes;
            std::uint64_t served = 0;
            std::thread server([&] {
                Progress progress;
                served = run_server(options(id, Mode::server, false, packed, 40), progress,
                                    pipes.request_read, pipes.response_write);
                pipes.response_write = nullptr;
            });
            Progress progress;
            const Report r =
                run_client_side(options(id, Mode::client, true, packed, 40), Clock::now(), progress,
                                pipes.response_read, pipes.request_write);
            pipes.request_write = nullptr; // the server's input ends
            server.join();
            EXPECT_EQ(42u, r.checked);
            EXPECT_EQ(42u, served);
            EXPECT_GT(r.request_bytes, 0u);
            EXPECT_GT(r.response_bytes, 0u);
        }
}

TEST(Modes, ClientRejectsAWrongServer) {
    for (const bool packed : {false, true}) {
        Pipes pipes;
        // A server answering every carsales request with the right amount + 1.
        std::thread server([&] {
            MessageIn in(pipes.request_read, packed, nullptr);
            MessageOut out(pipes.response_write, packed);
            try {
                while (!in.at_end()) {
                    in.read([&](capnp::MessageReader &reader) {
                        capnp::MallocMessageBuilder response;
                        Carsales::serve(reader.getRoot<ParkingLot>(),
                                        response.initRoot<TotalValue>());
                        auto total = response.getRoot<TotalValue>();
                        total.setAmount(total.getAmount() + 1);
                        out.write(response);
                    });
                }
            } catch (const kj::Exception &) {
                // the client went away
            }
            pipes.response_write = nullptr;
        });
        Progress progress;
        EXPECT_THROW(run_client_side(options(CaseId::carsales, Mode::client, false, packed, 10),
                                     Clock::now(), progress, pipes.response_read,
                                     pipes.request_write),
                     WrongAnswer);
        EXPECT_EQ("iteration 1 of 10", progress.describe());
        pipes.request_write = nullptr;
        server.join();
    }
}

TEST(Modes, ClientFailsWhenTheServerQuits) {
    Pipes pipes;
    pipes.response_write = nullptr; // no server at all: the responses end at once
    Progress progress;
    EXPECT_THROW(run_client_side(options(CaseId::eval, Mode::client, false, false, 10),
                                 Clock::now(), progress, pipes.response_read, pipes.request_write),
                 std::runtime_error);
}

TEST(Modes, ClientFailsOnAResponseCutShort) {
    Pipes pipes;
    std::thread server([&] {
        MessageIn in(pipes.request_read, false, nullptr);
        in.read([](capnp::MessageReader &) {});
        const std::uint8_t half[] = {0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
        kj::FdOutputStream(pipes.response_write.get()).write(half, sizeof half);
        pipes.response_write = nullptr;
    });
    Progress progress;
    EXPECT_THROW(run_client_side(options(CaseId::eval, Mode::client, false, false, 10),
                                 Clock::now(), progress, pipes.response_read, pipes.request_write),
                 kj::Exception);
    server.join();
}

} // namespace
} // namespace capbench
