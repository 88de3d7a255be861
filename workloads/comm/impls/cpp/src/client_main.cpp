// comm-cpp-client: the seed's Test4 (stream) and test3 (rtt) on top of the Connector.
//
//   comm-cpp-client --port PORT [--host 127.0.0.1] [--clients N] [--messages M] [--size BYTES]
//                   [--type T] [--mode stream|rtt] [--end end|quit|eof] [--warmup W]
//
// stream: per client, a poster thread posts M messages without waiting, then ends the session;
// a checker thread takes the M replies and checks each (type, length, every byte), then
// expects the server's END or EOF. rtt: per client one thread posts a message and waits for
// its reply before the next (W unmeasured ones first). All connections are open before the
// clock starts; throughput counts the content bytes of all messages from the first post to
// the last reply. One JSON object on stdout; on any error {"error": ...} and exit status 1.
#include "connector.hpp"
#include "options.hpp"
#include "pattern.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
    std::uint64_t clients = 1;
    std::uint64_t messages = 1000;
    std::uint64_t size = 4096;
    std::uint8_t type = comm::kDefault;
    std::uint64_t warmup = 0;
    bool rtt = false;
    comm::SessionEnd end = comm::SessionEnd::end;
};

Options parse_args(int argc, char **argv) {
    Options o;
    bool have_port = false;
    comm::OptionReader options(argc, argv);
    while (auto name = options.next()) {
        const std::string_view v = options.value();
        if (*name == "--port") {
            o.port = static_cast<std::uint16_t>(options.number(1, 65535));
            have_port = true;
        } else if (*name == "--host") {
            if (v != "localhost") // the Connector's one name; anything else an IPv4 literal
                options.ipv4();
            o.host = std::string(v);
        } else if (*name == "--clients") {
            o.clients = options.number(1, 100000);
        } else if (*name == "--messages") {
            o.messages = options.number(0, 1ull << 40);
        } else if (*name == "--size") {
            o.size = options.number(0, 1ull << 30);
        } else if (*name == "--warmup") {
            o.warmup = options.number(0, 1ull << 40);
        } else if (*name == "--type") {
            o.type = static_cast<std::uint8_t>(options.number(0, 255));
            if (comm::ends_session(o.type))
                throw comm::UsageError("--type cannot be END or QUIT");
        } else if (*name == "--mode") {
            if (v != "stream" && v != "rtt")
                throw comm::UsageError("--mode is stream or rtt");
            o.rtt = v == "rtt";
        } else if (*name == "--end") {
            if (v == "end")
                o.end = comm::SessionEnd::end;
            else if (v == "quit")
                o.end = comm::SessionEnd::quit;
            else if (v == "eof")
                o.end = comm::SessionEnd::eof;
            else
                throw comm::UsageError("--end is end, quit or eof");
        } else {
            options.unknown();
        }
    }
    if (!have_port)
        throw comm::UsageError("--port is required");
    return o;
}

// {"error": "..."} with the few escapes an error message can need.
void print_error(const std::string &text) {
    std::string out = "{\"error\": \"";
    for (const char ch : text) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (static_cast<unsigned char>(ch) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", ch);
            out += escaped;
        } else {
            out += ch;
        }
    }
    out += "\"}";
    std::puts(out.c_str());
}

// The first error of any client, reported once.
class FirstError {
  public:
    void record(std::uint64_t client, const std::string &what) {
        std::lock_guard lock(mutex_);
        if (text_.empty())
            text_ = "client " + std::to_string(client) + ": " + what;
    }
    std::string text() const {
        std::lock_guard lock(mutex_);
        return text_;
    }

  private:
    mutable std::mutex mutex_;
    std::string text_;
};

struct Client {
    std::uint64_t id = 0;
    std::unique_ptr<comm::Connector> connector;
    Clock::time_point first_post{}, last_reply{};
    std::vector<std::uint64_t> latencies_ns; // rtt
    std::thread poster, checker;
};

