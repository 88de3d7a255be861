// nativemsg-cpp: a Native Messaging host. Arguments (the caller's origin from Chromium, the
// manifest path and extension id from Firefox) are accepted and ignored.
#include "framing.hpp"
#include "host.hpp"

#include <unistd.h>

#include <csignal>
#include <exception>

int main() {
    // A browser that goes away closes our stdout. Without this, the next write would kill the
    // host with SIGPIPE; with it, the write fails with EPIPE and the host exits 1 with a message.
    std::signal(SIGPIPE, SIG_IGN);
    try {
        nativemsg::FdSource input(STDIN_FILENO);
        return nativemsg::serve(input, STDOUT_FILENO, STDERR_FILENO);
    } catch (const std::exception &e) { // e.g. std::bad_alloc: never let an exception escape
        nativemsg::log_line(STDERR_FILENO, e.what());
    } catch (...) {
        nativemsg::log_line(STDERR_FILENO, "fatal: unknown exception");
    }
    return 1;
}
