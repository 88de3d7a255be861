#include "options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>

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
