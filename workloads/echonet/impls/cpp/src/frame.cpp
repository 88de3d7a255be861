#include "frame.hpp"

#include <algorithm>

namespace echonet {

namespace {

// Steps over `count` properties from `pos`, checking each EPC/PDC pair and each EDT against the
// bytes actually received before moving on; false as soon as one runs past the end.
bool walk(Bytes d, std::size_t &pos, std::size_t count) noexcept {
    for (std::size_t i = 0; i < count; ++i) {
        if (d.size() - pos < 2)
            return false;
        const std::size_t pdc = d[pos + 1];
        if (d.size() - pos - 2 < pdc)
            return false;
        pos += 2 + pdc;
    }
    return true;
}

Eoj eoj_at(Bytes d, std::size_t at) noexcept {
    return {d[at], d[at + 1], d[at + 2]};
}

} // namespace

Decoded decode(Bytes d, Frame &out) noexcept {
    // Every frame has 12 bytes up to its (first) OPC; format 2 is recognised only on a datagram
    // that long, as the SPEC lists "shorter than 12 bytes" as malformed whatever follows.
    if (d.size() < kHeaderSize || d[0] != kEhd1)
        return Decoded::malformed;
    if (d[1] == kFormat2)
        return Decoded::format2;
    if (d[1] != kFormat1)
        return Decoded::malformed;

    const auto esv = static_cast<Esv>(d[kEsvOffset]);
    std::size_t pos = kHeaderSize;
    const std::size_t first_count = d[11];
    if (!walk(d, pos, first_count))
        return Decoded::malformed;
    const PropertyList first(d.subspan(kHeaderSize, pos - kHeaderSize), first_count);

    PropertyList second;
    if (has_two_parts(esv)) {
        if (pos == d.size()) // no OPCGet
            return Decoded::malformed;
        const std::size_t second_count = d[pos++];
        const std::size_t start = pos;
        if (!walk(d, pos, second_count) || first_count + second_count == 0)
            return Decoded::malformed;
        second = PropertyList(d.subspan(start, pos - start), second_count);
    } else if (first_count == 0) {
        return Decoded::malformed;
    }
    if (pos != d.size()) // bytes after the last property
        return Decoded::malformed;

    out.tid = static_cast<std::uint16_t>(d[2] << 8 | d[3]);
    out.seoj = eoj_at(d, 4);
    out.deoj = eoj_at(d, 7);
    out.esv = esv;
    out.properties = first;
    out.get_part = second;
    return Decoded::ok;
}

bool FrameWriter::room(std::size_t n) noexcept {
    if (ok_ && out_.size() - size_ >= n)
        return true;
    ok_ = false;
    return false;
}

void FrameWriter::header(std::uint16_t tid, Eoj seoj, Eoj deoj, Esv esv) noexcept {
    size_ = 0;
    ok_ = out_.size() >= kHeaderSize;
    if (!ok_)
        return;
    const std::uint8_t h[kHeaderSize] = {kEhd1,
                                         kFormat1,
                                         static_cast<std::uint8_t>(tid >> 8),
                                         static_cast<std::uint8_t>(tid),
                                         seoj.group,
                                         seoj.cls,
                                         seoj.instance,
                                         deoj.group,
                                         deoj.cls,
                                         deoj.instance,
                                         static_cast<std::uint8_t>(esv),
                                         0};
    for (std::uint8_t b : h)
        out_[size_++] = b;
    count_at_ = kHeaderSize - 1;
}

void FrameWriter::property(std::uint8_t epc, Bytes edt) noexcept {
    // PDC is one byte, and so is the run's count.
    if (edt.size() > 255 || !room(2 + edt.size()) || out_[count_at_] == 255) {
        ok_ = false;
        return;
    }
    out_[size_++] = epc;
    out_[size_++] = static_cast<std::uint8_t>(edt.size());
    std::ranges::copy(edt, out_.begin() + static_cast<std::ptrdiff_t>(size_));
    size_ += edt.size();
    ++out_[count_at_];
}

void FrameWriter::second_part() noexcept {
    if (!room(1))
        return;
    count_at_ = size_;
    out_[size_++] = 0;
}

} // namespace echonet
