/* Unit tests of the objects: the exact values of SPEC §5 and the Set rules. */
#include "check.h"
#include "frame.h"
#include "objects.h"

static struct node_objects node;
static const uint8_t localhost[4] = {127, 0, 0, 1};

static int value_is(const struct object *obj, uint8_t epc, const char *text) {
    const struct property *p = object_get(obj, epc);
    if (!p) {
        fprintf(stderr, "  no property %02x\n", epc);
        return 0;
    }
    return bytes_equal(p->edt, p->pdc, text);
}

static void test_node_profile_values(void) {
    objects_init(&node, localhost);
    const struct object *np = &node.list[0];
    CHECK(np->eoj == EOJ_NODE_PROFILE && np->count == 12);
    CHECK(value_is(np, 0x80, "30"));
    CHECK(value_is(np, 0x82, "01 0E 01 00"));
    CHECK(value_is(np, 0x83, "FE FF FF FF 00 00 00 00 00 00 00 00 00 7F 00 00 01"));
    CHECK(value_is(np, 0x8A, "FF FF FF"));
    CHECK(value_is(np, 0x9D, "02 80 D5"));
    CHECK(value_is(np, 0x9E, "00"));
    CHECK(value_is(np, 0x9F, "0C 80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7"));
    CHECK(value_is(np, 0xD3, "00 00 01"));
    CHECK(value_is(np, 0xD4, "00 02"));
    CHECK(value_is(np, 0xD5, "01 01 30 01"));
    CHECK(value_is(np, 0xD6, "01 01 30 01"));
    CHECK(value_is(np, 0xD7, "01 01 30"));
    CHECK(object_get(np, 0x81) == 0 && object_get(np, 0x00) == 0 && object_get(np, 0xFF) == 0);
}

static void test_address_in_0x83(void) {
    objects_init(&node, (const uint8_t[]){10, 201, 0, 2});
    CHECK(value_is(&node.list[0], 0x83, "FE FF FF FF 00 00 00 00 00 00 00 00 00 0A C9 00 02"));
}

static void test_aircon_values(void) {
    objects_init(&node, localhost);
    const struct object *ac = &node.list[1];
    CHECK(ac->eoj == EOJ_AIRCON && ac->count == 18);
    CHECK(value_is(ac, 0x80, "31"));
    CHECK(value_is(ac, 0x81, "00"));
    CHECK(value_is(ac, 0x82, "00 00 52 01"));
    CHECK(value_is(ac, 0x88, "42"));
    CHECK(value_is(ac, 0x8A, "FF FF FF"));
    CHECK(value_is(ac, 0x8F, "42"));
    CHECK(value_is(ac, 0x93, "42"));
    CHECK(value_is(ac, 0x97, "0C 00"));
    CHECK(value_is(ac, 0x98, "07 E6 01 01"));
    CHECK(value_is(ac, 0x9D, "04 80 81 88 B0"));
    CHECK(value_is(ac, 0x9E, "05 80 81 A0 B0 B3"));
    CHECK(value_is(ac, 0x9F, "12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03"));
    CHECK(value_is(ac, 0xA0, "41"));
    CHECK(value_is(ac, 0xB0, "41"));
    CHECK(value_is(ac, 0xB1, "41"));
    CHECK(value_is(ac, 0xB3, "14"));
    CHECK(value_is(ac, 0xBA, "32"));
    CHECK(value_is(ac, 0xBB, "14"));
}

/* Whether a Set of `value` to epc is accepted by SPEC §5's table. */
static int spec_accepts(uint8_t epc, unsigned v) {
    switch (epc) {
    case 0x80:
        return v == 0x30 || v == 0x31;
    case 0x81:
        return 1;
    case 0xA0:
        return (v >= 0x31 && v <= 0x38) || v == 0x41;
    case 0xB0:
        return v >= 0x40 && v <= 0x45;
    case 0xB3:
        return v <= 0x32;
    default:
        return 0;
    }
}

static void test_set_rules_every_value(void) {
    for (unsigned epc = 0; epc < 256; epc++) {
        for (unsigned v = 0; v < 256; v++) {
            objects_init(&node, localhost);
            struct object *ac = &node.list[1];
            const struct property *p = object_get(ac, (uint8_t)epc);
            uint8_t before[OBJECTS_EDT_MAX] = {0}, pdc = p ? p->pdc : 0;
            if (p)
                memcpy(before, p->edt, p->pdc);
            const uint8_t edt = (uint8_t)v;
            int accepted = object_set(ac, (uint8_t)epc, 1, &edt);
            CHECK(accepted == spec_accepts((uint8_t)epc, v));
            if (accepted)
                CHECK(p->pdc == 1 && p->edt[0] == v); /* persists: a later Get returns it */
            else if (p)
                CHECK(p->pdc == pdc && memcmp(p->edt, before, pdc) == 0);
            /* Nothing of the node profile is settable. */
            CHECK(!object_set(&node.list[0], (uint8_t)epc, 1, &edt));
        }
    }
}

static void test_set_needs_pdc_1(void) {
    objects_init(&node, localhost);
    struct object *ac = &node.list[1];
    const uint8_t two[2] = {0x30, 0x30};
    CHECK(!object_set(ac, 0x80, 2, two));
    CHECK(!object_set(ac, 0x80, 0, two));
    CHECK(value_is(ac, 0x80, "31"));
    CHECK(object_set(ac, 0x80, 1, two));
    CHECK(value_is(ac, 0x80, "30"));
}

int main(void) {
    RUN(test_node_profile_values);
    RUN(test_address_in_0x83);
    RUN(test_aircon_values);
    RUN(test_set_rules_every_value);
    RUN(test_set_needs_pdc_1);
    return check_failures ? 1 : 0;
}
