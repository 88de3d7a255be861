#include "report.h"

#include <arpa/inet.h>
#include <inttypes.h>

static void hex(FILE *f, const uint8_t *p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    putc('"', f);
    for (size_t i = 0; i < n; i++) {
        putc(digits[p[i] >> 4], f);
        putc(digits[p[i] & 0x0F], f);
    }
    putc('"', f);
}

static void eoj(FILE *f, uint32_t v) {
    const uint8_t b[3] = {(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    hex(f, b, 3);
}

static void address(FILE *f, struct in_addr a) {
    char s[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a, s, sizeof s);
    fprintf(f, "\"%s\"", s);
}

static void props(FILE *f, const char *name, const struct frame_prop *p, unsigned n) {
    fprintf(f, ", \"%s\": [", name);
    for (unsigned i = 0; i < n; i++) {
        fputs(i ? ", {\"epc\": " : "{\"epc\": ", f);
        hex(f, &p[i].epc, 1);
        fputs(", \"edt\": ", f);
        hex(f, p[i].edt, p[i].pdc);
        putc('}', f);
    }
    putc(']', f);
}

static void head(FILE *f, struct in_addr host, uint16_t tid) {
    const uint8_t t[2] = {(uint8_t)(tid >> 8), (uint8_t)tid};
    fputs("{\"host\": ", f);
    address(f, host);
    fputs(", \"tid\": ", f);
    hex(f, t, 2);
}

static void tail(FILE *f, unsigned attempts, uint64_t ignored) {
    fprintf(f, ", \"attempts\": %u, \"ignored\": %" PRIu64 "}\n", attempts, ignored);
}

void report_reply(FILE *f, struct in_addr host, const struct frame *reply, unsigned attempts,
                  uint64_t ignored) {
    head(f, host, reply->tid);
    fputs(", \"seoj\": ", f);
    eoj(f, reply->seoj);
    fputs(", \"deoj\": ", f);
    eoj(f, reply->deoj);
    fputs(", \"esv\": ", f);
    hex(f, &reply->esv, 1);
    if (frame_esv_is_setget(reply->esv)) {
        props(f, "set", reply->props, reply->opc);
        props(f, "get", reply->props + reply->opc, reply->opc_get);
    } else {
        props(f, "properties", reply->props, reply->opc);
    }
    tail(f, attempts, ignored);
}

void report_no_reply(FILE *f, struct in_addr host, uint16_t tid, unsigned attempts,
                     uint64_t ignored) {
    head(f, host, tid);
    fputs(", \"seoj\": null, \"deoj\": null, \"esv\": null, \"properties\": []", f);
    tail(f, attempts, ignored);
}

void report_discovery(FILE *f, const struct controller_discovery *d, uint64_t ignored) {
    fputs("{\"nodes\": [", f);
    for (size_t i = 0; i < d->count; i++) {
        const struct controller_node *n = &d->nodes[i];
        fputs(i ? ", {\"host\": " : "{\"host\": ", f);
        address(f, n->host);
        fputs(", \"eoj\": ", f);
        eoj(f, n->eoj);
        fputs(", \"instances\": [", f);
        for (unsigned k = 0; k < n->count; k++) {
            if (k)
                fputs(", ", f);
            eoj(f, n->instances[k]);
        }
        fputs("]}", f);
    }
    fprintf(f, "], \"elapsed_s\": %.6f, \"attempts\": %u, \"ignored\": %" PRIu64 "}\n",
            d->elapsed_s, d->attempts, ignored);
}

void report_bench(FILE *f, const char *mode, uint64_t iterations, uint64_t requests,
                  double elapsed_s, uint64_t retries, uint64_t ignored) {
    fprintf(f,
            "{\"mode\": \"%s\", \"iterations\": %" PRIu64 ", \"requests\": %" PRIu64
            ", \"elapsed_s\": %.6f, \"retries\": %" PRIu64 ", \"ignored\": %" PRIu64 "}\n",
            mode, iterations, requests, elapsed_s, retries, ignored);
}

void report_error(FILE *f, const char *message) {
    fputs("{\"error\": \"", f);
    for (const unsigned char *p = (const unsigned char *)message; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            putc(*p, f);
    }
    fputs("\"}\n", f);
}
