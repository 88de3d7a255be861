/* Strict number and address parsing for the command lines of both programs. */
#ifndef COMM_OPTIONS_H
#define COMM_OPTIONS_H

#include <netinet/in.h>
#include <stdint.h>

/* Parses a decimal number in [lo, hi]; 0 on success, -1 on anything else (signs, spaces,
 * trailing characters, overflow). */
int options_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* Parses an IPv4 address literal (dotted decimal, as inet_pton takes it); 0 on success, -1 on
 * anything else: host names, the empty string (which some socket APIs read as "any address"),
 * a part above 255. */
int options_parse_ipv4(const char *s, struct in_addr *out);

#endif
