#include "responder.h"

#include <stdbool.h>

/* The object a DEOJ names: same class, and instance 0x00 (every instance) or its own. Every
 * object of a node is of a different class, so instance 0x00 selects at most one. */
static struct object *addressed(struct node_objects *node, uint32_t deoj) {
    for (unsigned i = 0; i < OBJECTS_COUNT; i++) {
        struct object *obj = &node->list[i];
        if (EOJ_CLASS(obj->eoj) == EOJ_CLASS(deoj) &&
            (EOJ_INSTANCE(deoj) == 0 || EOJ_INSTANCE(deoj) == EOJ_INSTANCE(obj->eoj)))
            return obj;
    }
    return 0;
}

/* Get, INF_REQ and the get part of SetGet: each EPC with its EDT, an unreadable one with PDC 0.
 * False if any was unreadable. */
static bool write_gets(struct frame_writer *w, const struct object *obj,
                       const struct frame_prop *props, unsigned n) {
    bool ok = true;
    frame_writer_list(w);
    for (unsigned i = 0; i < n; i++) {
        const struct property *p = object_get(obj, props[i].epc);
        if (p) {
            frame_writer_prop(w, p->epc, p->pdc, p->edt);
        } else {
            frame_writer_prop(w, props[i].epc, 0, 0);
            ok = false;
        }
    }
    return ok;
}

/* SetI, SetC and the set part of SetGet, applied in order: an accepted EPC with PDC 0, a refused
 * one with the request's PDC and EDT. False if any was refused. */
static bool write_sets(struct frame_writer *w, struct object *obj, const struct frame_prop *props,
                       unsigned n) {
    bool ok = true;
    frame_writer_list(w);
    for (unsigned i = 0; i < n; i++) {
        const struct frame_prop *p = &props[i];
        if (object_set(obj, p->epc, p->pdc, p->edt)) {
            frame_writer_prop(w, p->epc, 0, 0);
        } else {
            frame_writer_prop(w, p->epc, p->pdc, p->edt);
            ok = false;
        }
    }
    return ok;
}

size_t responder_reply_bound(const struct frame *req) {
    size_t bound = FRAME_HEADER_SIZE + 2; /* both OPCs of a SetGet */
    for (unsigned i = 0; i < (unsigned)req->opc + req->opc_get; i++)
        bound += 2 + (req->props[i].pdc > OBJECTS_EDT_MAX ? req->props[i].pdc : OBJECTS_EDT_MAX);
    return bound;
}

enum responder_outcome responder_handle(struct node_objects *node, const struct frame *req,
                                        uint8_t *out, size_t cap, size_t *out_len) {
    switch (req->esv) {
    case ESV_SETI:
    case ESV_SETC:
    case ESV_GET:
    case ESV_INF_REQ:
    case ESV_SETGET:
    case ESV_INFC:
        break;
    default: /* replies, INF and unknown services are no requests */
        return RESPONDER_IGNORED;
    }
    struct object *obj = addressed(node, req->deoj);
    if (!obj)
        return RESPONDER_IGNORED;

    struct frame_writer w;
    frame_writer_begin(&w, out, cap, req->tid, obj->eoj, req->seoj, req->esv);
    uint8_t esv;
    switch (req->esv) {
    case ESV_GET:
        esv = write_gets(&w, obj, req->props, req->opc) ? ESV_GET_RES : ESV_GET_SNA;
        break;
    case ESV_INF_REQ:
        esv = write_gets(&w, obj, req->props, req->opc) ? ESV_INF : ESV_INF_SNA;
        break;
    case ESV_SETC:
        esv = write_sets(&w, obj, req->props, req->opc) ? ESV_SET_RES : ESV_SETC_SNA;
        break;
    case ESV_SETI:
        /* Written as it goes like the others; a success then simply sends nothing. */
        if (write_sets(&w, obj, req->props, req->opc))
            return RESPONDER_NO_REPLY;
        esv = ESV_SETI_SNA;
        break;
    case ESV_SETGET: {
        /* Sets first, so the get part reads the values just written. */
        bool set_ok = write_sets(&w, obj, req->props, req->opc);
        bool get_ok = write_gets(&w, obj, req->props + req->opc, req->opc_get);
        esv = set_ok && get_ok ? ESV_SETGET_RES : ESV_SETGET_SNA;
        break;
    }
    default: /* ESV_INFC: acknowledged, each EPC with PDC 0 */
        frame_writer_list(&w);
        for (unsigned i = 0; i < req->opc; i++)
            frame_writer_prop(&w, req->props[i].epc, 0, 0);
        esv = ESV_INFC_RES;
        break;
    }
    frame_writer_set_esv(&w, esv);
    *out_len = frame_writer_end(&w);
    return *out_len ? RESPONDER_REPLY : RESPONDER_TOO_LARGE;
}
