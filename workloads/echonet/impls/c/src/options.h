/*
 * Strict parsing of the words of both command lines (SPEC §7, §8): numbers, IPv4 addresses and
 * the controller's hex arguments. Each returns 0 on success and -1 on anything else, so the
 * programs can name the bad option and exit 2.
 */
#ifndef ECHONET_OPTIONS_H
#define ECHONET_OPTIONS_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* Whether argv[*i] is the option `name` ("--port"), given as "--port 3610" or "--port=3610".
 * 1: it is, *value is its value and *i is on the last word used; 0: it is another word; -1: it
 * is, but the value is missing. */
int options_match(int argc, char **argv, int *i, const char *name, const char **value);

/* A decimal number in [lo, hi]: no sign, no space, no trailing character, no overflow. */
int options_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* A dotted-quad IPv4 address (inet_pton's strict form, not inet_aton's "127.1"). */
int options_parse_ipv4(const char *s, struct in_addr *out);

/* An EOJ: exactly six hex digits, either case ("0ef001"). */
int options_parse_eoj(const char *s, uint32_t *out);

/* EPCS: a comma-separated list of two-digit hex EPCs ("80,82"), 1 to 255 of them. */
int options_parse_epcs(const char *s, uint8_t epcs[255], size_t *count);

/* One property to set: its EPC and value. */
struct options_set {
    uint8_t epc;
    uint8_t pdc;
    uint8_t edt[255];
};

/* SETS: a comma-separated list of EPC=HEXDATA ("80=30,b3=19"), 1 to 255 of them; HEXDATA has
 * an even number of hex digits, at most 255 bytes, and may be empty (PDC 0). */
int options_parse_sets(const char *s, struct options_set *sets, size_t *count);

#endif
