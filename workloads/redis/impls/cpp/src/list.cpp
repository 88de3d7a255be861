#include "list.hpp"

#include "collections.hpp" // allocate_block

#include <cstdlib>

namespace redis {

List::Slot List::make_slot(std::string_view s) {
    if (s.size() <= kInlineMax) {
        Slot slot = 0;
        std::memcpy(reinterpret_cast<char *>(&slot) + 1, s.data(), s.size());
        return slot | 1 | static_cast<Slot>(s.size()) << 1;
    }
    auto *blob = static_cast<unsigned char *>(allocate_block(varint::size(s.size()) + s.size()));
    std::memcpy(varint::put(blob, s.size()), s.data(), s.size());
    return reinterpret_cast<Slot>(blob);
}

void List::free_slot(Slot s) {
    if ((s & 1) == 0) {
        std::free(reinterpret_cast<void *>(s));
    }
}

List::~List() {
    for (std::size_t i = 0; i < len_; ++i) {
        free_slot(slot(i));
    }
    std::free(slots_);
}

void List::resize(std::size_t cap) {
    auto *fresh = static_cast<Slot *>(allocate_block(cap * sizeof(Slot)));
    if (len_ != 0) {
        const std::size_t first = mask_ + 1 - head_; // elements before the ring wraps
        if (first >= len_) {
            std::memcpy(fresh, slots_ + head_, len_ * sizeof(Slot));
        } else {
            std::memcpy(fresh, slots_ + head_, first * sizeof(Slot));
            std::memcpy(fresh + first, slots_, (len_ - first) * sizeof(Slot));
        }
    }
    std::free(slots_);
    slots_ = fresh;
    head_ = 0;
    mask_ = cap - 1;
}

void List::push_front(std::string_view s) {
    make_room();
    const Slot fresh = make_slot(s);
    head_ = (head_ - 1) & mask_;
    slots_[head_] = fresh;
    ++len_;
}

void List::push_back(std::string_view s) {
    make_room();
    const Slot fresh = make_slot(s);
    slot(len_) = fresh;
    ++len_;
}

void List::set(std::size_t i, std::string_view s) {
    const Slot fresh = make_slot(s);
    free_slot(slot(i));
    slot(i) = fresh;
}

void List::pop_front() {
    free_slot(slot(0));
    head_ = (head_ + 1) & mask_;
    --len_;
    maybe_shrink();
}

void List::pop_back() {
    free_slot(slot(len_ - 1));
    --len_;
    maybe_shrink();
}

void List::keep(std::size_t start, std::size_t count) {
    for (std::size_t i = 0; i < start; ++i) {
        free_slot(slot(i));
    }
    for (std::size_t i = start + count; i < len_; ++i) {
        free_slot(slot(i));
    }
    head_ = (head_ + start) & mask_;
    len_ = count;
    maybe_shrink();
}

std::size_t List::remove(std::string_view value, std::size_t limit, bool from_tail) {
    std::size_t removed = 0;
    if (!from_tail) {
        std::size_t kept = 0; // survivors move towards the head
        for (std::size_t i = 0; i < len_; ++i) {
            const Slot s = slot(i);
            if (removed < limit && view(&slot(i)) == value) {
                free_slot(s);
                ++removed;
            } else {
                slot(kept++) = s;
            }
        }
    } else {
        std::size_t kept = len_; // survivors move towards the tail: [kept, len_) at the end
        for (std::size_t i = len_; i-- > 0;) {
            const Slot s = slot(i);
            if (removed < limit && view(&slot(i)) == value) {
                free_slot(s);
                ++removed;
            } else {
                slot(--kept) = s;
            }
        }
        head_ = (head_ + kept) & mask_;
    }
    len_ -= removed;
    maybe_shrink();
    return removed;
}

} // namespace redis
