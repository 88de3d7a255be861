/* The serve loop: read a frame, answer it, write the reply, repeat until EOF. */
#ifndef NATIVEMSG_HOST_H
#define NATIVEMSG_HOST_H

/*
 * Serves requests from in_fd and writes replies to out_fd until the stream ends. Returns the
 * process exit status: 0 on EOF at a frame boundary, 1 on a broken stream (EOF inside a frame,
 * a length prefix above 64 MiB, a read or write error), after a message on stderr.
 */
int host_serve(int in_fd, int out_fd);

struct frame_io;
/* host_serve with other system calls than read(2) and write(2): the fuzz target's memory. */
int host_serve_io(const struct frame_io *io, int in_fd, int out_fd);

#endif
