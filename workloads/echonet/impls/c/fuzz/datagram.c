/*
 * libFuzzer target `datagram` (workloads/echonet/fuzz/README.md): the input is one UDP datagram.
 *
 * The node's side is node_main.c's handle(): frame_decode, then responder_handle into reply
 * space of at most responder_reply_bound bytes (transport_reply_space's promise), here a buffer
 * of exactly that size (so ASan sees a write past it), with objects fresh from objects_init. The
 * controller's side is what it does with a datagram it receives: frame_decode, the ESV check of
 * controller_answers, report_reply's JSON (into memory) and, for discovery, the instance list
 * (controller_read_instances); property maps (propmap_decode) are decoded from every EDT.
 *
 * Checked, a failure being an abort():
 * - frame_decode's verdict (ok, malformed, format 2) is the one SPEC §3 gives, as worked out
 *   here by separate code;
 * - the node ignores exactly what SPEC §6 says it ignores (no request ESV, or no object of its
 *   own named by DEOJ), and only a SetI goes unanswered;
 * - an answer is at most the bound, decodes, and is what the controller takes as the answer to
 *   this request: same TID, DEOJ = the request's SEOJ, SEOJ an object of the class asked,
 *   an ESV controller_answers accepts, the request's EPCs in the request's order;
 * - a reply too large for a datagram happens only when the bound is above the datagram limit;
 * - the controller's decoders stay within what they are given.
 */
#include "controller.h"
#include "frame.h"
#include "objects.h"
#include "propmap.h"
#include "report.h"
#include "responder.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what) {
    fprintf(stderr, "fuzz datagram: %s\n", what);
    abort();
}

/* SPEC §3's verdict, walked without frame.c. */
static enum frame_status spec_status(const uint8_t *d, size_t n) {
    if (n < 12 || d[0] != 0x10)
        return FRAME_MALFORMED;
    if (d[1] == 0x82)
        return FRAME_UNSUPPORTED;
    if (d[1] != 0x81)
        return FRAME_MALFORMED;
    uint8_t esv = d[10];
    bool setget = esv == 0x6E || esv == 0x7E || esv == 0x5E;
    size_t at = 11;
    unsigned total = 0;
    for (int list = 0; list < (setget ? 2 : 1); list++) {
        if (at >= n)
            return FRAME_MALFORMED;
        unsigned opc = d[at++];
        total += opc;
        for (unsigned k = 0; k < opc; k++) {
            if (at + 2 > n)
                return FRAME_MALFORMED;
            size_t pdc = d[at + 1];
            at += 2;
            if (at + pdc > n)
                return FRAME_MALFORMED;
            at += pdc;
        }
    }
    if (total == 0 || at != n)
        return FRAME_MALFORMED;
    return FRAME_OK;
}

static bool is_request(uint8_t esv) {
    return esv == 0x60 || esv == 0x61 || esv == 0x62 || esv == 0x63 || esv == 0x6E || esv == 0x74;
}

/* Whether DEOJ names one of the node's objects (SPEC §6). */
static bool addresses_node(uint32_t deoj) {
    uint32_t class = deoj >> 8, instance = deoj & 0xFF;
    return (class == 0x0EF0 || class == 0x0130) && (instance == 0 || instance == 1);
}

/* What the controller does with a datagram it receives that decodes. */
static void controller_side(const struct frame *f) {
    static const uint8_t requests[] = {0x60, 0x61, 0x62, 0x63, 0x6E, 0x74};
    for (size_t i = 0; i < sizeof requests; i++)
        (void)controller_answers(requests[i], f->esv);

    char *json = NULL;
    size_t json_len = 0;
    FILE *out = open_memstream(&json, &json_len);
    if (!out)
        abort();
    struct in_addr host = {htonl(0x7F000001)};
    report_reply(out, host, f, 1, 0);
    fclose(out);
    if (json_len < 2 || json[0] != '{' || memcmp(json + json_len - 2, "}\n", 2) != 0)
        fail("report_reply printed no JSON object line");
    free(json);

    struct controller_node node;
    controller_read_instances(f, &node);
    if (node.count > sizeof node.instances / sizeof node.instances[0])
        fail("more instances than the list holds");

    for (unsigned i = 0; i < (unsigned)f->opc + f->opc_get; i++) {
        uint8_t epcs[256];
        size_t n = propmap_decode(f->props[i].edt, f->props[i].pdc, epcs);
        if (n > 128 || (f->props[i].pdc > 0 && f->props[i].edt[0] < 16 && n >= f->props[i].pdc))
            fail("a property map decodes to more EPCs than it can hold");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct frame req, reply;
    /* The datagram in a buffer of its own size: a read past its end is an ASan report. */
    uint8_t *dgram = malloc(size ? size : 1);
    if (!dgram)
        abort();
    memcpy(dgram, data, size);

    enum frame_status st = frame_decode(dgram, size, &req);
    if (st != spec_status(dgram, size))
        fail("frame_decode's verdict is not SPEC §3's");
    if (st != FRAME_OK) {
        free(dgram);
        return 0;
    }
    controller_side(&req);

    static struct node_objects node;
    objects_init(&node, (const uint8_t[]){127, 0, 0, 1});
    size_t bound = responder_reply_bound(&req);
    size_t cap = bound < FRAME_MAX_DATAGRAM ? bound : FRAME_MAX_DATAGRAM;
    uint8_t *out = malloc(cap);
    if (!out)
        abort();
    size_t len = 0;
    enum responder_outcome outcome = responder_handle(&node, &req, out, cap, &len);
    bool wanted = is_request(req.esv) && addresses_node(req.deoj);
    switch (outcome) {
    case RESPONDER_IGNORED:
        if (wanted)
            fail("a request to the node was ignored");
        break;
    case RESPONDER_NO_REPLY:
        if (!wanted || req.esv != 0x60)
            fail("no reply to a request other than SetI");
        break;
    case RESPONDER_TOO_LARGE:
        if (!wanted || bound <= FRAME_MAX_DATAGRAM)
            fail("a reply within its bound did not fit");
        break;
    case RESPONDER_REPLY: {
        if (!wanted)
            fail("an answer to what is no request to the node");
        if (len == 0 || len > cap)
            fail("an answer longer than its bound");
        if (frame_decode(out, len, &reply) != FRAME_OK)
            fail("the answer does not decode");
        if (reply.tid != req.tid || reply.deoj != req.seoj ||
            (reply.seoj >> 8) != (req.deoj >> 8) || (reply.seoj & 0xFF) != 1)
            fail("the answer's TID or EOJs do not match the request");
        if (!controller_answers(req.esv, reply.esv))
            fail("the controller would not take the answer for this request");
        if (reply.opc != req.opc || reply.opc_get != req.opc_get)
            fail("the answer has other property counts than the request");
        for (unsigned i = 0; i < (unsigned)req.opc + req.opc_get; i++)
            if (reply.props[i].epc != req.props[i].epc)
                fail("the answer's EPCs are not the request's, in order");
        controller_side(&reply);
        break;
    }
    }
    free(out);
    free(dgram);
    return 0;
}
