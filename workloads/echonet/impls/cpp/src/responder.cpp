#include "responder.hpp"

namespace echonet {

namespace {

// A get run: readable EPCs with their EDT, the others with PDC 0. True when all were readable.
bool put_values(FrameWriter &w, const PropertyList &asked, const DeviceObject &object) {
    bool all = true;
    for (const Property p : asked) {
        if (const auto value = object.get(p.epc)) {
            w.property(p.epc, *value);
        } else {
            w.property(p.epc, {});
            all = false;
        }
    }
    return all;
}

// A set run, applied in order: accepted EPCs with PDC 0, refused ones as they came (the
// request's PDC and EDT). True when all were accepted.
bool apply_sets(FrameWriter &w, const PropertyList &sets, DeviceObject &object) {
    bool all = true;
    for (const Property p : sets) {
        if (object.set(p.epc, p.edt)) {
            w.property(p.epc, {});
        } else {
            w.property(p);
            all = false;
        }
    }
    return all;
}

void acknowledge(FrameWriter &w, const PropertyList &asked) {
    for (const Property p : asked)
        w.property(p.epc, {});
}

} // namespace

std::size_t answer(const Frame &request, DeviceObject &object, std::span<std::uint8_t> out) {
    FrameWriter w(out);
    // The header goes out with the success ESV; a refusal rewrites that one byte at the end.
    const auto start = [&](Esv esv) { w.header(request.tid, object.eoj(), request.seoj, esv); };
    bool all = true;
    Esv refusal{};
    switch (request.esv) {
    case Esv::get:
        start(Esv::get_res);
        all = put_values(w, request.properties, object);
        refusal = Esv::get_sna;
        break;
    case Esv::inf_req:
        start(Esv::inf);
        all = put_values(w, request.properties, object);
        refusal = Esv::inf_sna;
        break;
    case Esv::seti:
    case Esv::setc:
        start(Esv::set_res);
        all = apply_sets(w, request.properties, object);
        if (request.esv == Esv::seti && all)
            return 0; // SetI answers only a refusal
        refusal = request.esv == Esv::seti ? Esv::seti_sna : Esv::setc_sna;
        break;
    case Esv::setget:
        // Sets first, so the get part reads the values just stored.
        start(Esv::setget_res);
        all = apply_sets(w, request.properties, object);
        w.second_part();
        all = put_values(w, request.get_part, object) && all;
        refusal = Esv::setget_sna;
        break;
    case Esv::infc:
        start(Esv::infc_res);
        acknowledge(w, request.properties);
        break;
    default:
        return 0; // not a request: never answered
    }
    if (!w.ok())
        return 0;
    if (!all)
        out[kEsvOffset] = static_cast<std::uint8_t>(refusal);
    return w.size();
}

} // namespace echonet
