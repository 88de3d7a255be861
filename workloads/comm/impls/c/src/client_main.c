/*
 * comm-c-client: the seed's Test4 (stream) and test3 (rtt) on top of the Connector.
 *
 *   comm-c-client --port PORT [--host 127.0.0.1] [--clients N] [--messages M] [--size BYTES]
 *                 [--type T] [--mode stream|rtt] [--end end|quit|eof] [--warmup W]
 *
 * stream: per client, a poster thread posts M messages without waiting and then ends the
 * session; a checker thread takes the M replies and checks each (type, length, bytes).
 * rtt: per client one thread posts a message and waits for its reply before the next.
 * All connections are open before the clock starts; throughput counts the content bytes of all
 * messages from the first post to the last reply. One JSON object on stdout; exit 1 on any
 * error.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers and clock_gettime under -std=c17 too */
#include "connector.h"
#include "frame.h"
#include "options.h"
#include "pattern.h"

#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROGRAM_STACK (256 * 1024)

struct options {
    const char *host;
    uint64_t port, clients, messages, size, type, warmup;
    bool rtt;
    enum connector_end end;
};

struct client {
    uint64_t id;
    struct connector *conn;
    pthread_t poster, checker;
    uint64_t first_ns, last_ns; /* first post, last reply */
    uint64_t *latencies;        /* rtt: one per measured message */
};

static struct options opt;
static const unsigned char *table;
static pthread_barrier_t start_line;
static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_error[256];

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(struct client *cl, const char *what) {
    pthread_mutex_lock(&error_lock);
    if (!first_error[0])
        snprintf(first_error, sizeof first_error, "client %llu: %s", (unsigned long long)cl->id,
                 what);
    pthread_mutex_unlock(&error_lock);
    connector_abort(cl->conn); /* unblocks this client's other thread */
}

/* Posts message m of client cl; false once the connection cannot send. */
static bool post(struct client *cl, uint64_t m) {
    struct comm_message msg = {.type = (uint8_t)opt.type, .len = opt.size};
    if (opt.size > 0) {
        msg.body = malloc(opt.size);
        if (!msg.body) {
            fail(cl, "out of memory");
            return false;
        }
        memcpy(msg.body, table + pattern_offset(cl->id, m), opt.size);
    }
    return connector_post(cl->conn, &msg) == 0;
}

/* Takes the reply to message m and checks it; false (error recorded) if it is not right. */
static bool check_reply(struct client *cl, uint64_t m) {
    char why[200];
    struct comm_message r;
    int rc = connector_get(cl->conn, &r);
    if (rc != 1) {
        if (rc == 0)
            snprintf(why, sizeof why, "connection closed after %llu of %llu replies",
                     (unsigned long long)m, (unsigned long long)opt.messages);
        else
            snprintf(why, sizeof why, "%s", connector_error(cl->conn));
        fail(cl, why);
        return false;
    }
    bool ok = false;
    if (r.type != FRAME_REPLY)
        snprintf(why, sizeof why, "reply %llu has type %u", (unsigned long long)m, r.type);
    else if (r.len != opt.size)
        snprintf(why, sizeof why, "reply %llu has length %llu", (unsigned long long)m,
                 (unsigned long long)r.len);
    else if (r.len > 0 && memcmp(r.body, table + pattern_offset(cl->id, m), r.len) != 0)
        snprintf(why, sizeof why, "reply %llu has the wrong body", (unsigned long long)m);
    else
        ok = true;
    message_free(&r);
    if (!ok)
        fail(cl, why);
    return ok;
}

/* After the last reply: the server's END or EOF, nothing else. */
static void expect_end(struct client *cl) {
    char why[200];
    struct comm_message r;
    int rc = connector_get(cl->conn, &r);
    if (rc == 1) {
        snprintf(why, sizeof why, "unexpected message of type %u after the last reply", r.type);
        message_free(&r);
        fail(cl, why);
    } else if (rc < 0) {
        snprintf(why, sizeof why, "%s", connector_error(cl->conn));
        fail(cl, why);
    }
}

static void *poster_main(void *arg) {
    struct client *cl = arg;
    pthread_barrier_wait(&start_line);
    cl->first_ns = now_ns();
    for (uint64_t m = 0; m < opt.messages; m++)
        if (!post(cl, m))
            return NULL; /* the checker reports why */
    connector_close(cl->conn, opt.end);
    return NULL;
}

