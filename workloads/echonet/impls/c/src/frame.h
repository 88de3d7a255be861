/*
 * The ECHONET Lite frame, format 1 (SPEC.md §3):
 *
 *   offset 0  EHD1 0x10 | 1 EHD2 0x81 | 2 TID (2) | 4 SEOJ (3) | 7 DEOJ (3) | 10 ESV | 11 OPC
 *   then OPC x (EPC, PDC, EDT[PDC]); the SetGet family carries OPCSet + its properties, then
 *   OPCGet + its properties.
 *
 * This file is the only place that knows the layout: decoding walks a datagram with bounds
 * checks and never sizes anything from OPC or PDC before comparing it with the bytes received;
 * encoding goes through a writer that never writes past its buffer.
 */
#ifndef ECHONET_FRAME_H
#define ECHONET_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_EHD1 0x10
#define FRAME_FORMAT1 0x81
#define FRAME_FORMAT2 0x82

#define FRAME_HEADER_SIZE 11     /* EHD1 .. ESV: everything before the first OPC */
#define FRAME_MAX_PROPS 255      /* OPC is one byte */
#define FRAME_MAX_DATAGRAM 65507 /* the largest UDP payload IPv4 can carry */
#define FRAME_RECV_BUFFER 65536  /* SPEC §2: any legal datagram fits, so a truncated one is bad */

/* ESV (SPEC §3). */
enum esv {
    ESV_SETI = 0x60,
    ESV_SETC = 0x61,
    ESV_GET = 0x62,
    ESV_INF_REQ = 0x63,
    ESV_SETGET = 0x6E,
    ESV_SET_RES = 0x71,
    ESV_GET_RES = 0x72,
    ESV_INF = 0x73,
    ESV_INFC = 0x74,
    ESV_INFC_RES = 0x7A,
    ESV_SETGET_RES = 0x7E,
    ESV_SETI_SNA = 0x50,
    ESV_SETC_SNA = 0x51,
    ESV_GET_SNA = 0x52,
    ESV_INF_SNA = 0x53,
    ESV_SETGET_SNA = 0x5E,
};

/* EOJ as 0x00GGCCII: class group, class, instance. */
#define EOJ_NODE_PROFILE 0x0EF001u
#define EOJ_AIRCON 0x013001u
#define EOJ_CONTROLLER 0x05FF01u
#define EOJ_CLASS(eoj) ((eoj) >> 8)
#define EOJ_INSTANCE(eoj) ((eoj)&0xFFu)

/* One property of a decoded frame; edt points into the datagram. */
struct frame_prop {
    uint8_t epc;
    uint8_t pdc;
    const uint8_t *edt;
};

/* A decoded format-1 frame. props[0 .. opc) are the properties (the set part for the SetGet
 * family), props[opc .. opc + opc_get) the get part of the SetGet family. The array is sized for
 * the largest legal frame, so a decoder that has checked OPC against the bytes can fill it. */
struct frame {
    uint16_t tid; /* opaque: only ever copied back */
    uint32_t seoj;
    uint32_t deoj;
    uint8_t esv;
    uint8_t opc;
    uint8_t opc_get;
    struct frame_prop props[2 * FRAME_MAX_PROPS];
};

enum frame_status {
    FRAME_OK,
    FRAME_MALFORMED,   /* counted in dropped_malformed */
    FRAME_UNSUPPORTED, /* format 2: well-formed, not ours; counted in dropped_format2 */
};

/* Decodes data[0 .. len). On FRAME_OK `out` is filled and its EDTs point into data. */
enum frame_status frame_decode(const uint8_t *data, size_t len, struct frame *out);

/* ESVs whose frames carry two property lists (OPCSet, OPCGet). */
bool frame_esv_is_setget(uint8_t esv);

/* Builds a frame in a caller's buffer. Writes past `cap` never happen: the writer remembers that
 * the frame did not fit and frame_writer_end returns 0. */
struct frame_writer {
    uint8_t *buf;
    size_t cap;
    size_t len;
    size_t opc_at; /* where the OPC of the list being written is */
    bool overflow;
};

/* Writes the 11 header bytes. */
void frame_writer_begin(struct frame_writer *w, uint8_t *buf, size_t cap, uint16_t tid,
                        uint32_t seoj, uint32_t deoj, uint8_t esv);
/* Starts a property list: an OPC that counts the frame_writer_prop calls that follow. */
void frame_writer_list(struct frame_writer *w);
void frame_writer_prop(struct frame_writer *w, uint8_t epc, uint8_t pdc, const uint8_t *edt);
/* The ESV is often known only once every property has been tried. */
void frame_writer_set_esv(struct frame_writer *w, uint8_t esv);
/* The frame's length, or 0 if it did not fit in the buffer. */
size_t frame_writer_end(const struct frame_writer *w);

#endif
