#include "host.h"

#include "framing.h"
#include "protocol.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The program name that starts every stderr message: set per target by CMakeLists.txt. */
#ifndef HOST_NAME
#error "HOST_NAME must be defined (the program name for stderr messages)"
#endif

/*
 * One reply frame, reused for every reply: the protocol writes the body after the header
 * space and framing fills the header in, so header and body leave in one write(2). Static so
 * start-up allocates nothing; the kernel maps its pages only when a large reply touches them.
 */
static unsigned char reply_frame[FRAME_HEADER_SIZE + FRAME_MAX_REPLY];

static void report(enum frame_status fs, const struct frame_reader *reader) {
    if (fs == FRAME_TOO_LARGE)
        fprintf(stderr, HOST_NAME ": %s (%u bytes)\n", frame_status_text(fs),
                (unsigned)reader->claimed);
    else if (fs == FRAME_READ_ERROR)
        fprintf(stderr, HOST_NAME ": %s: %s\n", frame_status_text(fs), strerror(errno));
    else
        fprintf(stderr, HOST_NAME ": %s\n", frame_status_text(fs));
}

int host_serve(int in_fd, int out_fd) {
    return host_serve_io(&frame_syscalls, in_fd, out_fd);
}

int host_serve_io(const struct frame_io *io, int in_fd, int out_fd) {
    struct frame_reader reader;
    if (frame_reader_init(&reader, in_fd) != 0) {
        fprintf(stderr, HOST_NAME ": out of memory\n");
        return 1;
    }
    reader.io = io;
    struct protocol *protocol = protocol_new();
    if (!protocol) {
        fprintf(stderr, HOST_NAME ": out of memory\n");
        frame_reader_free(&reader);
        return 1;
    }
    int status = 1;
    for (;;) {
        const unsigned char *body;
        uint32_t len;
        enum frame_status fs = frame_read(&reader, &body, &len);
        if (fs == FRAME_EOF) {
            status = 0;
            break;
        }
        if (fs != FRAME_OK) {
            report(fs, &reader);
            break;
        }
        size_t n = protocol_reply(protocol, body, len, reply_frame + FRAME_HEADER_SIZE);
        /* Written before the next read: a caller waiting for this reply must never hang. */
        if (frame_write_io(io, out_fd, reply_frame, n) != 0) {
            fprintf(stderr, HOST_NAME ": write error on stdout: %s\n", strerror(errno));
            break;
        }
    }
    protocol_free(protocol);
    frame_reader_free(&reader);
    return status;
}
