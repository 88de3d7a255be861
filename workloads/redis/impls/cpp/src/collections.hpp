// The values behind a key that are not strings: hashes, sets and sorted sets (lists are
// list.hpp).
//
// Hash fields, set members and sorted-set members are single heap blocks (length-prefixed
// bytes, no std::string header) kept in a FlatTable, so a member costs its bytes plus an
// 8-byte slot, and SPOP can pick a random member in O(1).
#pragma once

#include "flat_table.hpp"
#include "varint.hpp"

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace redis {

// malloc for the blocks (so blocks can be resized and measured with malloc_usable_size);
// throws like operator new when memory runs out.
void *allocate_block(std::size_t n);

// A set member: [varint length][bytes].
class Member {
  public:
    Member() = delete;
    static Member *create(std::string_view s);
    static void destroy(Member *m) {
        std::free(m);
    }
    [[nodiscard]] std::string_view str() const {
        std::size_t n = 0;
        const unsigned char *p = varint::get(bytes(), n);
        return {reinterpret_cast<const char *>(p), n};
    }

  private:
    [[nodiscard]] const unsigned char *bytes() const {
        return reinterpret_cast<const unsigned char *>(this);
    }
};

// A hash field and its value: [varint field length][field][varint value length][value].
class Field {
  public:
    Field() = delete;
    static Field *create(std::string_view name, std::string_view value);
    static void destroy(Field *f) {
        std::free(f);
    }
    [[nodiscard]] std::string_view name() const {
        std::size_t n = 0;
        const unsigned char *p = varint::get(bytes(), n);
        return {reinterpret_cast<const char *>(p), n};
    }
    [[nodiscard]] std::string_view value() const {
        std::size_t n = 0;
        const unsigned char *p = varint::get(bytes(), n);
        p += n;
        p = varint::get(p, n);
        return {reinterpret_cast<const char *>(p), n};
    }

  private:
    [[nodiscard]] const unsigned char *bytes() const {
        return reinterpret_cast<const unsigned char *>(this);
    }
};

// A sorted-set member: [double score][varint length][bytes].
class ZMember {
  public:
    ZMember() = delete;
    static ZMember *create(std::string_view name, double score);
    static void destroy(ZMember *m) {
        std::free(m);
    }
    [[nodiscard]] double score() const {
        double s;
        std::memcpy(&s, this, sizeof s);
        return s;
    }
    void set_score(double s) {
        std::memcpy(static_cast<void *>(this), &s, sizeof s);
    }
    [[nodiscard]] std::string_view name() const {
        std::size_t n = 0;
        const unsigned char *p =
            varint::get(reinterpret_cast<const unsigned char *>(this) + sizeof(double), n);
        return {reinterpret_cast<const char *>(p), n};
    }
};

struct MemberTraits {
    using Item = Member;
    static std::string_view key(const Member *m) {
        return m->str();
    }
};
struct FieldTraits {
    using Item = Field;
    static std::string_view key(const Field *f) {
        return f->name();
    }
};
struct ZMemberTraits {
    using Item = ZMember;
    static std::string_view key(const ZMember *m) {
        return m->name();
    }
};

// A set. While every member is an integer and there are at most 512, redis keeps a set as a
// sorted array of integers (intset) and SMEMBERS lists it in numeric order; this keeps the same
// observable order by holding such a set in a sorted vector. Any other set is a FlatTable
// (in redis a hash table, whose order is unspecified).
class Set {
  public:
    static constexpr std::size_t kMaxIntsetEntries = 512;

    Set() = default;
    Set(const Set &) = delete;
    Set &operator=(const Set &) = delete;
    ~Set();

    [[nodiscard]] std::size_t size() const {
        return intset_ ? sorted_.size() : table_.size();
    }
    bool add(std::string_view member);    // true if added
    bool remove(std::string_view member); // true if removed
    [[nodiscard]] bool contains(std::string_view member) const;
    // Removes a random member and passes it to fn before freeing it.
    template <class Fn> void pop_random(std::uint64_t random, Fn &&fn) {
        Member *m = nullptr;
        if (intset_) {
            const std::size_t i = random % sorted_.size();
            m = sorted_[i];
            sorted_.erase(sorted_.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            m = table_.erase(table_.random_slot(random));
        }
        fn(m->str());
        Member::destroy(m);
    }
    [[nodiscard]] std::string_view random_member(std::uint64_t random) const {
        if (intset_) {
            return sorted_[random % sorted_.size()]->str();
        }
        return table_.at(table_.random_slot(random))->str();
    }
    template <class Fn> void for_each(Fn &&fn) const {
        if (intset_) {
            for (const Member *m : sorted_) {
                fn(m->str());
            }
        } else {
            table_.for_each([&](const Member *m) { fn(m->str()); });
        }
    }

  private:
    // Position of the first member >= v in sorted_.
    [[nodiscard]] std::size_t lower_bound(std::int64_t v) const;
    void convert_to_table();

    bool intset_ = true;
    std::vector<Member *> sorted_; // intset form: by integer value
    FlatTable<MemberTraits> table_;
};

// A hash. Small hashes (at most 128 fields, fields and values at most 64 bytes) are a vector in
// insertion order, as redis's listpack encoding, whose order HGETALL shows; larger ones are a
// FlatTable.
class Hash {
  public:
    static constexpr std::size_t kMaxListpackEntries = 128;
    static constexpr std::size_t kMaxListpackValue = 64;

    Hash() = default;
    Hash(const Hash &) = delete;
    Hash &operator=(const Hash &) = delete;
    ~Hash();

    [[nodiscard]] std::size_t size() const {
        return listpack_ ? small_.size() : table_.size();
    }
    // Sets a field; true if the field is new.
    bool set(std::string_view field, std::string_view value);
    [[nodiscard]] std::optional<std::string_view> get(std::string_view field) const;
    bool remove(std::string_view field);
    template <class Fn> void for_each(Fn &&fn) const {
        if (listpack_) {
            for (const Field *f : small_) {
                fn(f->name(), f->value());
            }
        } else {
            table_.for_each([&](const Field *f) { fn(f->name(), f->value()); });
        }
    }
    // redis converts to a hash table before a write whose arguments are long.
    void prepare_for(std::string_view field, std::string_view value) {
        if (listpack_ && (field.size() > kMaxListpackValue || value.size() > kMaxListpackValue)) {
            convert_to_table();
        }
    }

  private:
    [[nodiscard]] std::size_t small_find(std::string_view field) const;
    void convert_to_table();

    bool listpack_ = true;
    std::vector<Field *> small_;
    FlatTable<FieldTraits> table_;
};

class ZSet {
  public:
    // The order of a sorted set: score, then member bytes (memcmp, shorter first), as redis.
    using Key = std::pair<double, std::string_view>;
    using Index =
        __gnu_pbds::tree<Key, __gnu_pbds::null_type, std::less<Key>, __gnu_pbds::rb_tree_tag,
                         __gnu_pbds::tree_order_statistics_node_update>;

    // redis 7.0 picks the encoding of a new sorted set from the length of ZADD's first member
    // alone (not from its number of pairs, as 7.2 does; found by difffuzz.py: a ZADD of 130
    // pairs over 84 members stays a listpack in 7.0.15); see listpack_like_.
    explicit ZSet(std::size_t first_member_len)
        : listpack_like_(first_member_len <= kMaxListpackValue) {}
    ZSet(const ZSet &) = delete;
    ZSet &operator=(const ZSet &) = delete;
    ~ZSet();

    [[nodiscard]] std::size_t size() const {
        return members_.size();
    }
    [[nodiscard]] std::optional<double> score(std::string_view member) const;
    // Inserts a member or changes its score. Returns true if the member is new.
    bool set(std::string_view member, double score);
    bool remove(std::string_view member);
    // 0-based rank in ascending order.
    [[nodiscard]] std::optional<std::size_t> rank(std::string_view member) const;

    [[nodiscard]] const Index &index() const {
        return index_;
    }

    static constexpr std::size_t kMaxListpackEntries = 128;
    static constexpr std::size_t kMaxListpackValue = 64;

  private:
    // redis keeps small sorted sets in a listpack, which stores a score of -0 as the integer 0:
    // ZSCORE then says "0". Large ones (a skiplist) keep "-0". The flag follows redis's
    // one-way conversion so that the difference shows the same way.
    bool listpack_like_;
    FlatTable<ZMemberTraits> members_;
    // Keys point at the member bytes inside the ZMember blocks, which never move.
    Index index_;
};

} // namespace redis
