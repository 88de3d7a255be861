// The keyspace: sixteen databases of entries, each entry one heap block holding its key,
// type, optional expire time and (for strings) the value itself.
//
// Memory per key is a target (within 1.5x of redis-server, whose key costs a dictEntry, an
// sds key, a robj and a bucket pointer: about 85 bytes for a 16-byte key and a 3-byte
// value). Here the same key costs one 22-byte block (a 32-byte malloc chunk) plus an 8-byte
// table slot at 60-75% load: about 45 bytes.
//
// Block layout:
//   [flags: 1 byte = type | kHasExpire] [varint key length] [expire ms: 8 bytes, if flagged]
//   [key bytes] then a string's [varint value length][value bytes]
//   or a list/hash/set/zset's [pointer to the collection: 8 bytes].
#pragma once

#include "collections.hpp"
#include "flat_table.hpp"
#include "list.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string_view>

namespace redis {

using Rng = std::mt19937_64;

enum class Type : std::uint8_t { string = 0, list = 1, hash = 2, set = 3, zset = 4 };

// Absolute expire times are Unix milliseconds, as in redis; kNoExpire means persistent.
inline constexpr std::int64_t kNoExpire = -1;

class Entry {
  public:
    Entry() = delete;
    Entry(const Entry &) = delete;
    Entry &operator=(const Entry &) = delete;

    static Entry *create_string(std::string_view key, std::string_view value,
                                std::int64_t expire = kNoExpire);
    // Takes ownership of `object` (a List, Hash, Set or ZSet matching `type`).
    static Entry *create_object(std::string_view key, Type type, void *object,
                                std::int64_t expire = kNoExpire);
    // Frees the block and the collection it owns.
    static void destroy(Entry *e);
    // Frees only the block (its collection was moved to another block).
    static void free_block(Entry *e) {
        std::free(e);
    }

    // A string entry with a new value and expire time: `e` itself when the new contents fit
    // in its allocation with the same layout, otherwise a new block (`e` is left untouched:
    // Db::put frees it once the tables point at the new one). `reserve` asks for spare room
    // for later appends.
    static Entry *assign_string(Entry *e, std::string_view value, std::int64_t expire,
                                std::size_t reserve = 0);
    // Appends to a string entry in place when its block has room and the length prefix keeps
    // its size (APPEND after a greedy allocation); false when a new block is needed.
    static bool try_append(Entry *e, std::string_view tail);
    // Overwrites bytes of a string entry in place (SETRANGE within the current length).
    static void overwrite(Entry *e, std::size_t offset, std::string_view bytes);
    // The same entry with another expire time (kNoExpire removes it); same contract.
    static Entry *assign_expire(Entry *e, std::int64_t expire);

    [[nodiscard]] Type type() const {
        return static_cast<Type>(bytes()[0] & kTypeMask);
    }
    [[nodiscard]] bool has_expire() const {
        return (bytes()[0] & kHasExpire) != 0;
    }
    [[nodiscard]] std::int64_t expire_at() const {
        if (!has_expire()) {
            return kNoExpire;
        }
        std::size_t n = 0;
        const unsigned char *p = varint::get(bytes() + 1, n);
        std::int64_t t;
        std::memcpy(&t, p, sizeof t);
        return t;
    }
    [[nodiscard]] std::string_view key() const {
        std::size_t n = 0;
        const unsigned char *p = varint::get(bytes() + 1, n);
        if (has_expire()) {
            p += sizeof(std::int64_t);
        }
        return {reinterpret_cast<const char *>(p), n};
    }
    // Only for strings.
    [[nodiscard]] std::string_view string_value() const {
        const std::string_view k = key();
        std::size_t n = 0;
        const unsigned char *p =
            varint::get(reinterpret_cast<const unsigned char *>(k.data() + k.size()), n);
        return {reinterpret_cast<const char *>(p), n};
    }
    // Only for collections: the List, Hash, Set or ZSet.
    template <class T> [[nodiscard]] T *object() const {
        const std::string_view k = key();
        void *obj;
        std::memcpy(&obj, k.data() + k.size(), sizeof obj);
        return static_cast<T *>(obj);
    }

