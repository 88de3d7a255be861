/* The iteration loops of SPEC §4-5: object, bytes, pipe (with its server as a child), client
 * and server, with reuse or not, timed and checked. Any failure ends the program with exit
 * status 1 and one line on stderr. */
#ifndef CAPNP_BASELINE_MODES_H
#define CAPNP_BASELINE_MODES_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cases.h"

enum mode { MODE_OBJECT, MODE_BYTES, MODE_PIPE, MODE_CLIENT, MODE_SERVER };

struct run {
    const struct case_ops *ops;
    enum mode mode;
    bool reuse, packed;
    uint64_t iterations, warmup;
    char *const *argv;     /* the command line: pipe starts the server with it */
    struct timespec start; /* main's first statement */
};

struct report {
    double setup_s, warmup_s, elapsed_s, cpu_s, server_cpu_s;
    uint64_t request_bytes, response_bytes, checked;
};

/* object, bytes, pipe, client: the iterations, then the figures for the report. */
void modes_client(const struct run *run, struct report *report);
/* server: answers until its input ends at a message boundary; the count of requests served. */
uint64_t modes_server(const struct run *run);

/* Prints "capnp-baseline: <message>" on stderr and exits with status 1. */
_Noreturn void modes_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
