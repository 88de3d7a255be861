/*
 * echonet-c-controller: the ECHONET Lite controller (SPEC §8).
 *
 *   echonet-c-controller [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]
 *                        [--retries N] COMMAND ARGS...
 *
 * Options may stand before or after the command's words. Every command prints one JSON object
 * on stdout: exit 0 on success, 1 with {"error": ...} when a request went unanswered or a reply
 * was wrong, 2 with a message on stderr for a bad command line.
 */
#include "controller.h"
#include "frame.h"
#include "options.h"
#include "report.h"
#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define USAGE                                                                                      \
    "usage: echonet-c-controller [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]\n"     \
    "                            [--retries N] COMMAND ARGS...\n"                                  \
    "commands:\n"                                                                                  \
    "  get HOST EOJ EPCS            one Get (EPCS: 80,82)\n"                                       \
    "  setc HOST EOJ SETS           one SetC (SETS: 80=30,b3=19)\n"                                \
    "  seti HOST EOJ SETS           one SetI; waits one timeout for a SetI_SNA\n"                  \
    "  setget HOST EOJ SETS EPCS    one SetGet\n"                                                  \
    "  inf-req HOST EOJ EPCS        one INF_REQ\n"                                                 \
    "  discover [--expect N] [--wait-ms MS]\n"                                                     \
    "                               multicast Get 0xD6 to 0x0EF001 and list the nodes\n"           \
    "  bench HOST --mode faithful|batched --iterations N [--warmup N]\n"                           \
    "                               the seed's loop over the node profile's 12 properties\n"

/* The node profile's 12 properties, in the seed's order (SPEC §8). */
static const uint8_t bench_epcs[12] = {0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E,
                                       0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7};

struct command_line {
    struct controller_config cfg;
    int have_ifaddr;
    uint64_t expect, wait_ms, iterations, warmup;
    const char *mode;
    const char *discover_option; /* the first option of discover seen, if any */
    const char *bench_option;    /* the first option of bench seen, if any */
    const char *words[8];
    int nwords;
};

static int usage_error(const char *what, const char *value) {
    if (value)
        fprintf(stderr, "echonet-c-controller: %s: %s\n" USAGE, what, value);
    else
        fprintf(stderr, "echonet-c-controller: %s\n" USAGE, what);
    return 2;
}

