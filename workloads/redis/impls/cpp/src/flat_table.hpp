// FlatTable: the open-addressing hash table under the keyspace, hashes, sets and sorted sets.
//
// Why not std::unordered_map or a library flat map: memory per key is a target (a node-based
// map costs a node, a bucket pointer and a separate string per key), and redis semantics need
// two things no library map exposes: SCAN's cursor (which must return every element present
// for the whole scan, even if the table grows or shrinks in between) and cheap random picks
// (SPOP, RANDOMKEY, the active expiry sampler).
//
// Layout: one array of 8-byte slots, linear probing, power-of-two capacity, at most 3/4 full.
// A slot is 0 (empty) or a pointer to an item with the top 16 bits of the item's hash in the
// pointer's unused high bits (x86-64 user addresses fit in 47 bits), so a probe rejects most
// non-matching slots without touching the item. Items are the caller's: the table stores and
// finds them by key (Traits::key(item)) and never allocates or frees one.
//
// Deletion shifts the following run back instead of leaving tombstones, which keeps the
// invariant "every slot between an item's home (hash & mask) and its position is occupied".
// SCAN relies on it: the cursor walks home positions in reverse-binary order (as redis's
// dictScan walks buckets), and visiting a home means collecting the items of that home from
// its run. Since growing or shrinking a power-of-two table maps each home to a set of homes
// that the reverse-binary order has or has not yet visited as a whole, an element present
// throughout a scan is returned at least once.
#pragma once

#include "hash.hpp"

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string_view>

namespace redis {

template <class Traits> class FlatTable {
  public:
    using Item = typename Traits::Item;
    static constexpr std::size_t npos = ~std::size_t{0};

    FlatTable() = default;
    FlatTable(const FlatTable &) = delete;
    FlatTable &operator=(const FlatTable &) = delete;
    FlatTable(FlatTable &&other) noexcept
        : slots_(std::move(other.slots_)), mask_(other.mask_), size_(other.size_) {
        other.mask_ = 0;
        other.size_ = 0;
    }
    FlatTable &operator=(FlatTable &&other) noexcept {
        slots_ = std::move(other.slots_);
        mask_ = other.mask_;
        size_ = other.size_;
        other.mask_ = 0;
        other.size_ = 0;
        return *this;
    }

    [[nodiscard]] std::size_t size() const {
        return size_;
    }
    [[nodiscard]] bool empty() const {
        return size_ == 0;
    }
    // Number of slots (0 before the first insert).
    [[nodiscard]] std::size_t capacity() const {
        return slots_ ? mask_ + 1 : 0;
    }
    [[nodiscard]] std::size_t memory_bytes() const {
        return capacity() * sizeof(std::uint64_t);
    }

    // The slot holding `key`, or npos. `hash` must be hash_bytes(key).
    [[nodiscard]] std::size_t find(std::string_view key, std::uint64_t hash) const {
        if (size_ == 0) {
            return npos;
        }
        const std::uint64_t tag = tag_of(hash);
        for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
            const std::uint64_t s = slots_[i];
            if (s == 0) {
                return npos;
            }
            if ((s & kTagMask) == tag && same_bytes(Traits::key(item_of(s)), key)) {
                return i;
            }
        }
    }
    [[nodiscard]] std::size_t find(std::string_view key) const {
        return find(key, hash_bytes(key));
    }

    [[nodiscard]] Item *at(std::size_t slot) const {
        return item_of(slots_[slot]);
    }
    [[nodiscard]] bool occupied(std::size_t slot) const {
        return slots_[slot] != 0;
    }

    // Adds an item whose key is not in the table. May grow the table (slot numbers change).
    void insert_new(std::uint64_t hash, Item *item) {
        if ((size_ + 1) * 4 > capacity() * 3) {
            rehash(capacity() == 0 ? kMinCapacity : capacity() * 2);
        }
        place(hash, item);
        ++size_;
    }

    // Puts a different item with the same key in a slot (after the item was reallocated).
    void replace(std::size_t slot, Item *item) {
        slots_[slot] = (slots_[slot] & kTagMask) | address_of(item);
    }