static void *checker_main(void *arg) {
    struct client *cl = arg;
    pthread_barrier_wait(&start_line);
    for (uint64_t m = 0; m < opt.messages; m++)
        if (!check_reply(cl, m))
            return NULL;
    cl->last_ns = now_ns();
    expect_end(cl);
    return NULL;
}

static void *rtt_main(void *arg) {
    struct client *cl = arg;
    pthread_barrier_wait(&start_line);
    uint64_t total = opt.warmup + opt.messages;
    for (uint64_t m = 0; m < total; m++) {
        uint64_t t0 = now_ns();
        if (m == opt.warmup)
            cl->first_ns = t0;
        if (!post(cl, m) || !check_reply(cl, m))
            return NULL;
        if (m >= opt.warmup)
            cl->latencies[m - opt.warmup] = now_ns() - t0;
    }
    cl->last_ns = now_ns();
    connector_close(cl->conn, opt.end);
    expect_end(cl);
    return NULL;
}

static int usage(const char *why) {
    fprintf(stderr,
            "comm-c-client: %s (usage: comm-c-client --port PORT [--host 127.0.0.1] [--clients "
            "N] [--messages M] [--size BYTES] [--type T] [--mode stream|rtt] [--end "
            "end|quit|eof] [--warmup W])\n",
            why);
    return 2;
}

static int parse_options(int argc, char **argv) {
    opt = (struct options){.host = "127.0.0.1", .clients = 1, .messages = 1000, .size = 4096};
    for (int i = 1; i < argc; i += 2) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return usage("missing value");
        int bad = 0;
        if (strcmp(o, "--port") == 0)
            bad = options_parse_u64(v, 1, 65535, &opt.port);
        else if (strcmp(o, "--host") == 0) {
            struct in_addr unused;
            bad = options_parse_ipv4(v, &unused);
            opt.host = v;
        } else if (strcmp(o, "--clients") == 0)
            bad = options_parse_u64(v, 1, 100000, &opt.clients);
        else if (strcmp(o, "--messages") == 0)
            bad = options_parse_u64(v, 0, UINT64_MAX / 2, &opt.messages);
        else if (strcmp(o, "--size") == 0)
            bad = options_parse_u64(v, 0, FRAME_DEFAULT_MAX_BODY, &opt.size);
        else if (strcmp(o, "--warmup") == 0)
            bad = options_parse_u64(v, 0, UINT64_MAX / 2, &opt.warmup);
        else if (strcmp(o, "--type") == 0)
            bad = options_parse_u64(v, 0, 255, &opt.type) || frame_ends_session((uint8_t)opt.type);
        else if (strcmp(o, "--mode") == 0) {
            bad = strcmp(v, "rtt") != 0 && strcmp(v, "stream") != 0;
            opt.rtt = strcmp(v, "rtt") == 0;
        } else if (strcmp(o, "--end") == 0) {
            opt.end = strcmp(v, "quit") == 0  ? CONNECTOR_QUIT
                      : strcmp(v, "eof") == 0 ? CONNECTOR_EOF
                                              : CONNECTOR_END;
            bad = opt.end == CONNECTOR_END && strcmp(v, "end") != 0;
        } else
            return usage("unknown argument");
        if (bad) {
            char why[64];
            snprintf(why, sizeof why, "bad %s", o);
            return usage(why);
        }
    }
    if (opt.port == 0)
        return usage("--port is required");
    return 0;
}

