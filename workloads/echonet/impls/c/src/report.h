/*
 * The controller's JSON output (SPEC §8): one object per command on one line. The shapes are
 * small and fixed, so a careful printer does: every string is either hex, a dotted quad, a
 * fixed word or an error message (escaped).
 */
#ifndef ECHONET_REPORT_H
#define ECHONET_REPORT_H

#include "controller.h"
#include "frame.h"

#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>

/* A reply: host, tid, seoj, deoj, esv, then "properties" (or "set" and "get" for the SetGet
 * family), attempts and ignored. */
void report_reply(FILE *f, struct in_addr host, const struct frame *reply, unsigned attempts,
                  uint64_t ignored);

/* A SetI that got no SetI_SNA: the same shape with "esv": null and no properties. */
void report_no_reply(FILE *f, struct in_addr host, uint16_t tid, unsigned attempts,
                     uint64_t ignored);

void report_discovery(FILE *f, const struct controller_discovery *d, uint64_t ignored);

void report_bench(FILE *f, const char *mode, uint64_t iterations, uint64_t requests,
                  double elapsed_s, uint64_t retries, uint64_t ignored);

/* {"error": message} */
void report_error(FILE *f, const char *message);

#endif
