#include "host.hpp"

#include "protocol.hpp"

#include <unistd.h>

#include <string>

namespace nativemsg {

int serve(ByteSource &input, int output_fd, int log_fd) {
    FdSink output(output_fd);
    return serve(input, output, log_fd);
}

int serve(ByteSource &input, FrameSink &output, int log_fd) {
    FrameReader reader(input);
    Responder responder;
    for (;;) {
        ReadResult request = reader.next();
        switch (request.status) {
        case ReadStatus::frame:
            break;
        case ReadStatus::eof:
            return 0;
        case ReadStatus::error:
            log_line(log_fd, request.error);
            return 1;
        }
        // The reply goes out (one writev, no user-space buffering to flush) before the next
        // read: a caller waiting for it never hangs.
        if (const auto failure = output.write(responder.respond(request.body))) {
            log_line(log_fd, "cannot write a reply to stdout: " + failure.message());
            return 1;
        }
    }
}

void log_line(int fd, std::string_view message) noexcept {
    try {
        std::string line = "nativemsg-cpp: ";
        line.append(message);
        line.push_back('\n');
        // Best effort: there is nowhere left to report a failure to write to the log.
        [[maybe_unused]] const ssize_t n = ::write(fd, line.data(), line.size());
    } catch (...) { // std::bad_alloc: drop the message rather than end the process
    }
}

} // namespace nativemsg
