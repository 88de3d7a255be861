// The list type: a ring buffer of 8-byte slots, one per element, so both ends push and pop in
// O(1) and LINDEX/LSET/LRANGE index directly.
//
// Why not std::deque<std::string>: each element was a 32-byte std::string (a heap block beyond
// 15 bytes) in 512-byte deque blocks, and LRANGE walked the deque's block map and the string
// headers: 1.8x the data references and 10x the L1 read misses of the C server's 8-byte slots
// (cachegrind, LRANGE_600). Here an element of up to 7 bytes lives in its slot (the low bit
// tags it; a heap pointer never has it set), so redis-benchmark's 3-byte values and most small
// numbers never touch the allocator, and 600 elements are 4.7 KiB of contiguous slots. A
// longer element is a pointer to one malloc block: varint length, then the bytes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "varint.hpp"

namespace redis {

class List {
  public:
    using Slot = std::uint64_t;

    List() = default;
    List(const List &) = delete;
    List &operator=(const List &) = delete;
    ~List();

    [[nodiscard]] std::size_t size() const {
        return len_;
    }
    [[nodiscard]] bool empty() const {
        return len_ == 0;
    }

    // Element i (i < size()). An element of up to 7 bytes is viewed inside the list's own
    // slots: the view is valid until the list next changes.
    [[nodiscard]] std::string_view operator[](std::size_t i) const {
        return view(slots_ + ((head_ + i) & mask_));
    }
    [[nodiscard]] std::string_view front() const {
        return (*this)[0];
    }
    [[nodiscard]] std::string_view back() const {
        return (*this)[len_ - 1];
    }

    // Pushes and replacements throw std::bad_alloc when memory runs out; the list is then
    // unchanged (it may only have grown its ring).
    void push_front(std::string_view s);
    void push_back(std::string_view s);
    void set(std::size_t i, std::string_view s);

    // The list must not be empty.
    void pop_front();
    void pop_back();

    // Keeps the `count` elements from `start` on (start + count <= size()): LTRIM.
    void keep(std::size_t start, std::size_t count);

    // Removes up to `limit` elements equal to `value`, scanning from the head, or from the tail
    // if `from_tail`: LREM. One pass that closes the gaps as it goes (not an O(n) erase per
    // match). Returns how many were removed.
    std::size_t remove(std::string_view value, std::size_t limit, bool from_tail);

    // Walks elements by position. It copies the ring's pointer and mask, so a loop over it
    // (LRANGE's reply, which stores chars that could alias the list's own fields) keeps them
    // in registers.
    class Iterator {
      public:
        std::string_view operator*() const {
            return view(slots_ + (pos_ & mask_));
        }
        // When the element is stored in its slot: its length, with its bytes as the low bytes
        // of `word` (LRANGE's reply then moves it with one 8-byte store); else -1.
        int small(std::uint64_t &word) const {
            const Slot s = slots_[pos_ & mask_];
            if ((s & 1) == 0) {
                return -1;
            }
            word = s >> 8;
            return static_cast<int>(s >> 1 & 7);
        }
        Iterator &operator++() {
            ++pos_;
            return *this;
        }
        bool operator==(const Iterator &other) const {
            return pos_ == other.pos_;
        }

      private:
        friend class List;
        Iterator(const Slot *slots, std::size_t mask, std::size_t pos)
            : slots_(slots), mask_(mask), pos_(pos) {}
        const Slot *slots_;
        std::size_t mask_;
        std::size_t pos_; // head + index, not yet wrapped
    };
    // Element i, for i <= size() (size() is the end).
    [[nodiscard]] Iterator at(std::size_t i) const {
        return {slots_, mask_, head_ + i};
    }

  private:
    // In-place slot: bit 0 set, bits 1..3 the length, bytes 1..7 the element's bytes
    // (little-endian, so those are the slot's own bytes 1..7 in memory).
    static_assert(std::endian::native == std::endian::little);
    static constexpr std::size_t kInlineMax = 7;
    static constexpr std::size_t kMinSlots = 4;

    static std::string_view view(const Slot *slot) {
        const Slot s = *slot;
        if ((s & 1) != 0) {
            return {reinterpret_cast<const char *>(slot) + 1, static_cast<std::size_t>(s >> 1 & 7)};
        }
        std::size_t n = 0;
        const unsigned char *p = varint::get(reinterpret_cast<const unsigned char *>(s), n);
        return {reinterpret_cast<const char *>(p), n};
    }
    static Slot make_slot(std::string_view s);
    static void free_slot(Slot s);

    [[nodiscard]] std::size_t capacity() const {
        return slots_ == nullptr ? 0 : mask_ + 1;
    }
    Slot &slot(std::size_t i) {
        return slots_[(head_ + i) & mask_];
    }
    // Moves the elements, in order, to a new ring of `cap` slots (a power of two >= len_).
    void resize(std::size_t cap);
    void make_room() {
        if (len_ == capacity()) {
            resize(len_ == 0 ? kMinSlots : len_ * 2);
        }
    }
    // A ring that shrank to a quarter full gives half of itself back.
    void maybe_shrink() {
        if (mask_ + 1 > 64 && len_ < (mask_ + 1) / 4) {
            resize((mask_ + 1) / 2);
        }
    }

    Slot *slots_ = nullptr; // malloc'd, capacity() slots
    std::size_t head_ = 0;  // slot index of element 0
    std::size_t len_ = 0;
    std::size_t mask_ = 0; // capacity() - 1
};

} // namespace redis