  private:
    static constexpr unsigned char kTypeMask = 0x07;
    static constexpr unsigned char kHasExpire = 0x08;

    [[nodiscard]] const unsigned char *bytes() const {
        return reinterpret_cast<const unsigned char *>(this);
    }
    static std::size_t head_size(std::size_t key_len, bool expire) {
        return 1 + varint::size(key_len) + (expire ? sizeof(std::int64_t) : 0) + key_len;
    }
    static unsigned char *write_head(unsigned char *p, Type type, std::string_view key,
                                     std::int64_t expire);
};

struct EntryTraits {
    using Item = Entry;
    static std::string_view key(const Entry *e) {
        return e->key();
    }
};
using KeyTable = FlatTable<EntryTraits>;

class Db {
  public:
    // Where a key is (or would go), found once and used for the write that follows. Valid
    // until the next change to this database.
    struct Ref {
        std::string_view key;
        std::uint64_t hash = 0;
        std::size_t slot = KeyTable::npos;  // in keys_
        std::size_t vslot = KeyTable::npos; // in volatile_, when the entry has an expire time
        Entry *entry = nullptr;             // null: the key does not exist
    };

    Db() = default;
    Db(const Db &) = delete;
    Db &operator=(const Db &) = delete;
    ~Db();

    // Looks a key up, deleting it first if its time has passed (lazy expiry).
    Ref find(std::string_view key, std::int64_t now);
    Entry *get(std::string_view key, std::int64_t now) {
        return find(key, now).entry;
    }

    // Makes `fresh` the entry of ref.key (a new key, or replacing ref.entry, which is freed
    // unless it is `fresh` itself). Invalidates `ref`.
    void put(Ref &ref, Entry *fresh);
    // Deletes ref.entry. Invalidates `ref`.
    void remove(Ref &ref);
    // Unlinks ref.entry and returns it, not freed (RENAME moves its value). Invalidates `ref`.
    Entry *detach(Ref &ref);

    [[nodiscard]] std::size_t size() const {
        return keys_.size();
    }
    [[nodiscard]] std::size_t volatile_count() const {
        return volatile_.size();
    }
    void clear();

    // A random key that has not expired, or null (a few expired picks are deleted on the way).
    Entry *random_entry(Rng &rng, std::int64_t now);
    // One active-expiry round: samples up to `samples` keys with a TTL and deletes the expired
    // ones. Returns {sampled, expired}.
    std::pair<std::size_t, std::size_t> expire_sample(std::size_t samples, Rng &rng,
                                                      std::int64_t now);

    [[nodiscard]] const KeyTable &keys() const {
        return keys_;
    }
    // Deletes `key` if it exists and has expired (used after SCAN/KEYS collected it).
    bool expire_if_needed(std::string_view key, std::int64_t now);

    [[nodiscard]] std::size_t memory_bytes() const {
        return keys_.memory_bytes() + volatile_.memory_bytes();
    }

  private:
    Entry *unlink(std::size_t slot, std::size_t vslot);
    void unlink_and_destroy(std::size_t slot, std::size_t vslot) {
        Entry::destroy(unlink(slot, vslot));
    }

    KeyTable keys_;     // owns the entries
    KeyTable volatile_; // the entries with an expire time (not owned), for active expiry
};

inline constexpr int kDatabases = 16;

class Store {
  public:
    Db &db(int index) {
        return dbs_[static_cast<std::size_t>(index)];
    }
    [[nodiscard]] const Db &db(int index) const {
        return dbs_[static_cast<std::size_t>(index)];
    }

  private:
    std::array<Db, kDatabases> dbs_;
};

} // namespace redis
