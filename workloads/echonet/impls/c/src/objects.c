#include "objects.h"

#include "frame.h"

#include <string.h>

static struct property *add(struct object *obj, uint8_t epc, const void *edt, uint8_t pdc) {
    struct property *p = &obj->props[obj->count++];
    *p = (struct property){.epc = epc, .pdc = pdc};
    memcpy(p->edt, edt, pdc);
    obj->slot[epc] = obj->count;
    return p;
}

#define ADD(obj, epc, ...)                                                                         \
    add(obj, epc, (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}))

static void accept_range(struct property *p, unsigned lo, unsigned hi) {
    p->settable = true;
    for (unsigned v = lo; v <= hi; v++)
        epc_set_add(&p->accepts, (uint8_t)v);
}

/* The three maps are derived from the properties themselves, so they cannot disagree with what
 * the object answers; the unit tests compare them with the SPEC's bytes. */
static void add_maps(struct object *obj, const uint8_t *announced, size_t n_announced) {
    struct epc_set announce = {0}, set = {0}, get = {0};
    for (size_t i = 0; i < n_announced; i++)
        epc_set_add(&announce, announced[i]);
    for (unsigned i = 0; i < obj->count; i++) {
        if (obj->props[i].settable)
            epc_set_add(&set, obj->props[i].epc);
        epc_set_add(&get, obj->props[i].epc);
    }
    /* The maps are readable too: they belong in the get map before it is encoded. */
    epc_set_add(&get, 0x9D);
    epc_set_add(&get, 0x9E);
    epc_set_add(&get, 0x9F);
    uint8_t buf[PROPMAP_MAX];
    add(obj, 0x9D, buf, (uint8_t)propmap_encode(&announce, buf));
    add(obj, 0x9E, buf, (uint8_t)propmap_encode(&set, buf));
    add(obj, 0x9F, buf, (uint8_t)propmap_encode(&get, buf));
}

static void init_node_profile(struct object *obj, const uint8_t addr[4]) {
    *obj = (struct object){.eoj = EOJ_NODE_PROFILE};
    ADD(obj, 0x80, 0x30);
    ADD(obj, 0x82, 0x01, 0x0E, 0x01, 0x00);
    struct property *id =
        ADD(obj, 0x83, 0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    memcpy(id->edt + 13, addr, 4);
    ADD(obj, 0x8A, 0xFF, 0xFF, 0xFF);
    ADD(obj, 0xD3, 0x00, 0x00, 0x01);
    ADD(obj, 0xD4, 0x00, 0x02);
    ADD(obj, 0xD5, 0x01, 0x01, 0x30, 0x01);
    ADD(obj, 0xD6, 0x01, 0x01, 0x30, 0x01);
    ADD(obj, 0xD7, 0x01, 0x01, 0x30);
    add_maps(obj, (const uint8_t[]){0x80, 0xD5}, 2);
}

static void init_aircon(struct object *obj) {
    *obj = (struct object){.eoj = EOJ_AIRCON};
    accept_range(ADD(obj, 0x80, 0x31), 0x30, 0x31);
    accept_range(ADD(obj, 0x81, 0x00), 0x00, 0xFF);
    ADD(obj, 0x82, 0x00, 0x00, 0x52, 0x01);
    ADD(obj, 0x88, 0x42);
    ADD(obj, 0x8A, 0xFF, 0xFF, 0xFF);
    ADD(obj, 0x8F, 0x42);
    ADD(obj, 0x93, 0x42);
    ADD(obj, 0x97, 0x0C, 0x00);
    ADD(obj, 0x98, 0x07, 0xE6, 0x01, 0x01);
    struct property *flow = ADD(obj, 0xA0, 0x41);
    accept_range(flow, 0x31, 0x38);
    accept_range(flow, 0x41, 0x41);
    accept_range(ADD(obj, 0xB0, 0x41), 0x40, 0x45);
    ADD(obj, 0xB1, 0x41);
    accept_range(ADD(obj, 0xB3, 0x14), 0x00, 0x32);
    ADD(obj, 0xBA, 0x32);
    ADD(obj, 0xBB, 0x14);
    add_maps(obj, (const uint8_t[]){0x80, 0x81, 0x88, 0xB0}, 4);
}

void objects_init(struct node_objects *node, const uint8_t addr[4]) {
    init_node_profile(&node->list[0], addr);
    init_aircon(&node->list[1]);
}

bool object_set(struct object *obj, uint8_t epc, uint8_t pdc, const uint8_t *edt) {
    uint8_t s = obj->slot[epc];
    if (!s)
        return false;
    struct property *p = &obj->props[s - 1];
    if (!p->settable || pdc != 1 || !epc_set_has(&p->accepts, edt[0]))
        return false;
    p->edt[0] = edt[0];
    return true;
}