    // Removes the item in `slot` and returns it. May shrink the table (slot numbers change).
    Item *erase(std::size_t slot) {
        Item *removed = item_of(slots_[slot]);
        // Backward shift: move later members of the run into the hole when their home allows.
        std::size_t hole = slot;
        for (std::size_t i = (slot + 1) & mask_;; i = (i + 1) & mask_) {
            const std::uint64_t s = slots_[i];
            if (s == 0) {
                break;
            }
            const std::size_t home = hash_bytes(Traits::key(item_of(s))) & mask_;
            // The item may move to `hole` only if `hole` lies cyclically within [home, i).
            if (((i - home) & mask_) >= ((i - hole) & mask_)) {
                slots_[hole] = s;
                hole = i;
            }
        }
        slots_[hole] = 0;
        --size_;
        if (size_ == 0) {
            slots_.reset();
            mask_ = 0;
        } else if (capacity() > kMinCapacity && size_ * 8 < capacity()) {
            rehash(capacity() / 2);
        }
        return removed;
    }

    // A slot holding an item, chosen by `random` (table must not be empty). Slightly favours
    // items that follow a long run of empty slots, as redis's bucket sampling does.
    [[nodiscard]] std::size_t random_slot(std::uint64_t random) const {
        assert(size_ != 0);
        std::size_t i = random & mask_;
        while (slots_[i] == 0) {
            i = (i + 1) & mask_;
        }
        return i;
    }

    // Calls fn(item) for every item. fn must not change the table.
    template <class Fn> void for_each(Fn &&fn) const {
        for (std::size_t i = 0, n = capacity(); i < n; ++i) {
            if (slots_[i] != 0) {
                fn(item_of(slots_[i]));
            }
        }
    }

    // One SCAN step from `cursor`: visits home positions until at least `count` items were
    // passed to emit(item) or 10*count homes were visited, and returns the next cursor (0 when
    // the scan is complete). emit must not change the table.
    template <class Fn>
    std::uint64_t scan(std::uint64_t cursor, std::size_t count, Fn &&emit) const {
        if (size_ == 0) {
            return 0;
        }
        const std::uint64_t mask = mask_;
        std::size_t emitted = 0;
        std::size_t budget = count * 10;
        do {
            const std::size_t home = cursor & mask;
            for (std::size_t i = home; slots_[i] != 0; i = (i + 1) & mask) {
                Item *item = item_of(slots_[i]);
                if ((hash_bytes(Traits::key(item)) & mask) == home) {
                    emit(item);
                    ++emitted;
                }
            }
            // Increment the cursor's reversed bits (the high bits of the home index first).
            cursor |= ~mask;
            cursor = std::uint64_t{reverse_bits(cursor)} + 1;
            cursor = reverse_bits(cursor);
        } while (cursor != 0 && emitted < count && --budget > 0);
        return cursor;
    }

    // Forgets every item (the caller frees them first, e.g. with for_each).
    void clear() {
        slots_.reset();
        mask_ = 0;
        size_ = 0;
    }

  private:
    static constexpr std::size_t kMinCapacity = 8;
    static constexpr std::uint64_t kTagMask = 0xFFFF'0000'0000'0000ULL;

    static std::uint64_t tag_of(std::uint64_t hash) {
        return hash & kTagMask;
    }
    static std::uint64_t address_of(Item *item) {
        const auto a = reinterpret_cast<std::uintptr_t>(item);
        assert((a & kTagMask) == 0);
        return a;
    }
    static Item *item_of(std::uint64_t slot) {
        return reinterpret_cast<Item *>(static_cast<std::uintptr_t>(slot & ~kTagMask));
    }
    static std::uint64_t reverse_bits(std::uint64_t v) {
        v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
        v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
        v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
        return __builtin_bswap64(v);
    }

    void place(std::uint64_t hash, Item *item) {
        std::size_t i = hash & mask_;
        while (slots_[i] != 0) {
            i = (i + 1) & mask_;
        }
        slots_[i] = tag_of(hash) | address_of(item);
    }

    void rehash(std::size_t new_capacity) {
        const std::size_t old_capacity = capacity();
        auto old = std::move(slots_);
        // Value-initialised: every slot starts empty.
        slots_ = std::make_unique<std::uint64_t[]>(new_capacity);
        mask_ = new_capacity - 1;
        for (std::size_t i = 0; i < old_capacity; ++i) {
            if (old[i] != 0) {
                Item *item = item_of(old[i]);
                place(hash_bytes(Traits::key(item)), item);
            }
        }
    }

    std::unique_ptr<std::uint64_t[]> slots_;
    std::size_t mask_ = 0;
    std::size_t size_ = 0;
};

} // namespace redis
