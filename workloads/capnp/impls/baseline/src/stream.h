/* Messages on a byte stream (SPEC §7): each one a u32 little-endian body length, then the body
 * (a message's CCE); with `packed`, that frame padded with zeros to a multiple of 8 bytes and
 * packed with Cap'n Proto's packing (a tag byte per word saying which bytes are nonzero, then
 * those bytes; after an all-zero word a count of further zero words, after an all-nonzero
 * word a count of words copied verbatim).
 *
 * The writer builds one message in a buffer and hands back the bytes to send, written with
 * one write(2): a message is flushed whole, once. The reader takes bytes from a file
 * descriptor through its own buffer (or from bytes in memory, for the `bytes` mode), and
 * checks a message's length against the 64 MiB cap before it allocates anything for it. */
#ifndef CAPNP_BASELINE_STREAM_H
#define CAPNP_BASELINE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The 8 Mi words (64 MiB) of SPEC §6, libcapnp's default: no body may be longer. */
#define STREAM_MESSAGE_LIMIT ((size_t)64 << 20)

struct writer {
    uint8_t *frame; /* length, body, zero padding */
    size_t frame_cap, frame_len;
    uint8_t *packed;
    size_t packed_cap;
};

void writer_init(struct writer *w);
void writer_destroy(struct writer *w);
/* Room for a body of `len` bytes after its length, which is written: the caller encodes the
 * body there. NULL when `len` passes the cap or memory runs out. */
uint8_t *writer_begin(struct writer *w, size_t len);
/* The message as it is sent: the frame, or its packing. */
const uint8_t *writer_finish(struct writer *w, bool packed, size_t *len);

/* Writes all `len` bytes (retrying short writes); false with errno set on failure. */
bool write_all(int fd, const uint8_t *bytes, size_t len);

struct reader {
    int fd;              /* -1: reading `data` from memory, with nothing after it */
    const uint8_t *data; /* `own`, or the memory being read */
    size_t pos, end;     /* the unread bytes are data[pos .. end) */
    uint8_t *own;        /* the read buffer of a file descriptor */
    size_t own_cap;
    uint8_t *msg; /* a message that is not whole in `data`, or unpacked */
    size_t msg_cap;
    uint64_t taken; /* bytes taken from the source so far */
    int read_errno; /* a failed read(2) */
    char error[160];
};

enum read_status { READ_MESSAGE, READ_END, READ_ERROR };

/* A reader of `fd` (-1: of memory, given to each message with reader_set_memory). */
bool reader_init(struct reader *r, int fd);
void reader_destroy(struct reader *r);
void reader_set_memory(struct reader *r, const uint8_t *bytes, size_t len);

/* The next message's body: READ_MESSAGE; READ_END at the end of the input between two
 * messages; READ_ERROR (r->error says what) for anything else: the end inside a message, a
 * length over the cap, a packed run past the message's end, a failed read. The body stays
 * valid until the next call. */
enum read_status reader_next(struct reader *r, bool packed, const uint8_t **body, size_t *len);

/* Bytes taken from the source and not left in the buffer: the size of the messages read. */
static inline uint64_t reader_consumed(const struct reader *r) {
    return r->taken - (r->end - r->pos);
}

/* Cap'n Proto's packing of `words` words into `out` (room for 10 bytes a word); its length. */
size_t stream_pack(const uint8_t *in, size_t words, uint8_t *out);

#endif