static void print_error(const char *e) {
    /* JSON string escaping for the few characters an error message could hold. */
    fputs("{\"error\": \"", stdout);
    for (; *e; e++) {
        if (*e == '"' || *e == '\\')
            printf("\\%c", *e);
        else if ((unsigned char)*e < 0x20)
            printf("\\u%04x", *e);
        else
            putchar(*e);
    }
    puts("\"}");
    fflush(stdout);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array, in microseconds. */
static double percentile_us(const uint64_t *sorted, size_t n, double p) {
    size_t rank = (size_t)(p * (double)n + 0.999999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return (double)sorted[rank - 1] / 1000.0;
}

static void print_result(struct client *clients) {
    uint64_t first = UINT64_MAX, last = 0;
    for (uint64_t c = 0; c < opt.clients; c++) {
        if (clients[c].first_ns < first)
            first = clients[c].first_ns;
        if (clients[c].last_ns > last)
            last = clients[c].last_ns;
    }
    uint64_t count = opt.clients * opt.messages;
    uint64_t bytes = count * opt.size;
    double elapsed = last > first ? (double)(last - first) / 1e9 : 1e-9;
    printf("{\"clients\":%llu,\"messages\":%llu,\"size\":%llu,\"bytes\":%llu,"
           "\"elapsed_s\":%.6f,\"mb_per_s\":%.3f,\"msgs_per_s\":%.1f",
           (unsigned long long)opt.clients, (unsigned long long)opt.messages,
           (unsigned long long)opt.size, (unsigned long long)bytes, elapsed,
           (double)bytes / 1e6 / elapsed, (double)count / elapsed);
    if (opt.rtt && count > 0) {
        uint64_t *all = malloc(count * sizeof *all);
        for (uint64_t c = 0; c < opt.clients; c++)
            memcpy(all + c * opt.messages, clients[c].latencies, opt.messages * sizeof *all);
        qsort(all, count, sizeof *all, cmp_u64);
        printf(",\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,"
               "\"max\":%.1f}",
               percentile_us(all, count, 0.50), percentile_us(all, count, 0.90),
               percentile_us(all, count, 0.99), percentile_us(all, count, 0.999),
               (double)all[count - 1] / 1000.0);
        free(all);
    }
    puts("}");
    fflush(stdout);
}

static int start(pthread_t *t, void *(*fn)(void *), void *arg) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, PROGRAM_STACK);
    int rc = pthread_create(t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc;
}

int main(int argc, char **argv) {
    int rc = parse_options(argc, argv);
    if (rc)
        return rc;
    /* Message bodies are allocated by one thread and freed by another, thousands a second:
     * left to its defaults, glibc gives the memory back to the kernel and faults it in again
     * over and over (a tenth of the client's time in a profile). Keep it instead. */
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
    mallopt(M_MMAP_THRESHOLD, 128 << 20);
    unsigned char *pattern = pattern_table(opt.size);
    struct client *clients = calloc(opt.clients, sizeof *clients);
    if (!pattern || !clients) {
        print_error("out of memory");
        return 1;
    }
    table = pattern;
    char err[200];
    for (uint64_t c = 0; c < opt.clients; c++) {
        clients[c].id = c;
        if (opt.rtt && !(clients[c].latencies = malloc((opt.messages + 1) * sizeof(uint64_t))))
            snprintf(err, sizeof err, "out of memory");
        else
            clients[c].conn = connector_open(opt.host, (uint16_t)opt.port, err, sizeof err);
        if (!clients[c].conn) {
            print_error(err);
            for (uint64_t k = 0; k <= c; k++) {
                if (clients[k].conn)
                    connector_free(clients[k].conn); /* aborts: the session never started */
                free(clients[k].latencies);
            }
            free(clients);
            free(pattern);
            return 1;
        }
    }
    /* Every thread waits at the start line, so the clock starts with all of them ready. */
    unsigned threads = (unsigned)opt.clients * (opt.rtt ? 1u : 2u);
    pthread_barrier_init(&start_line, NULL, threads);
    for (uint64_t c = 0; c < opt.clients; c++) {
        struct client *cl = &clients[c];
        int bad =
            opt.rtt ? start(&cl->poster, rtt_main, cl)
                    : start(&cl->poster, poster_main, cl) || start(&cl->checker, checker_main, cl);
        if (bad) {
            print_error("cannot start the client threads");
            return 1; /* exit(3) ends the threads waiting at the start line */
        }
    }
    for (uint64_t c = 0; c < opt.clients; c++) {
        pthread_join(clients[c].poster, NULL);
        if (!opt.rtt)
            pthread_join(clients[c].checker, NULL);
    }
    for (uint64_t c = 0; c < opt.clients; c++)
        connector_free(clients[c].conn);
    int status = 0;
    if (first_error[0]) {
        print_error(first_error);
        status = 1;
    } else {
        print_result(clients);
    }
    for (uint64_t c = 0; c < opt.clients; c++)
        free(clients[c].latencies);
    free(clients);
    free(pattern);
    pthread_barrier_destroy(&start_line);
    return status;
}
