#include "modes.hpp"

#include "carsales.hpp"
#include "catrank.hpp"
#include "eval.hpp"
#include "rng.hpp"
#include "stream.hpp"

#include <capnp/message.h>
#include <kj/io.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace capbench {

std::string Progress::describe() const {
    if (number == 0)
        return stage;
    std::string where = std::string(stage) + " " + std::to_string(number);
    if (total != 0)
        where += " of " + std::to_string(total);
    return where;
}

namespace {

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

double seconds(const timeval &t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
}

// User + system CPU of this process (one thread).
double cpu_seconds() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// One message's memory: with reuse, scratch space allocated once (the builders' first segment,
// the readers' words); without, nothing, and each message allocates as libcapnp does by
// default.
class Space {
  public:
    explicit Space(bool reuse) {
        if (reuse)
            scratch_.emplace();
    }
    kj::ArrayPtr<capnp::word> words() noexcept {
        return scratch_ ? scratch_->words() : nullptr;
    }
    // A fresh builder in `slot`: over the scratch space, or libcapnp's default (a 1024-word
    // first segment, growing heuristically).
    capnp::MallocMessageBuilder &builder(std::optional<capnp::MallocMessageBuilder> &slot) {
        return scratch_ ? slot.emplace(scratch_->words()) : slot.emplace();
    }