/* Parses argv into cl: -1 to go on, else the exit status (0 after --help, 2 for an error). */
static int parse(int argc, char **argv, struct command_line *cl) {
    *cl = (struct command_line){
        .cfg = {.bind = {htonl(INADDR_ANY)},
                .port = TRANSPORT_PORT,
                .timeout_ms = 500,
                .retries = 3},
        .wait_ms = 1000,
    };
    int only_words = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = 0;
        uint64_t n;
        int m;
        if (only_words || a[0] != '-' || a[1] == '\0') {
            if (cl->nwords == (int)(sizeof cl->words / sizeof cl->words[0]))
                return usage_error("too many arguments", a);
            cl->words[cl->nwords++] = a;
        } else if (strcmp(a, "--") == 0) {
            only_words = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(USAGE, stdout);
            return 0;
        } else if ((m = options_match(argc, argv, &i, "--bind", &v)) != 0) {
            if (m < 0 || options_parse_ipv4(v, &cl->cfg.bind))
                return usage_error("bad --bind address", v);
        } else if ((m = options_match(argc, argv, &i, "--ifaddr", &v)) != 0) {
            if (m < 0 || options_parse_ipv4(v, &cl->cfg.ifaddr))
                return usage_error("bad --ifaddr address", v);
            cl->have_ifaddr = 1;
        } else if ((m = options_match(argc, argv, &i, "--port", &v)) != 0) {
            if (m < 0 || options_parse_u64(v, 1, 65535, &n))
                return usage_error("bad --port (1-65535)", v);
            cl->cfg.port = (uint16_t)n;
        } else if ((m = options_match(argc, argv, &i, "--timeout-ms", &v)) != 0) {
            if (m < 0 || options_parse_u64(v, 1, 3600000, &n))
                return usage_error("bad --timeout-ms (1-3600000)", v);
            cl->cfg.timeout_ms = (unsigned)n;
        } else if ((m = options_match(argc, argv, &i, "--retries", &v)) != 0) {
            if (m < 0 || options_parse_u64(v, 0, 1000000, &n))
                return usage_error("bad --retries (0-1000000)", v);
            cl->cfg.retries = (unsigned)n;
        } else if ((m = options_match(argc, argv, &i, "--expect", &v)) != 0) {
            if (m < 0 || options_parse_u64(v, 1, 1000000, &cl->expect))
                return usage_error("bad --expect (1-1000000)", v);
            cl->discover_option = cl->discover_option ? cl->discover_option : "--expect";
        } else if ((m = options_match(argc, argv, &i, "--wait-ms", &v)) != 0) {
            if (m < 0 || options_parse_u64(v, 0, 3600000, &cl->wait_ms))
                return usage_error("bad --wait-ms (0-3600000)", v);
            cl->discover_option = cl->discover_option ? cl->discover_option : "--wait-ms";
        } else if ((m = options_match(argc, argv, &i, "--mode", &v)) != 0) {
            if (m < 0 || (strcmp(v, "faithful") != 0 && strcmp(v, "batched") != 0))
                return usage_error("bad --mode (faithful or batched)", v);
            cl->mode = v;
            cl->bench_option = cl->bench_option ? cl->bench_option : "--mode";
        } else if ((m = options_match(argc, argv, &i, "--iterations", &v)) != 0) {
            if (m < 0 || options_parse_u64(v, 1, UINT32_MAX, &cl->iterations))
                return usage_error("bad --iterations", v);
            cl->bench_option = cl->bench_option ? cl->bench_option : "--iterations";
        } else if ((m = options_match(argc, argv, &i, "--warmup", &v)) != 0) {
            if (m < 0 || options_parse_u64(v, 0, UINT32_MAX, &cl->warmup))
                return usage_error("bad --warmup", v);
            cl->bench_option = cl->bench_option ? cl->bench_option : "--warmup";
        } else {
            return usage_error("unknown option", a);
        }
    }
    if (!cl->have_ifaddr)
        cl->cfg.ifaddr = cl->cfg.bind;
    if (cl->nwords == 0)
        return usage_error("no command", 0);
    if (cl->discover_option && strcmp(cl->words[0], "discover") != 0)
        return usage_error("an option of discover only", cl->discover_option);
    if (cl->bench_option && strcmp(cl->words[0], "bench") != 0)
        return usage_error("an option of bench only", cl->bench_option);
    return -1;
}

static int fail(const char *message) {
    report_error(stdout, message);
    fflush(stdout);
    return 1;
}

static int fail_unanswered(struct controller *c, struct in_addr host, unsigned attempts) {
    char msg[200], addr[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &host, addr, sizeof addr);
    int len = snprintf(msg, sizeof msg, "no reply from %s after %u attempt%s", addr, attempts,
                       attempts == 1 ? "" : "s");
    if (c->send_errno)
        snprintf(msg + len, sizeof msg - (size_t)len, " (a send failed: %s)",
                 strerror(c->send_errno));
    return fail(msg);
}

static int fail_socket(const char *what) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s: %s", what, strerror(errno));
    return fail(msg);
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void set_tid(uint8_t *frame, uint16_t tid) {
    frame[2] = (uint8_t)(tid >> 8);
    frame[3] = (uint8_t)tid;
}

/* One request of the bench: sent, answered, and answered right (Get_Res, the EPCs asked in
 * order). 0, or the exit status after printing the error. */
static int bench_one(struct controller *c, struct in_addr host, uint8_t *req, size_t len,
                     const uint8_t *epcs, unsigned n) {
    set_tid(req, controller_next_tid(c));
    unsigned attempts;
    switch (controller_request(c, host, req, len, 1 + c->retries, &attempts)) {
    case CONTROLLER_ANSWERED:
        break;
    case CONTROLLER_NO_REPLY:
        return fail_unanswered(c, host, attempts);
    case CONTROLLER_FAILED:
        return fail_socket("receive");
    }
    const struct frame *r = &c->reply;
    bool ok = r->esv == ESV_GET_RES && r->opc == n;
    for (unsigned i = 0; ok && i < n; i++)
        ok = r->props[i].epc == epcs[i];
    if (!ok) {
        char msg[120];
        snprintf(msg, sizeof msg,
                 "wrong reply to a Get of %u propert%s from 0x%02x: esv %02x, %u properties", n,
                 n == 1 ? "y" : "ies", epcs[0], r->esv, r->opc);
        return fail(msg);
    }
    return 0;
}

