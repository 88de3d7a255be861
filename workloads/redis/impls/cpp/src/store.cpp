#include "store.hpp"
#include "byte_buffer.hpp"

#include <malloc.h>

namespace redis {

unsigned char *Entry::write_head(unsigned char *p, Type type, std::string_view key,
                                 std::int64_t expire) {
    const bool has_expire = expire != kNoExpire;
    *p++ = static_cast<unsigned char>(static_cast<unsigned char>(type) |
                                      (has_expire ? kHasExpire : 0));
    p = varint::put(p, key.size());
    if (has_expire) {
        std::memcpy(p, &expire, sizeof expire);
        p += sizeof expire;
    }
    std::memcpy(p, key.data(), key.size());
    return p + key.size();
}

Entry *Entry::create_string(std::string_view key, std::string_view value, std::int64_t expire) {
    const std::size_t n =
        head_size(key.size(), expire != kNoExpire) + varint::size(value.size()) + value.size();
    auto *block = static_cast<unsigned char *>(allocate_block(n));
    unsigned char *p = write_head(block, Type::string, key, expire);
    p = varint::put(p, value.size());
    std::memcpy(p, value.data(), value.size());
    return reinterpret_cast<Entry *>(block);
}

Entry *Entry::create_object(std::string_view key, Type type, void *object, std::int64_t expire) {
    const std::size_t n = head_size(key.size(), expire != kNoExpire) + sizeof object;
    auto *block = static_cast<unsigned char *>(allocate_block(n));
    unsigned char *p = write_head(block, type, key, expire);
    std::memcpy(p, &object, sizeof object);
    return reinterpret_cast<Entry *>(block);
}

void Entry::destroy(Entry *e) {
    switch (e->type()) {
    case Type::string:
        break;
    case Type::list:
        delete e->object<List>();
        break;
    case Type::hash:
        delete e->object<Hash>();
        break;
    case Type::set:
        delete e->object<Set>();
        break;
    case Type::zset:
        delete e->object<ZSet>();
        break;
    }
    std::free(e);
}

Entry *Entry::assign_string(Entry *e, std::string_view value, std::int64_t expire,
                            std::size_t reserve) {
    const std::string_view key = e->key();
    const bool has_expire = expire != kNoExpire;
    const std::size_t head = head_size(key.size(), has_expire);
    const std::size_t n = head + varint::size(value.size()) + value.size();
    if (e->type() == Type::string && e->has_expire() == has_expire) {
        const std::size_t usable = malloc_usable_size(e);
        // In place when it fits and does not waste more than half the block (a value that
        // shrank a lot gets a smaller block).
        if (n <= usable && (usable <= 64 || n * 2 >= usable)) {
            auto *block = reinterpret_cast<unsigned char *>(e);
            if (has_expire) {
                std::memcpy(block + 1 + varint::size(key.size()), &expire, sizeof expire);
            }
            unsigned char *p = varint::put(block + head, value.size());
            // APPEND passes a value that starts inside this very block: memmove, or for a short
            // value copy_bytes (overlap-safe up to 16 bytes, and no library call).
            if (value.size() <= 16) {
                copy_bytes(reinterpret_cast<char *>(p), value.data(), value.size());
            } else {
                std::memmove(p, value.data(), value.size());
            }
            return e;
        }
    }
    auto *block = static_cast<unsigned char *>(allocate_block(n > reserve ? n : reserve));
    unsigned char *p = write_head(block, Type::string, key, expire);
    p = varint::put(p, value.size());
    std::memcpy(p, value.data(), value.size());
    return reinterpret_cast<Entry *>(block);
}

bool Entry::try_append(Entry *e, std::string_view tail) {
    const std::string_view key = e->key();
    const std::size_t old_len = e->string_value().size();
    const std::size_t new_len = old_len + tail.size();
    if (varint::size(new_len) != varint::size(old_len)) {
        return false;
    }
    const std::size_t head = head_size(key.size(), e->has_expire());
    if (head + varint::size(new_len) + new_len > malloc_usable_size(e)) {
        return false;
    }
    unsigned char *p = varint::put(reinterpret_cast<unsigned char *>(e) + head, new_len);
    std::memcpy(p + old_len, tail.data(), tail.size());
    return true;
}

void Entry::overwrite(Entry *e, std::size_t offset, std::string_view bytes) {
    // string_value() views the bytes of this (non-const) block, so writing through it is fine.
    char *value = const_cast<char *>(e->string_value().data());
    std::memcpy(value + offset, bytes.data(), bytes.size());
}

Entry *Entry::assign_expire(Entry *e, std::int64_t expire) {
    const bool has_expire = expire != kNoExpire;
    if (e->has_expire() == has_expire) {
        if (has_expire) {
            const std::size_t klen = e->key().size();
            std::memcpy(reinterpret_cast<unsigned char *>(e) + 1 + varint::size(klen), &expire,
                        sizeof expire);
        }
        return e;
    }
    if (e->type() == Type::string) {
        return assign_string(e, e->string_value(), expire);
    }
    return create_object(e->key(), e->type(), e->object<void>(), expire);
}

Db::~Db() {
    clear();
}

void Db::clear() {
    keys_.for_each([](Entry *e) { Entry::destroy(e); });
    keys_.clear();
    volatile_.clear();
}

Db::Ref Db::find(std::string_view key, std::int64_t now) {
    Ref ref;
    ref.key = key;
    ref.hash = hash_bytes(key);
    ref.slot = keys_.find(key, ref.hash);
    if (ref.slot == KeyTable::npos) {
        return ref;
    }
    Entry *e = keys_.at(ref.slot);
    if (e->has_expire()) {
        ref.vslot = volatile_.find(key, ref.hash);
        if (e->expire_at() <= now) {
            unlink_and_destroy(ref.slot, ref.vslot);
            ref.slot = KeyTable::npos;
            ref.vslot = KeyTable::npos;
            return ref;
        }
    }
    ref.entry = e;
    return ref;
}

void Db::put(Ref &ref, Entry *fresh) {
    Entry *old = ref.entry;
    const bool was_volatile = old != nullptr && ref.vslot != KeyTable::npos;
    if (old == nullptr) {
        keys_.insert_new(ref.hash, fresh);
    } else if (old != fresh) {
        keys_.replace(ref.slot, fresh);
    }
    // The volatile table is updated before the old block is freed: its probes read the keys
    // of the entries they pass.
    if (fresh->has_expire()) {
        if (was_volatile) {
            volatile_.replace(ref.vslot, fresh);
        } else {
            volatile_.insert_new(ref.hash, fresh);
        }
    } else if (was_volatile) {
        volatile_.erase(ref.vslot);
    }
    if (old != nullptr && old != fresh) {
        // A collection that moved to a new block (its expire time changed) stays alive.
        if (old->type() != Type::string && old->type() == fresh->type() &&
            old->object<void>() == fresh->object<void>()) {
            Entry::free_block(old);
        } else {
            Entry::destroy(old);
        }
    }
    ref = Ref{};
}

void Db::remove(Ref &ref) {
    unlink_and_destroy(ref.slot, ref.vslot);
    ref = Ref{};
}

Entry *Db::detach(Ref &ref) {
    Entry *e = unlink(ref.slot, ref.vslot);
    ref = Ref{};
    return e;
}

Entry *Db::unlink(std::size_t slot, std::size_t vslot) {
    Entry *e = keys_.at(slot);
    if (vslot != KeyTable::npos) {
        volatile_.erase(vslot);
    }
    keys_.erase(slot);
    return e;
}

bool Db::expire_if_needed(std::string_view key, std::int64_t now) {
    const Ref ref = find(key, now);
    return ref.entry == nullptr;
}

Entry *Db::random_entry(Rng &rng, std::int64_t now) {
    // Each expired pick is deleted, so the loop ends (as redis's dbRandomKey on a master).
    while (keys_.size() != 0) {
        Entry *e = keys_.at(keys_.random_slot(rng()));
        if (!e->has_expire() || e->expire_at() > now) {
            return e;
        }
        find(e->key(), now); // deletes it
    }
    return nullptr;
}

std::pair<std::size_t, std::size_t> Db::expire_sample(std::size_t samples, Rng &rng,
                                                      std::int64_t now) {
    std::size_t sampled = 0;
    std::size_t expired = 0;
    while (sampled < samples && volatile_.size() != 0) {
        const std::size_t vslot = volatile_.random_slot(rng());
        Entry *e = volatile_.at(vslot);
        ++sampled;
        if (e->expire_at() <= now) {
            const std::string_view key = e->key();
            const std::size_t slot = keys_.find(key, hash_bytes(key));
            unlink_and_destroy(slot, vslot);
            ++expired;
        }
    }
    return {sampled, expired};
}

} // namespace redis
