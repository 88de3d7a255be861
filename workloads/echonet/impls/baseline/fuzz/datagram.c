/*
 * libFuzzer target `datagram` (workloads/echonet/fuzz/README.md): the input is one UDP datagram
 * received by the floor's node.
 *
 * How it reaches the code: this file includes ../main.c itself (main() renamed), so the floor
 * keeps its one file. The replies are computed once by precompute() (ADDR 192.0.2.7), then each
 * datagram goes through what main()'s receive loop does with it: answer() picks the reply's
 * precomputed tail or counts the datagram as dropped or ignored, and reply_head() rewrites the
 * request's first 10 bytes into the reply's head. The datagram sits in a buffer of exactly its
 * size, so a read past its end is an AddressSanitizer report. A datagram above 64 KiB never gets
 * here (the node's receive buffer marks it truncated, and drops it). The floor has no controller
 * program, so there is no second decoder to feed.
 *
 * Checked, a failure being an abort(), by an ECHONET Lite decoder that shares no code with the
 * floor (SPEC §3, §6):
 * - each datagram is counted exactly once: as a request, ignored, malformed or format 2;
 *   malformed and format 2 exactly as SPEC §3 classifies its header;
 * - a datagram answered is a well-formed format-1 Get (ESV 0x62) of the node profile (DEOJ
 *   0x0EF001 or 0x0EF000), with properties of PDC 0 and nothing after them;
 * - its reply decodes: format 1, the request's TID, SEOJ 0x0EF001, DEOJ the request's SEOJ,
 *   Get_Res (0x72), the request's EPCs in its order, each with a value that fits (0x83 ending in
 *   ADDR), and no byte after the last property.
 */
#define _GNU_SOURCE /* as main.c: recvmmsg, sendmmsg, IP_MULTICAST_ALL */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define main echonet_baseline_node_main
#include "../main.c"
#undef main

static const uint8_t ADDR[4] = {192, 0, 2, 7};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    precompute(ADDR);
    return 0;
}

/* A format-1 frame's properties from offset 12: the count, or -1 if they do not fill it
 * exactly. `epcs` gets the EPCs; with `empty`, every PDC must be 0 (a Get's). */
static int properties(const uint8_t *d, size_t len, uint8_t epcs[255], int empty) {
    unsigned opc = d[11];
    size_t at = 12;
    for (unsigned k = 0; k < opc; k++) {
        if (len - at < 2)
            return -1;
        uint8_t pdc = d[at + 1];
        if (empty ? pdc != 0 : pdc == 0)
            return -1;
        if (len - at - 2 < pdc)
            return -1;
        epcs[k] = d[at];
        at += 2 + (size_t)pdc;
    }
    return opc == 0 || at != len ? -1 : (int)opc;
}

static void check_reply(const uint8_t *request, size_t request_len, const uint8_t *reply,
                        size_t len) {
    uint8_t asked[255], got[255];
    int n = properties(request, request_len, asked, 1);
    if (n < 0 || request[10] != 0x62)
        abort();
    if (len < 12 || reply[0] != 0x10 || reply[1] != 0x81 || reply[10] != 0x72)
        abort();
    if (memcmp(reply + 2, request + 2, 2) != 0) /* TID */
        abort();
    if (memcmp(reply + 4, "\x0E\xF0\x01", 3) != 0) /* SEOJ: the node profile */
        abort();
    if (memcmp(reply + 7, request + 4, 3) != 0) /* DEOJ: the requester */
        abort();
    if (properties(reply, len, got, 0) != n || memcmp(got, asked, (size_t)n) != 0)
        abort();
    /* 0x83, the identification number: FE, then 16 bytes ending in ADDR. */
    for (size_t at = 12; at < len; at += 2 + reply[at + 1])
        if (reply[at] == 0x83 && (reply[at + 1] != 17 || reply[at + 2] != 0xFE ||
                                  memcmp(reply + at + 2 + 13, ADDR, 4) != 0))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > RECV_BUFFER)
        return 0;
    /* The datagram in a buffer of its own size (malloc(0) may be NULL: one byte more then). */
    uint8_t *d = malloc(size ? size : 1);
    if (!d)
        abort();
    memcpy(d, data, size);

    struct counters c = {0};
    size_t tail_len = 0;
    const uint8_t *tail = answer(d, size, &tail_len, &c);

    int malformed = size < 12 || data[0] != 0x10 || (data[1] != 0x81 && data[1] != 0x82);
    int format2 = !malformed && data[1] == 0x82;
    if (c.received != 0 || c.replies != 0 || c.send_errors != 0 ||
        c.requests + c.ignored + c.dropped_malformed + c.dropped_format2 != 1 ||
        c.dropped_malformed != (uint64_t)malformed || c.dropped_format2 != (uint64_t)format2 ||
        c.requests != (tail != NULL))
        abort();
    if (tail != NULL) {
        if (memcmp(data + 7, "\x0E\xF0", 2) != 0 || (data[9] != 0x01 && data[9] != 0x00))
            abort();
        reply_head(d);
        uint8_t *reply = malloc(HEAD + tail_len);
        if (!reply)
            abort();
        memcpy(reply, d, HEAD);
        memcpy(reply + HEAD, tail, tail_len);
        check_reply(data, size, reply, HEAD + tail_len);
        free(reply);
    }
    free(d);
    return 0;
}
