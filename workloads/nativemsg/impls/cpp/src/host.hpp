// The serve loop: read a frame, answer it, flush, repeat.
#pragma once

#include "framing.hpp"

#include <string_view>

namespace nativemsg {

// Serves requests from `input` until it ends, writing replies to `output_fd` and diagnostics to
// `log_fd`. Returns the exit status: 0 at EOF on a frame boundary, 1 when the stream is broken
// (EOF mid-frame, oversized length prefix, read or write error).
int serve(ByteSource &input, int output_fd, int log_fd);
// The same loop with replies going to `output` (an FdSink in the host).
int serve(ByteSource &input, FrameSink &output, int log_fd);

// Writes "nativemsg-cpp: <message>\n" to `fd` in one write(2) (stderr is the browser's log;
// stdout is reserved for frames).
void log_line(int fd, std::string_view message) noexcept;

} // namespace nativemsg
