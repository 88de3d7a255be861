#define _GNU_SOURCE /* pipe2, wait4 */
#include "modes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stream.h"

extern char **environ;

static const struct run *current; /* for the messages' prefix */

_Noreturn void modes_fail(const char *fmt, ...) {
    /* One line, written at once: a pipe run's server shares this stderr. */
    char line[512];
    int n = snprintf(line, sizeof line,
                     "capnp-baseline %s: ", current != NULL ? current->ops->name : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    fputs(line, stderr);
    exit(1);
}

static struct timespec now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

static double seconds(struct timespec from, struct timespec to) {
    return (double)(to.tv_sec - from.tv_sec) + (double)(to.tv_nsec - from.tv_nsec) * 1e-9;
}

static double timeval_s(struct timeval t) {
    return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

/* User + system CPU of this process (all threads: there is one). */
static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return timeval_s(ru.ru_utime) + timeval_s(ru.ru_stime);
}

/* The client: the generator (one per process, never reset), the arenas of the request and of
 * the response it is waiting for, and what that response must say. */
struct client {
    const struct case_ops *ops;
    bool packed;
    struct rng rng;
    struct arena request, response;
    struct writer out;
    struct reader in;
    struct expected expected;
    uint64_t number; /* of the request in flight, from 1, the warm-up's included */
    uint64_t request_bytes, response_bytes;
};

struct server {
    const struct case_ops *ops;
    bool packed;
    struct arena request, response;
    struct writer out;
    struct reader in;
    uint64_t number; /* of the last request read */
};

static void client_init(struct client *c, const struct run *run, int in_fd) {
    c->ops = run->ops;
    c->packed = run->packed;
    rng_init(&c->rng);
    arena_init(&c->request, run->reuse);
    arena_init(&c->response, run->reuse);
    writer_init(&c->out);
    if (!reader_init(&c->in, in_fd))
        modes_fail("no memory for the read buffer");
    c->number = 0;
    c->request_bytes = c->response_bytes = 0;
}

static void client_destroy(struct client *c) {
    arena_destroy(&c->request);
    arena_destroy(&c->response);
    writer_destroy(&c->out);
    reader_destroy(&c->in);
}

static void server_init(struct server *s, const struct run *run, int in_fd) {
    s->ops = run->ops;
    s->packed = run->packed;
    arena_init(&s->request, run->reuse);
    arena_init(&s->response, run->reuse);
    writer_init(&s->out);
    if (!reader_init(&s->in, in_fd))
        modes_fail("no memory for the read buffer");
    s->number = 0;
}

static void server_destroy(struct server *s) {
    arena_destroy(&s->request);
    arena_destroy(&s->response);
    writer_destroy(&s->out);
    reader_destroy(&s->in);
}

static const void *client_build(struct client *c) {
    c->number++;
    return c->ops->build(&c->rng, &c->request, &c->expected);
}

/* Checks the response, then ends both messages. */
static void client_check(struct client *c, const void *response) {
    char why[256];
    if (!c->ops->check(response, &c->expected, why, sizeof why))
        modes_fail("client: response %" PRIu64 " is wrong: %s", c->number, why);
    arena_release(&c->request);
    arena_release(&c->response);
}

/* The request as it is sent. */
static const uint8_t *client_encode(struct client *c, const void *request, size_t *len) {
    uint8_t *body = writer_begin(&c->out, c->ops->request_size(request));
    const uint8_t *bytes = NULL;
    if (body != NULL) {
        c->ops->encode_request(request, body);
        bytes = writer_finish(&c->out, c->packed, len);
    }
    if (bytes == NULL)
        modes_fail("client: request %" PRIu64 ": no memory to serialise it", c->number);
    c->request_bytes += *len;
    return bytes;
}

/* Reads, decodes and checks the response. */
static void client_receive(struct client *c) {
    uint64_t before = reader_consumed(&c->in);
    const uint8_t *body;
    size_t len;
    switch (reader_next(&c->in, c->packed, &body, &len)) {
    case READ_MESSAGE:
        break;
    case READ_END:
        modes_fail("client: response %" PRIu64 ": the server's output ended before it", c->number);
    case READ_ERROR:
        modes_fail("client: response %" PRIu64 ": %s", c->number, c->in.error);
    }
    c->response_bytes += reader_consumed(&c->in) - before;
    struct cce in;
    cce_init(&in, body, len);
    const void *response = c->ops->decode_response(&in, &c->response);
    if (response == NULL)
        modes_fail("client: response %" PRIu64 " is invalid %s", c->number, in.error);
    client_check(c, response);
}

/* The next request's body; false at the end of the input between two messages. */
static bool server_read(struct server *s, const uint8_t **body, size_t *len) {
    switch (reader_next(&s->in, s->packed, body, len)) {
    case READ_MESSAGE:
        s->number++;
        return true;
    case READ_END:
        return false;
    case READ_ERROR:
        break;
    }
    modes_fail("server: request %" PRIu64 ": %s", s->number + 1, s->in.error);
}

/* Decodes, serves and encodes one request; the response as it is sent. */
static const uint8_t *server_answer(struct server *s, const uint8_t *body, size_t len,
                                    size_t *out_len) {
    struct cce in;
    cce_init(&in, body, len);
    const void *request = s->ops->decode_request(&in, &s->request);
    if (request == NULL)
        modes_fail("server: request %" PRIu64 " is invalid %s", s->number, in.error);
    const void *response = s->ops->serve(request, &s->response);
    uint8_t *out = response == NULL ? NULL : writer_begin(&s->out, s->ops->response_size(response));
    const uint8_t *bytes = NULL;
    if (out != NULL) {
        s->ops->encode_response(response, out);
        bytes = writer_finish(&s->out, s->packed, out_len);
    }
    if (bytes == NULL)
        modes_fail("server: request %" PRIu64
                   ": its response passes the 64 MiB limit of a message (or memory ran out)",
                   s->number);
    arena_release(&s->request);
    arena_release(&s->response);
    return bytes;
}

/* object: the server code reads the client's request objects and builds its response objects;
 * nothing is serialised. */
static void object_iteration(struct client *c) {
    const void *response = c->ops->serve(client_build(c), &c->response);
    if (response == NULL)
        modes_fail("request %" PRIu64 ": no memory for the response", c->number);
    client_check(c, response);
}

/* bytes: both messages through the same encoding, framing and packing as on a pipe, the
 * reader over the writer's buffer (unpacked messages are read in place). */
static void bytes_iteration(struct client *c, struct server *s) {
    size_t len;
    const uint8_t *bytes = client_encode(c, client_build(c), &len);
    reader_set_memory(&s->in, bytes, len);
    const uint8_t *body;
    size_t body_len;
    if (!server_read(s, &body, &body_len))
        modes_fail("server: request %" PRIu64 " is missing", c->number);
    bytes = server_answer(s, body, body_len, &len);
    reader_set_memory(&c->in, bytes, len);
    client_receive(c);
}

static void pipe_iteration(struct client *c, int to_server) {
    size_t len;
    const uint8_t *bytes = client_encode(c, client_build(c), &len);
    if (!write_all(to_server, bytes, len))
        modes_fail("client: writing request %" PRIu64 ": %s", c->number, strerror(errno));
    client_receive(c);
}

static void iterate(const struct run *run, struct client *c, struct server *s, int to_server,
                    uint64_t count) {
    switch (run->mode) {
    case MODE_OBJECT:
        for (uint64_t i = 0; i < count; i++)
            object_iteration(c);
        break;
    case MODE_BYTES:
        for (uint64_t i = 0; i < count; i++)
            bytes_iteration(c, s);
        break;
    default:
        for (uint64_t i = 0; i < count; i++)
            pipe_iteration(c, to_server);
        break;
    }
}

/* pipe: this program again, as `server` with the same arguments, joined by two pipes. */
static pid_t start_server(const struct run *run, int *to_server, int *from_server) {
    int requests[2], responses[2];
    if (pipe2(requests, O_CLOEXEC) != 0 || pipe2(responses, O_CLOEXEC) != 0)
        modes_fail("creating the pipes: %s", strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, requests[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, responses[1], STDOUT_FILENO);
    char *argv[] = {run->argv[0], run->argv[1], (char *)"server", run->argv[3], run->argv[4],
                    run->argv[5], NULL};
    pid_t pid;
    int e = posix_spawn(&pid, "/proc/self/exe", &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (e != 0)
        modes_fail("starting the server: %s", strerror(e));
    close(requests[0]);
    close(responses[1]);
    *to_server = requests[1];
    *from_server = responses[0];
    return pid;
}

/* Waits for the server, which must exit 0; its CPU over its whole life. */
static double wait_server(pid_t pid) {
    int status;
    struct rusage ru;
    pid_t got;
    do
        got = wait4(pid, &status, 0, &ru);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        modes_fail("waiting for the server: %s", strerror(errno));
    if (WIFSIGNALED(status))
        modes_fail("the server was killed by signal %d", WTERMSIG(status));
    if (WEXITSTATUS(status) != 0)
        modes_fail("the server exited with status %d", WEXITSTATUS(status));
    return timeval_s(ru.ru_utime) + timeval_s(ru.ru_stime);
}

void modes_client(const struct run *run, struct report *report) {
    current = run;
    int to_server = STDOUT_FILENO, from_server = STDIN_FILENO;
    pid_t server_pid = 0;
    if (run->mode == MODE_PIPE)
        server_pid = start_server(run, &to_server, &from_server);
    bool piped = run->mode == MODE_PIPE || run->mode == MODE_CLIENT;
    struct client c;
    struct server s;
    client_init(&c, run, piped ? from_server : -1);
    server_init(&s, run, -1);

    struct timespec warmup_start = now();
    iterate(run, &c, &s, to_server, run->warmup);
    struct timespec timed_start = now();
    double cpu_start = cpu_s();
    c.request_bytes = c.response_bytes = 0;
    iterate(run, &c, &s, to_server, run->iterations);
    struct timespec timed_end = now();
    double cpu_end = cpu_s();

    *report = (struct report){
        .setup_s = seconds(run->start, warmup_start),
        .warmup_s = seconds(warmup_start, timed_start),
        .elapsed_s = seconds(timed_start, timed_end),
        .cpu_s = cpu_end - cpu_start,
        .request_bytes = c.request_bytes,
        .response_bytes = c.response_bytes,
        .checked = c.number,
    };
    if (run->mode == MODE_PIPE) {
        close(to_server); /* the server's end of input, at a message boundary */
        report->server_cpu_s = wait_server(server_pid);
        close(from_server);
    }
    client_destroy(&c);
    server_destroy(&s);
}

uint64_t modes_server(const struct run *run) {
    current = run;
    struct server s;
    server_init(&s, run, STDIN_FILENO);
    const uint8_t *body;
    size_t len;
    while (server_read(&s, &body, &len)) {
        size_t out_len;
        const uint8_t *bytes = server_answer(&s, body, len, &out_len);
        if (!write_all(STDOUT_FILENO, bytes, out_len))
            modes_fail("server: writing response %" PRIu64 ": %s", s.number, strerror(errno));
    }
    uint64_t served = s.number;
    server_destroy(&s);
    return served;
}
