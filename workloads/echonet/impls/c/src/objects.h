/*
 * The node's objects (SPEC §5): the node profile 0x0EF001 and a home air conditioner 0x013001,
 * their properties with the exact values of the SPEC, and the rules a Set must pass.
 *
 * Values live in fixed arrays (no EDT is longer than 17 bytes), each object with a 256-entry
 * table from EPC to property, so a lookup on the hot path is one load.
 */
#ifndef ECHONET_OBJECTS_H
#define ECHONET_OBJECTS_H

#include "propmap.h"

#include <stdbool.h>
#include <stdint.h>

#define OBJECTS_EDT_MAX 17 /* 0x83, the identification number */
#define OBJECTS_MAX_PROPS 24
#define OBJECTS_COUNT 2 /* the node profile and the air conditioner */

struct property {
    uint8_t epc;
    uint8_t pdc;
    uint8_t edt[OBJECTS_EDT_MAX];
    bool settable;
    struct epc_set accepts; /* settable: the one-byte values a Set may write (bit = value) */
};

struct object {
    uint32_t eoj;
    uint8_t count;
    uint8_t slot[256]; /* EPC -> index + 1 in props; 0: the object has no such property */
    struct property props[OBJECTS_MAX_PROPS];
};

/* Every object of one node. Each object is of a different class, which the responder relies on
 * (a DEOJ with instance 0x00 then selects at most one object). */
struct node_objects {
    struct object list[OBJECTS_COUNT];
};

/* Sets up both objects with their initial values; addr is the node's IPv4 address (network
 * order), the last 4 bytes of 0x83. */
void objects_init(struct node_objects *node, const uint8_t addr[4]);

/* The property `epc` of `obj`, or NULL: every property of these objects is readable. */
static inline const struct property *object_get(const struct object *obj, uint8_t epc) {
    uint8_t s = obj->slot[epc];
    return s ? &obj->props[s - 1] : 0;
}

/* A Set of one property: applied and true when the property is settable, pdc is 1 and the value
 * is accepted; false (and nothing changed) otherwise. */
bool object_set(struct object *obj, uint8_t epc, uint8_t pdc, const uint8_t *edt);

#endif
