/* Native Messaging framing: a 4-byte length in native byte order, then that many bytes. */
#ifndef NATIVEMSG_FRAMING_H
#define NATIVEMSG_FRAMING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FRAME_HEADER_SIZE 4u
/* Browser -> host limit (Chromium refuses to send more). */
#define FRAME_MAX_REQUEST (64u * 1024u * 1024u)
/* Host -> browser limit: Chromium drops the connection at one byte more. */
#define FRAME_MAX_REPLY (1024u * 1024u)

enum frame_status {
    FRAME_OK,         /* one request body is available */
    FRAME_EOF,        /* EOF at a frame boundary: the clean end of a session */
    FRAME_EOF_HEADER, /* EOF inside the 4-byte length */
    FRAME_EOF_BODY,   /* EOF inside a body */
    FRAME_TOO_LARGE,  /* the length prefix is above FRAME_MAX_REQUEST */
    FRAME_READ_ERROR, /* read(2) failed; errno says why */
    FRAME_NO_MEMORY,  /* could not grow the buffer to hold the frame */
};

/*
 * The system calls framing reads and writes with: read(2) and write(2) in the host (see
 * frame_syscalls), stand-ins with the same contract in the fuzz target (fuzz/host.c), which
 * serves a stream from memory.
 */
struct frame_io {
    ssize_t (*read)(int fd, void *buf, size_t n);
    ssize_t (*write)(int fd, const void *buf, size_t n);
};

extern const struct frame_io frame_syscalls;

/*
 * Reads frames out of a reusable buffer filled by large read(2) calls, so a burst of small
 * frames costs one system call and a frame split over many reads is reassembled in place.
 */
struct frame_reader {
    const struct frame_io *io; /* &frame_syscalls unless the caller sets another */
    int fd;
    unsigned char *buf;
    size_t cap;       /* bytes allocated */
    size_t start;     /* first byte not yet handed out */
    size_t end;       /* one past the last byte read */
    uint32_t claimed; /* the length prefix of the frame being read (for error messages) */
};

/* Returns 0, or -1 when the initial buffer cannot be allocated. */
int frame_reader_init(struct frame_reader *r, int fd);
void frame_reader_free(struct frame_reader *r);

/*
 * Reads the next frame. On FRAME_OK, *body and *len describe the body; they stay valid until
 * the next call. Blocks only when the buffer does not yet hold a whole frame.
 */
enum frame_status frame_read(struct frame_reader *r, const unsigned char **body, uint32_t *len);

/* A short human-readable reason for a status other than FRAME_OK and FRAME_EOF. */
const char *frame_status_text(enum frame_status status);

/*
 * Writes one frame whose body is already at frame + FRAME_HEADER_SIZE: the header is filled
 * in front of it so the whole reply leaves in a single write(2) (one system call, and a reader
 * never sees a header without its body). Returns 0, or -1 with errno set (EMSGSIZE when the
 * body is above FRAME_MAX_REPLY).
 */
int frame_write(int fd, unsigned char *frame, size_t body_len);
/* frame_write through io->write. */
int frame_write_io(const struct frame_io *io, int fd, unsigned char *frame, size_t body_len);

#endif