static int bench_iteration(struct controller *c, struct in_addr host, bool faithful,
                           uint8_t one[12][14], uint8_t *all, size_t all_len) {
    if (!faithful)
        return bench_one(c, host, all, all_len, bench_epcs, 12);
    for (unsigned k = 0; k < 12; k++) {
        int status = bench_one(c, host, one[k], sizeof one[k], &bench_epcs[k], 1);
        if (status)
            return status;
    }
    return 0;
}

static int run_bench(struct controller *c, struct in_addr host, const struct command_line *cl) {
    bool faithful = strcmp(cl->mode, "faithful") == 0;
    /* The requests are encoded once; each send only writes its TID. */
    uint8_t one[12][14], all[FRAME_HEADER_SIZE + 1 + 2 * 12];
    struct frame_writer w;
    for (unsigned k = 0; k < 12; k++) {
        frame_writer_begin(&w, one[k], sizeof one[k], 0, EOJ_CONTROLLER, EOJ_NODE_PROFILE, ESV_GET);
        frame_writer_list(&w);
        frame_writer_prop(&w, bench_epcs[k], 0, 0);
    }
    frame_writer_begin(&w, all, sizeof all, 0, EOJ_CONTROLLER, EOJ_NODE_PROFILE, ESV_GET);
    frame_writer_list(&w);
    for (unsigned k = 0; k < 12; k++)
        frame_writer_prop(&w, bench_epcs[k], 0, 0);

    for (uint64_t i = 0; i < cl->warmup; i++) {
        int status = bench_iteration(c, host, faithful, one, all, sizeof all);
        if (status)
            return status;
    }
    c->resends = 0;
    c->ignored = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint64_t i = 0; i < cl->iterations; i++) {
        int status = bench_iteration(c, host, faithful, one, all, sizeof all);
        if (status)
            return status;
    }
    double elapsed = seconds_since(&t0);
    report_bench(stdout, cl->mode, cl->iterations, cl->iterations * (faithful ? 12 : 1), elapsed,
                 c->resends, c->ignored);
    return 0;
}

static int run_discover(struct controller *c, const struct command_line *cl) {
    struct controller_discovery d;
    int r = controller_discover(c, (unsigned)cl->expect, (unsigned)cl->wait_ms, &d);
    int status = 0;
    if (r < 0) {
        status = fail_socket("discovery");
    } else if (r > 0) {
        char msg[120];
        snprintf(msg, sizeof msg, "%zu of %u nodes answered after %u attempts", d.count,
                 (unsigned)cl->expect, d.attempts);
        status = fail(msg);
    } else {
        report_discovery(stdout, &d, c->ignored);
    }
    free(d.nodes);
    return status;
}

/* A request command (get, setc, seti, setget, inf-req), encoded from its words with TID 0. */
struct request {
    uint8_t esv;
    size_t len;
    uint8_t bytes[FRAME_MAX_DATAGRAM];
};