class Run {
  public:
    explicit Run(const Options &options)
        : o_(options), pattern_(static_cast<std::size_t>(options.size)) {}

    // Connects every client (false with the error recorded if one cannot).
    bool connect() {
        comm::ConnectorOptions copts;
        copts.max_body = std::max<std::uint64_t>(o_.size, comm::kDefaultMaxBody);
        clients_.resize(static_cast<std::size_t>(o_.clients));
        for (std::uint64_t c = 0; c < o_.clients; ++c) {
            Client &cl = clients_[static_cast<std::size_t>(c)];
            cl.id = c;
            if (o_.rtt)
                cl.latencies_ns.reserve(static_cast<std::size_t>(o_.messages));
            try {
                cl.connector = std::make_unique<comm::Connector>(o_.host, o_.port, copts);
            } catch (const comm::ConnectError &e) {
                errors_.record(c, e.what());
                return false;
            }
        }
        return true;
    }

    // Runs the load on every connection and waits for it to finish.
    void load() {
        const std::size_t threads = clients_.size() * (o_.rtt ? 1 : 2);
        std::latch start(static_cast<std::ptrdiff_t>(threads));
        try {
            for (Client &cl : clients_) {
                if (o_.rtt) {
                    cl.poster = std::thread([&] { round_trips(cl, start); });
                } else {
                    cl.poster = std::thread([&] { post_all(cl, start); });
                    cl.checker = std::thread([&] { check_all(cl, start); });
                }
            }
        } catch (const std::system_error &e) {
            // Threads already started wait at the start line: end the process under them.
            print_error(std::string("cannot start the client threads: ") + e.what());
            std::fflush(stdout);
            std::_Exit(1);
        }
        for (Client &cl : clients_) {
            cl.poster.join();
            if (cl.checker.joinable())
                cl.checker.join();
            first_ = std::min(first_, cl.first_post);
            last_ = std::max(last_, cl.last_reply);
            latencies_ns_.insert(latencies_ns_.end(), cl.latencies_ns.begin(),
                                 cl.latencies_ns.end());
        }
        clients_.clear(); // joins the connectors' threads
    }

    std::string error() const {
        return errors_.text();
    }
    void print_result();

  private:
    void post_all(Client &cl, std::latch &start) {
        start.arrive_and_wait();
        cl.first_post = Clock::now();
        for (std::uint64_t m = 0; m < o_.messages; ++m)
            if (!cl.connector->post(o_.type, pattern_.body(cl.id, m)))
                return; // the checker reports why
        cl.connector->close(o_.end);
    }

    void check_all(Client &cl, std::latch &start) {
        start.arrive_and_wait();
        for (std::uint64_t m = 0; m < o_.messages; ++m)
            if (!check_reply(cl, m))
                return;
        cl.last_reply = Clock::now();
        expect_end(cl);
    }

