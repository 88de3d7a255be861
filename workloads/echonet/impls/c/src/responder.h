/*
 * One request in, its reply (or none) out (SPEC §6): Get, SetI, SetC, SetGet, INF_REQ and INFC,
 * addressed to an object of the node (instance 0x01 or 0x00). Pure: no sockets, so the unit
 * tests check every reply byte.
 */
#ifndef ECHONET_RESPONDER_H
#define ECHONET_RESPONDER_H

#include "frame.h"
#include "objects.h"

#include <stddef.h>
#include <stdint.h>

enum responder_outcome {
    RESPONDER_REPLY,     /* a request; the reply is in out[0 .. *out_len) */
    RESPONDER_NO_REPLY,  /* a request that needs no reply (a SetI that succeeded) */
    RESPONDER_IGNORED,   /* not a request, or for no object of this node */
    RESPONDER_TOO_LARGE, /* a request whose reply does not fit in one datagram (cap bytes) */
};

/* An upper bound of the length of the reply to `req`: a property comes back with at most its
 * request's EDT (a refused Set) or an object's longest value (a Get). */
size_t responder_reply_bound(const struct frame *req);

/* Answers `req`, applying its Sets to `node`. */
enum responder_outcome responder_handle(struct node_objects *node, const struct frame *req,
                                        uint8_t *out, size_t cap, size_t *out_len);

#endif