/* 0, or 2 after naming the bad word on stderr. */
static int build_request(const struct command_line *cl, struct request *r) {
    const char *cmd = cl->words[0];
    int sets_at = 0, epcs_at = 0, nargs = 3; /* where SETS and EPCS are among the words */
    if (strcmp(cmd, "get") == 0) {
        r->esv = ESV_GET, epcs_at = 3;
    } else if (strcmp(cmd, "setc") == 0) {
        r->esv = ESV_SETC, sets_at = 3;
    } else if (strcmp(cmd, "seti") == 0) {
        r->esv = ESV_SETI, sets_at = 3;
    } else if (strcmp(cmd, "setget") == 0) {
        r->esv = ESV_SETGET, sets_at = 3, epcs_at = 4, nargs = 4;
    } else if (strcmp(cmd, "inf-req") == 0) {
        r->esv = ESV_INF_REQ, epcs_at = 3;
    } else {
        return usage_error("unknown command", cmd);
    }
    if (cl->nwords != 1 + nargs)
        return usage_error("wrong number of arguments for", cmd);
    uint32_t deoj;
    if (options_parse_eoj(cl->words[2], &deoj))
        return usage_error("bad EOJ (six hex digits)", cl->words[2]);
    static struct options_set sets[255];
    static uint8_t epcs[255];
    size_t nsets = 0, nepcs = 0;
    if (sets_at && options_parse_sets(cl->words[sets_at], sets, &nsets))
        return usage_error("bad SETS (EPC=HEX,...)", cl->words[sets_at]);
    if (epcs_at && options_parse_epcs(cl->words[epcs_at], epcs, &nepcs))
        return usage_error("bad EPCS (80,82,...)", cl->words[epcs_at]);

    struct frame_writer w;
    frame_writer_begin(&w, r->bytes, sizeof r->bytes, 0, EOJ_CONTROLLER, deoj, r->esv);
    if (sets_at) {
        frame_writer_list(&w);
        for (size_t i = 0; i < nsets; i++)
            frame_writer_prop(&w, sets[i].epc, sets[i].pdc, sets[i].edt);
    }
    if (epcs_at) {
        frame_writer_list(&w);
        for (size_t i = 0; i < nepcs; i++)
            frame_writer_prop(&w, epcs[i], 0, 0);
    }
    r->len = frame_writer_end(&w);
    if (r->len == 0)
        return usage_error("request larger than one datagram", cmd);
    return 0;
}

static int run_request(struct controller *c, struct in_addr host, struct request *r) {
    uint16_t tid = controller_next_tid(c);
    set_tid(r->bytes, tid);
    /* A SetI that succeeds is not answered: it is sent once and waits one timeout for an SNA. */
    unsigned attempts;
    switch (controller_request(c, host, r->bytes, r->len, r->esv == ESV_SETI ? 1 : 1 + c->retries,
                               &attempts)) {
    case CONTROLLER_ANSWERED:
        report_reply(stdout, host, &c->reply, attempts, c->ignored);
        return 0;
    case CONTROLLER_NO_REPLY:
        if (r->esv == ESV_SETI) {
            report_no_reply(stdout, host, tid, attempts, c->ignored);
            return 0;
        }
        return fail_unanswered(c, host, attempts);
    case CONTROLLER_FAILED:
    default:
        return fail_socket("receive");
    }
}

int main(int argc, char **argv) {
    static struct command_line cl;
    int parsed = parse(argc, argv, &cl);
    if (parsed >= 0)
        return parsed;
    const char *cmd = cl.words[0];
    bool discover = strcmp(cmd, "discover") == 0, bench = strcmp(cmd, "bench") == 0;
    if (!discover && !bench && strcmp(cmd, "get") != 0 && strcmp(cmd, "setc") != 0 &&
        strcmp(cmd, "seti") != 0 && strcmp(cmd, "setget") != 0 && strcmp(cmd, "inf-req") != 0)
        return usage_error("unknown command", cmd);
    struct in_addr host = {0};
    if (!discover && cl.nwords < 2)
        return usage_error("no HOST for", cmd);
    if (!discover && options_parse_ipv4(cl.words[1], &host))
        return usage_error("bad HOST (an IPv4 address)", cl.words[1]);
    static struct request req;
    if (discover) {
        if (cl.nwords != 1)
            return usage_error("discover takes no arguments", cl.words[1]);
    } else if (bench) {
        if (cl.nwords != 2)
            return usage_error("bench takes one HOST", cl.words[2]);
        if (!cl.mode || !cl.iterations)
            return usage_error("bench needs --mode and --iterations", 0);
    } else if (build_request(&cl, &req) != 0) {
        return 2;
    }

    /* The command line is good: from here on every outcome is JSON on stdout. */
    static struct controller c;
    char err[160];
    if (controller_open(&c, &cl.cfg, err, sizeof err) != TRANSPORT_OK) {
        fprintf(stderr, "echonet-c-controller: %s\n", err);
        return fail(err);
    }
    int status = discover ? run_discover(&c, &cl)
                 : bench  ? run_bench(&c, host, &cl)
                          : run_request(&c, host, &req);
    fflush(stdout);
    return status;
}
