// capnp-cpp: the capnp workload's benchmark program in C++ on libcapnp (SPEC §5), the lab's
// reference implementation. The command line, the report, and the exit statuses: 0 done, 1 any
// failure at run time (one line on stderr: what and where), 2 a bad command line.
#include "errors.hpp"
#include "modes.hpp"
#include "options.hpp"
#include "report.hpp"

#include <kj/exception.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

using namespace capbench;

// One write(2), so the line stays whole when a pipe run's server shares stderr.
void write_stderr(std::string line) {
    for (char &c : line)
        if (c == '\n' || c == '\r')
            c = ' ';
    line += '\n';
    const char *p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
        const ssize_t n = ::write(STDERR_FILENO, p, left);
        if (n <= 0)
            return; // nowhere left to say it
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

// The first failure is the one reported, in one line. kj reports a second one found while the
// first unwinds (InputStreamMessageReader's destructor skipping the rest of a message that the
// input cut short) by logging it to stderr with a stack trace; those logs are dropped. Nothing
// here prints a stack trace, so none is collected either.
class OneLineFailures final : public kj::ExceptionCallback {
  public:
    void logMessage(kj::LogSeverity, const char *, int, int, kj::String &&) override {}
    StackTraceMode stackTraceMode() override {
        return StackTraceMode::NONE;
    }
};

// What the library said, and where in its sources (its description names the check).
std::string describe(const kj::Exception &e) {
    const char *file = e.getFile();
    if (const char *slash = std::strrchr(file, '/'))
        file = slash + 1;
    return std::string(e.getDescription().cStr()) + " [" + file + ":" +
           std::to_string(e.getLine()) + "]";
}

int fail(const Options &o, const Progress &progress, const std::string &what) {
    write_stderr(std::string("capnp-cpp ") + case_name(o.case_id) + " " + mode_name(o.mode) + ": " +
                 progress.describe() + ": " + what);
    return 1;
}

// The report on stdout, or stderr for a client (its stdout carries the requests).
bool print(FILE *f, const std::string &line) {
    return std::fputs(line.c_str(), f) >= 0 && std::fflush(f) == 0;
}

} // namespace

int main(int argc, char **argv) {
    const Clock::time_point started = Clock::now();

    Options o;
    try {
        o = parse_options(argc, argv);
    } catch (const UsageError &e) {
        std::fprintf(stderr, "capnp-cpp: %s\n%s", e.what(), kUsage);
        return 2;
    }

    // A peer that goes away must be an error message and exit status 1 (EPIPE, which kj turns
    // into an exception), not death by SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);

    OneLineFailures one_line_failures;
    Progress progress;
    try {
        if (o.mode == Mode::server) {
            const std::uint64_t served = run_server(o, progress);
            write_stderr("{\"served\": " + std::to_string(served) + "}");
            return 0;
        }
        const Report report = run_client_side(o, started, progress);
        progress = Progress{"writing the report"};
        if (!print(o.mode == Mode::client ? stderr : stdout, report_json(o, report)))
            return fail(o, progress, "the report could not be written");
        return 0;
    } catch (const kj::Exception &e) {
        return fail(o, progress, describe(e));
    } catch (const std::exception &e) {
        return fail(o, progress, e.what());
    }
}