    void round_trips(Client &cl, std::latch &start) {
        start.arrive_and_wait();
        for (std::uint64_t m = 0; m < o_.warmup + o_.messages; ++m) {
            const auto t0 = Clock::now();
            if (m == o_.warmup)
                cl.first_post = t0;
            if (!cl.connector->post(o_.type, pattern_.body(cl.id, m))) {
                fail(cl, "cannot send: " + cl.connector->error());
                return;
            }
            if (!check_reply(cl, m))
                return;
            if (m >= o_.warmup)
                cl.latencies_ns.push_back(static_cast<std::uint64_t>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0)
                        .count()));
        }
        cl.last_reply = Clock::now();
        cl.connector->close(o_.end);
        expect_end(cl);
    }

    // Takes the reply to message m and checks type, length and every byte.
    bool check_reply(Client &cl, std::uint64_t m) {
        const auto reply = cl.connector->get();
        if (!reply) {
            const std::string why = cl.connector->error();
            fail(cl, !why.empty() ? why
                                  : "the session ended after " + std::to_string(m) + " of " +
                                        std::to_string(o_.messages + o_.warmup) + " replies");
            return false;
        }
        const auto expected = pattern_.body(cl.id, m);
        std::string why;
        if (reply->type != comm::kReply)
            why = "reply " + std::to_string(m) + " has type " + std::to_string(reply->type);
        else if (reply->body.size() != expected.size())
            why = "reply " + std::to_string(m) + " has " + std::to_string(reply->body.size()) +
                  " bytes, not " + std::to_string(expected.size());
        else if (!expected.empty() &&
                 std::memcmp(reply->body.data(), expected.data(), expected.size()) != 0)
            why = "reply " + std::to_string(m) + " has the wrong body";
        if (why.empty())
            return true;
        fail(cl, why);
        return false;
    }

    // After the last reply: the server's END or EOF, nothing else.
    void expect_end(Client &cl) {
        if (const auto extra = cl.connector->get())
            fail(cl, "a message of type " + std::to_string(extra->type) + " after the last reply");
        else if (const std::string why = cl.connector->error(); !why.empty())
            fail(cl, why);
    }

    void fail(Client &cl, const std::string &why) {
        errors_.record(cl.id, why);
        cl.connector->abort(); // unblocks this client's other thread
    }

    const Options &o_;
    comm::PatternTable pattern_;
    std::vector<Client> clients_;
    FirstError errors_;
    Clock::time_point first_ = Clock::time_point::max(), last_{};
    std::vector<std::uint64_t> latencies_ns_;
};

// Nearest-rank percentile of sorted samples, in microseconds.
double percentile_us(const std::vector<std::uint64_t> &sorted, double p) {
    auto rank = static_cast<std::size_t>(p * static_cast<double>(sorted.size()) + 0.999999999);
    rank = std::clamp<std::size_t>(rank, 1, sorted.size());
    return static_cast<double>(sorted[rank - 1]) / 1000.0;
}

void Run::print_result() {
    const std::uint64_t count = o_.clients * o_.messages;
    const std::uint64_t bytes = count * o_.size;
    const double elapsed =
        last_ > first_ ? std::chrono::duration<double>(last_ - first_).count() : 1e-9;
    std::printf(
        "{\"clients\":%llu,\"messages\":%llu,\"size\":%llu,\"bytes\":%llu,"
        "\"elapsed_s\":%.6f,\"mb_per_s\":%.3f,\"msgs_per_s\":%.1f",
        static_cast<unsigned long long>(o_.clients), static_cast<unsigned long long>(o_.messages),
        static_cast<unsigned long long>(o_.size), static_cast<unsigned long long>(bytes), elapsed,
        static_cast<double>(bytes) / 1e6 / elapsed, static_cast<double>(count) / elapsed);
    if (o_.rtt && !latencies_ns_.empty()) {
        std::sort(latencies_ns_.begin(), latencies_ns_.end());
        std::printf(",\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,"
                    "\"p999\":%.1f,\"max\":%.1f}",
                    percentile_us(latencies_ns_, 0.50), percentile_us(latencies_ns_, 0.90),
                    percentile_us(latencies_ns_, 0.99), percentile_us(latencies_ns_, 0.999),
                    static_cast<double>(latencies_ns_.back()) / 1000.0);
    }
    std::puts("}");
}

} // namespace

int main(int argc, char **argv) {
    Options options;
    try {
        options = parse_args(argc, argv);
    } catch (const comm::UsageError &e) {
        std::fprintf(stderr,
                     "comm-cpp-client: %s (usage: comm-cpp-client --port PORT [--host 127.0.0.1] "
                     "[--clients N] [--messages M] [--size BYTES] [--type T] [--mode stream|rtt] "
                     "[--end end|quit|eof] [--warmup W])\n",
                     e.what());
        return 2;
    }
    try {
        Run run(options);
        if (!run.connect()) {
            print_error(run.error());
            return 1;
        }
        run.load();
        if (const std::string e = run.error(); !e.empty()) {
            print_error(e);
            return 1;
        }
        run.print_result();
    } catch (const std::exception &e) {
        print_error(e.what());
        return 1;
    }
    return 0;
}