  private:
    std::optional<Scratch> scratch_;
};

struct Totals {
    std::uint64_t request = 0, response = 0;
};

// The warm-up and the timed iterations around `iterate(number)`; `totals()` gives the bytes
// moved so far, read before and after the timed part.
template <typename Iterate, typename Count>
Report run_iterations(const Options &o, Clock::time_point started, Progress &progress,
                      Iterate &&iterate, Count &&totals) {
    Report report;
    progress.stage = "iteration";
    progress.total = o.warmup() + o.iterations;
    const Clock::time_point warmup_start = Clock::now();
    report.setup_s = seconds(warmup_start - started);
    std::uint64_t number = 0;
    while (number < o.warmup()) {
        progress.number = ++number;
        iterate(number);
    }

    const Totals before = totals();
    const Clock::time_point timed_start = Clock::now();
    const double cpu_start = cpu_seconds();
    while (number < progress.total) {
        progress.number = ++number;
        iterate(number);
    }
    report.cpu_s = cpu_seconds() - cpu_start;
    const Clock::time_point timed_end = Clock::now();
    const Totals after = totals();

    report.warmup_s = seconds(timed_start - warmup_start);
    report.elapsed_s = seconds(timed_end - timed_start);
    report.request_bytes = after.request - before.request;
    report.response_bytes = after.response - before.response;
    report.checked = number;
    return report;
}

// object: the request builder's reader goes straight to the server code; nothing serialised.
template <typename C>
Report run_object(const Options &o, Clock::time_point started, Progress &progress) {
    Rng rng;
    Space request_space(o.reuse), response_space(o.reuse);
    auto iterate = [&](std::uint64_t) {
        std::optional<capnp::MallocMessageBuilder> request_slot, response_slot;
        auto request = request_space.builder(request_slot).initRoot<typename C::Request>();
        const typename C::Expectation expected = C::build(rng, request);
        auto response = response_space.builder(response_slot).initRoot<typename C::Response>();
        C::serve(request.asReader(), response);
        C::check(response.asReader(), expected);
    };
    return run_iterations(o, started, progress, iterate, [] { return Totals{}; });
}

// bytes: each message serialised into its buffer and read back from it, in one process.
template <typename C>
Report run_bytes(const Options &o, Clock::time_point started, Progress &progress) {
    Rng rng;
    Space client_request(o.reuse), server_request(o.reuse);
    Space server_response(o.reuse), client_response(o.reuse);
    MessageBytes request_bytes(o.packed), response_bytes(o.packed);
    Totals totals;
    auto iterate = [&](std::uint64_t) {
        std::optional<capnp::MallocMessageBuilder> request_slot;
        capnp::MallocMessageBuilder &request = client_request.builder(request_slot);
        const typename C::Expectation expected =
            C::build(rng, request.initRoot<typename C::Request>());
        totals.request += request_bytes.write(request);

        request_bytes.read(server_request.words(), [&](capnp::MessageReader &reader) {
            std::optional<capnp::MallocMessageBuilder> response_slot;
            capnp::MallocMessageBuilder &response = server_response.builder(response_slot);
            C::serve(reader.getRoot<typename C::Request>(),
                     response.initRoot<typename C::Response>());
            totals.response += response_bytes.write(response);
        });

        response_bytes.read(client_response.words(), [&](capnp::MessageReader &reader) {
            C::check(reader.getRoot<typename C::Response>(), expected);
        });
    };
    return run_iterations(o, started, progress, iterate, [&] { return totals; });
}

// client: one request in flight; the response is read and checked before the next request.
template <typename C>
Report run_client(const Options &o, Clock::time_point started, Progress &progress, int in_fd,
                  int out_fd) {
    Rng rng;
    Space request_space(o.reuse), response_space(o.reuse);
    MessageOut out(out_fd, o.packed);
    MessageIn in(in_fd, o.packed, response_space.words());
    auto iterate = [&](std::uint64_t) {
        typename C::Expectation expected;
        {
            std::optional<capnp::MallocMessageBuilder> request_slot;
            capnp::MallocMessageBuilder &request = request_space.builder(request_slot);
            expected = C::build(rng, request.initRoot<typename C::Request>());
            out.write(request);
        }
        if (in.at_end())
            throw std::runtime_error("end of input: the server's output ended before its "
                                     "response");
        in.read([&](capnp::MessageReader &reader) {
            C::check(reader.getRoot<typename C::Response>(), expected);
        });
    };
    return run_iterations(o, started, progress, iterate, [&] {
        return Totals{out.bytes_written(), in.bytes_read()};
    });
}

template <typename C>
std::uint64_t serve(const Options &o, Progress &progress, kj::InputStream &in_stream,
                    kj::OutputStream &out_stream) {
    Space request_space(o.reuse), response_space(o.reuse);
    MessageIn in(in_stream, o.packed, request_space.words());
    MessageOut out(out_stream, o.packed);
    progress.stage = "request";
    std::uint64_t served = 0;
    while (!in.at_end()) {
        progress.number = served + 1;
        in.read([&](capnp::MessageReader &reader) {
            std::optional<capnp::MallocMessageBuilder> response_slot;
            capnp::MallocMessageBuilder &response = response_space.builder(response_slot);
            C::serve(reader.getRoot<typename C::Request>(),
                     response.initRoot<typename C::Response>());
            out.write(response);
        });
        ++served;
    }
    return served;
}

// pipe: this program started again as the server (`CASE server REUSE COMPRESSION ITERS`),
// joined by two pipes; the client side runs here, then the server is waited for and its CPU
// taken from wait4.
template <typename C>
Report run_pipe(const Options &o, Clock::time_point started, Progress &progress) {
    int requests[2], responses[2];
    if (::pipe2(requests, O_CLOEXEC) != 0 || ::pipe2(responses, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe2");
    kj::AutoCloseFd request_read(requests[0]), request_write(requests[1]);
    kj::AutoCloseFd response_read(responses[0]), response_write(responses[1]);

    // dup2 onto 0 and 1 clears close-on-exec there; every other descriptor of ours closes.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, request_read, 0);
    posix_spawn_file_actions_adddup2(&actions, response_write, 1);
    const std::string iterations = std::to_string(o.iterations);
    const char *argv[] = {"capnp-cpp",
                          case_name(o.case_id),
                          "server",
                          reuse_name(o.reuse),
                          compression_name(o.packed),
                          iterations.c_str(),
                          nullptr};
    pid_t pid = 0;
    const int spawned = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr,
                                      const_cast<char *const *>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        throw std::system_error(spawned, std::generic_category(), "starting the server");
    request_read = nullptr;
    response_write = nullptr;

    Report report;
    try {
        report = run_client<C>(o, started, progress, response_read, request_write);
    } catch (...) {
        // The run has failed already: stop the server rather than let it add its own lines
        // about a request cut short.
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        throw;
    }
    request_write = nullptr; // the server's input ends at a message boundary

    progress.stage = "waiting for the server";
    progress.number = 0;
    int status = 0;
    rusage usage{};
    if (::wait4(pid, &status, 0, &usage) != pid)
        throw std::system_error(errno, std::generic_category(), "wait4");
    if (WIFSIGNALED(status))
        throw std::runtime_error("the server was killed by signal " +
                                 std::to_string(WTERMSIG(status)));
    if (WEXITSTATUS(status) != 0)
        throw std::runtime_error("the server exited with status " +
                                 std::to_string(WEXITSTATUS(status)));
    report.server_cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    return report;
}

template <typename C>
Report client_side(const Options &o, Clock::time_point started, Progress &progress, int in,
                   int out) {
    switch (o.mode) {
    case Mode::object:
        return run_object<C>(o, started, progress);
    case Mode::bytes:
        return run_bytes<C>(o, started, progress);
    case Mode::pipe:
        return run_pipe<C>(o, started, progress);
    case Mode::client:
    case Mode::server:
        break;
    }
    return run_client<C>(o, started, progress, in, out);
}

} // namespace

Report run_client_side(const Options &o, Clock::time_point started, Progress &progress, int in,
                       int out) {
    switch (o.case_id) {
    case CaseId::carsales:
        return client_side<Carsales>(o, started, progress, in, out);
    case CaseId::catrank:
        return client_side<Catrank>(o, started, progress, in, out);
    case CaseId::eval:
        break;
    }
    return client_side<Eval>(o, started, progress, in, out);
}

std::uint64_t run_server(const Options &o, Progress &progress, int in, int out) {
    kj::FdInputStream in_stream(in);
    kj::FdOutputStream out_stream(out);
    return run_server(o, progress, in_stream, out_stream);
}

std::uint64_t run_server(const Options &o, Progress &progress, kj::InputStream &in,
                         kj::OutputStream &out) {
    switch (o.case_id) {
    case CaseId::carsales:
        return serve<Carsales>(o, progress, in, out);
    case CaseId::catrank:
        return serve<Catrank>(o, progress, in, out);
    case CaseId::eval:
        break;
    }
    return serve<Eval>(o, progress, in, out);
}

} // namespace capbench
