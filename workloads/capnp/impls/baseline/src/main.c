/* capnp-baseline: the floor of the capnp workload (SPEC §7). The three cases on plain C
 * structs in an arena per message, serialised as the canonical content encoding, framed by a
 * u32 length and optionally packed with Cap'n Proto's algorithm: the least work that computes
 * and moves the same content as a Cap'n Proto implementation, with the same command line,
 * modes and report (SPEC §5). */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "modes.h"

static const char USAGE[] = "usage: capnp-baseline CASE MODE REUSE COMPRESSION ITERS\n"
                            "    CASE         carsales | catrank | eval\n"
                            "    MODE         object | bytes | pipe | client | server\n"
                            "    REUSE        reuse | no-reuse\n"
                            "    COMPRESSION  none | packed          (object: none only)\n"
                            "    ITERS        1 .. 1000000000        (timed iterations)\n";

static int usage(const char *why) {
    fprintf(stderr, "capnp-baseline: %s\n%s", why, USAGE);
    return 2;
}

/* The index of `word` in `words`, or -1. */
static int find(const char *word, const char *const *words, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(word, words[i]) == 0)
            return i;
    return -1;
}

/* A decimal 1 .. 1e9, digits only (no sign, no spaces, no leading zero). */
static bool parse_iterations(const char *s, uint64_t *out) {
    if (s[0] < '1' || s[0] > '9' || strlen(s) > 10)
        return false;
    uint64_t v = 0;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return v <= 1000000000;
}

static const char *const CASES[] = {"carsales", "catrank", "eval"};
static const struct case_ops *const CASE_OPS[] = {&carsales_ops, &catrank_ops, &eval_ops};
static const char *const MODES[] = {"object", "bytes", "pipe", "client", "server"};
static const char *const REUSES[] = {"no-reuse", "reuse"};
static const char *const COMPRESSIONS[] = {"none", "packed"};

static void print_report(FILE *f, const struct run *run, char *const *argv,
                         const struct report *r) {
    fprintf(f,
            "{\"program\": \"capnp-baseline\", \"library\": \"none\", \"case\": \"%s\", "
            "\"mode\": \"%s\", \"reuse\": \"%s\", \"compression\": \"%s\", "
            "\"iterations\": %" PRIu64 ", \"warmup\": %" PRIu64 ", \"setup_s\": %.9f, "
            "\"warmup_s\": %.9f, \"elapsed_s\": %.9f, \"cpu_s\": %.6f, "
            "\"request_bytes\": %" PRIu64 ", \"response_bytes\": %" PRIu64
            ", \"checked\": %" PRIu64,
            argv[1], argv[2], argv[3], argv[4], run->iterations, run->warmup, r->setup_s,
            r->warmup_s, r->elapsed_s, r->cpu_s, r->request_bytes, r->response_bytes, r->checked);
    if (run->mode == MODE_PIPE)
        fprintf(f, ", \"server_cpu_s\": %.6f", r->server_cpu_s);
    fputs("}\n", f);
    fflush(f);
}

int main(int argc, char **argv) {
    struct run run = {.argv = argv};
    clock_gettime(CLOCK_MONOTONIC, &run.start);

    if (argc != 6)
        return usage("expected five arguments");
    int c = find(argv[1], CASES, 3), m = find(argv[2], MODES, 5);
    int r = find(argv[3], REUSES, 2), z = find(argv[4], COMPRESSIONS, 2);
    if (c < 0)
        return usage("CASE must be carsales, catrank or eval");
    if (m < 0)
        return usage("MODE must be object, bytes, pipe, client or server");
    if (r < 0)
        return usage("REUSE must be reuse or no-reuse");
    if (z < 0)
        return usage("COMPRESSION must be none or packed");
    if (m == MODE_OBJECT && z == 1)
        return usage("object mode serialises nothing: COMPRESSION must be none");
    if (!parse_iterations(argv[5], &run.iterations))
        return usage("ITERS must be a whole number from 1 to 1000000000");
    run.ops = CASE_OPS[c];
    run.mode = (enum mode)m;
    run.reuse = r == 1;
    run.packed = z == 1;
    run.warmup = run.iterations / 20;

    /* A peer that goes away must be a message and exit status 1, not death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);

    if (run.mode == MODE_SERVER) {
        uint64_t served = modes_server(&run);
        fprintf(stderr, "{\"served\": %" PRIu64 "}\n", served);
        return 0;
    }
    struct report report;
    modes_client(&run, &report);
    /* client: stdout carries the requests, so the report is stderr's last line. */
    print_report(run.mode == MODE_CLIENT ? stderr : stdout, &run, argv, &report);
    return 0;
}
