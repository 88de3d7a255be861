/*
 * The per-connection handler: echo every message as REPLY and apply the session rules of
 * SPEC.md §2 (END/QUIT, EOF between and inside frames, the body cap). It owns the socket's
 * buffer but no thread: a worker's event loop calls it when the socket is readable or writable
 * and does what the returned verdict says.
 *
 * Echo in place: a reply differs from its request only in the type byte, so each reply header
 * is encoded over its request's header in the input buffer and the body stays where it was
 * read. The replies to everything parsed are then one contiguous range of the buffer, written
 * with one write(2) however many messages it holds - no copy, no gather list.
 *
 * A body larger than the buffer is streamed through piece by piece, so a client that reads
 * its replies while it sends costs one SESSION_BUFFER_SIZE buffer whatever the body sizes. A
 * client that writes a whole message before reading anything (a single-threaded client) would
 * deadlock with a pure streamer once the socket buffers fill: while replies are blocked and
 * the peer is inside a frame larger than the buffer, the rest of that frame (and nothing more)
 * is read into a buffer of its size, bounded by the cap, which shrinks back once written.
 */
#ifndef COMM_HANDLER_H
#define COMM_HANDLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SESSION_BUFFER_SIZE (128 * 1024)

enum session_verdict {
    SESSION_WANT_READ,  /* wait for input (output is all written) */
    SESSION_WANT_WRITE, /* output is pending: wait until the socket is writable, read nothing */
    SESSION_WANT_BOTH,  /* output is pending, and the peer is inside a large frame: both */
    SESSION_CLOSE,      /* the session is over: close the socket */
};

enum session_state {
    SESSION_OPEN,
    SESSION_ENDING,   /* END/QUIT seen: its END reply is the last output */
    SESSION_DRAINING, /* END reply sent and FIN after it: dropping input until the peer closes */
    SESSION_REFUSED,  /* a length above the cap: one try at the replies owed, then close */
};

/* After END the socket is not closed at once: closing it with unread input (anything the
 * client sent after END) makes the kernel answer with RST, which can destroy the END reply in
 * flight. Input after END is read and dropped, up to this much, until the peer closes. */
#define SESSION_DRAIN_LIMIT (16u << 20)

/* The system calls a session makes on its socket: read(2), write(2) and shutdown(2) in the
 * server (session_syscalls), stand-ins with their contract in the fuzz target (fuzz/server.c),
 * which runs the session rules over memory. */
struct session_io {
    ssize_t (*read)(int fd, void *buf, size_t n);
    ssize_t (*write)(int fd, const void *buf, size_t n);
    int (*shutdown)(int fd, int how);
};

extern const struct session_io session_syscalls;

struct session {
    int fd;
    const struct session_io *io; /* &session_syscalls unless the caller sets another */
    uint64_t max_body;
    /* The input buffer: in[0..out_head) written, in[out_head..parsed) replies not yet
     * written, in[parsed..len) read but not parsed (part of a frame), in[len..cap) free. */
    unsigned char *in;
    size_t cap, len, parsed, out_head;
    uint64_t stream_left; /* body bytes of a streamed frame still to pass through */
    enum session_state state;
    uint64_t drained; /* bytes read and dropped after END */
    /* Owned by the worker: the epoll events it waits for, and its list of sessions. */
    uint32_t events;
    struct session *prev, *next;
};

/* Allocates a session for a connected, non-blocking socket; NULL when out of memory. */
struct session *session_create(int fd, uint64_t max_body);
/* Frees the session; the caller closes the socket. */
void session_destroy(struct session *s);

enum session_verdict session_on_readable(struct session *s);
enum session_verdict session_on_writable(struct session *s);

#endif
