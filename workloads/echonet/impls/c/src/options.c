#include "options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int options_match(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *word = argv[*i];
    size_t n = strlen(name);
    if (strncmp(word, name, n) != 0)
        return 0;
    if (word[n] == '=') {
        *value = word + n + 1;
        return 1;
    }
    if (word[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

int options_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
    if (*s < '0' || *s > '9') /* strtoull would accept spaces, signs and wrap negatives */
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int options_parse_ipv4(const char *s, struct in_addr *out) {
    return inet_pton(AF_INET, s, out) == 1 ? 0 : -1;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Two hex digits at s as one byte. */
static int hex_byte(const char *s, uint8_t *out) {
    int hi = hex_digit(s[0]);
    int lo = hi < 0 ? -1 : hex_digit(s[1]);
    if (lo < 0)
        return -1;
    *out = (uint8_t)(hi << 4 | lo);
    return 0;
}

int options_parse_eoj(const char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 3; i++) {
        uint8_t b;
        if (hex_byte(s + 2 * i, &b))
            return -1;
        v = v << 8 | b;
    }
    if (s[6] != '\0')
        return -1;
    *out = v;
    return 0;
}

int options_parse_epcs(const char *s, uint8_t epcs[255], size_t *count) {
    size_t n = 0;
    for (;;) {
        if (n == 255 || hex_byte(s, &epcs[n]))
            return -1;
        n++;
        s += 2;
        if (*s == '\0')
            break;
        if (*s++ != ',')
            return -1;
    }
    *count = n;
    return 0;
}

int options_parse_sets(const char *s, struct options_set *sets, size_t *count) {
    size_t n = 0;
    for (;;) {
        if (n == 255)
            return -1;
        struct options_set *set = &sets[n++];
        if (hex_byte(s, &set->epc) || s[2] != '=')
            return -1;
        s += 3;
        set->pdc = 0;
        while (*s != '\0' && *s != ',') {
            if (set->pdc == 255 || hex_byte(s, &set->edt[set->pdc]))
                return -1;
            set->pdc++;
            s += 2;
        }
        if (*s == '\0')
            break;
        s++; /* the comma */
    }
    *count = n;
    return 0;
}
