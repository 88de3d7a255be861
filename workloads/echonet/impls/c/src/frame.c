#include "frame.h"

#include <string.h>

bool frame_esv_is_setget(uint8_t esv) {
    return esv == ESV_SETGET || esv == ESV_SETGET_RES || esv == ESV_SETGET_SNA;
}

static uint32_t read_eoj(const uint8_t *p) {
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* Reads an OPC at *at and its properties into props; false if the datagram ends first. */
static bool read_list(const uint8_t *data, size_t len, size_t *at, struct frame_prop *props,
                      uint8_t *count) {
    size_t i = *at;
    if (i >= len)
        return false;
    uint8_t n = data[i++];
    for (unsigned k = 0; k < n; k++) {
        if (len - i < 2) /* OPC larger than the properties present */
            return false;
        uint8_t epc = data[i], pdc = data[i + 1];
        i += 2;
        if (len - i < pdc) /* PDC runs past the end */
            return false;
        props[k] = (struct frame_prop){.epc = epc, .pdc = pdc, .edt = data + i};
        i += pdc;
    }
    *count = n;
    *at = i;
    return true;
}

enum frame_status frame_decode(const uint8_t *data, size_t len, struct frame *out) {
    /* SPEC §3: shorter than a header is malformed whatever EHD2 says, so every language counts
     * a short datagram the same way; a full-length format 2 is well-formed but unsupported. */
    if (len < FRAME_HEADER_SIZE + 1 || data[0] != FRAME_EHD1)
        return FRAME_MALFORMED;
    if (data[1] == FRAME_FORMAT2)
        return FRAME_UNSUPPORTED;
    if (data[1] != FRAME_FORMAT1)
        return FRAME_MALFORMED;

    out->tid = (uint16_t)(data[2] << 8 | data[3]);
    out->seoj = read_eoj(data + 4);
    out->deoj = read_eoj(data + 7);
    out->esv = data[10];
    out->opc_get = 0;
    size_t at = FRAME_HEADER_SIZE;
    if (!read_list(data, len, &at, out->props, &out->opc))
        return FRAME_MALFORMED;
    if (frame_esv_is_setget(out->esv)) {
        if (!read_list(data, len, &at, out->props + out->opc, &out->opc_get))
            return FRAME_MALFORMED;
    }
    if (out->opc == 0 && out->opc_get == 0)
        return FRAME_MALFORMED;
    if (at != len) /* bytes after the last property */
        return FRAME_MALFORMED;
    return FRAME_OK;
}

static void put(struct frame_writer *w, const void *src, size_t n) {
    if (w->overflow || w->cap - w->len < n) {
        w->overflow = true;
        return;
    }
    if (n == 0) /* an empty EDT may come as a null pointer, which memcpy must not see */
        return;
    memcpy(w->buf + w->len, src, n);
    w->len += n;
}

void frame_writer_begin(struct frame_writer *w, uint8_t *buf, size_t cap, uint16_t tid,
                        uint32_t seoj, uint32_t deoj, uint8_t esv) {
    *w = (struct frame_writer){.buf = buf, .cap = cap};
    const uint8_t header[FRAME_HEADER_SIZE] = {
        FRAME_EHD1,
        FRAME_FORMAT1,
        (uint8_t)(tid >> 8),
        (uint8_t)tid,
        (uint8_t)(seoj >> 16),
        (uint8_t)(seoj >> 8),
        (uint8_t)seoj,
        (uint8_t)(deoj >> 16),
        (uint8_t)(deoj >> 8),
        (uint8_t)deoj,
        esv,
    };
    put(w, header, sizeof header);
}

void frame_writer_list(struct frame_writer *w) {
    w->opc_at = w->len;
    const uint8_t zero = 0;
    put(w, &zero, 1);
}

void frame_writer_prop(struct frame_writer *w, uint8_t epc, uint8_t pdc, const uint8_t *edt) {
    const uint8_t head[2] = {epc, pdc};
    put(w, head, 2);
    put(w, edt, pdc);
    if (w->overflow)
        return;
    if (w->buf[w->opc_at] == FRAME_MAX_PROPS) { /* a 256th property has no OPC to count it */
        w->overflow = true;
        return;
    }
    w->buf[w->opc_at]++;
}

void frame_writer_set_esv(struct frame_writer *w, uint8_t esv) {
    if (!w->overflow)
        w->buf[10] = esv;
}

size_t frame_writer_end(const struct frame_writer *w) {
    return w->overflow ? 0 : w->len;
}
