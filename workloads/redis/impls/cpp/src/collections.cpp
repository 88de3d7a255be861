#include "collections.hpp"

#include "numeric.hpp"

#include <cmath>
#include <cstring>
#include <new>

namespace redis {

void *allocate_block(std::size_t n) {
    void *p = std::malloc(n);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

namespace {

unsigned char *put_bytes(unsigned char *p, std::string_view s) {
    p = varint::put(p, s.size());
    std::memcpy(p, s.data(), s.size());
    return p + s.size();
}

std::size_t sized(std::string_view s) {
    return varint::size(s.size()) + s.size();
}

} // namespace

Member *Member::create(std::string_view s) {
    auto *p = static_cast<unsigned char *>(allocate_block(sized(s)));
    put_bytes(p, s);
    return reinterpret_cast<Member *>(p);
}

Field *Field::create(std::string_view name, std::string_view value) {
    auto *p = static_cast<unsigned char *>(allocate_block(sized(name) + sized(value)));
    put_bytes(put_bytes(p, name), value);
    return reinterpret_cast<Field *>(p);
}

ZMember *ZMember::create(std::string_view name, double score) {
    auto *p = static_cast<unsigned char *>(allocate_block(sizeof(double) + sized(name)));
    std::memcpy(p, &score, sizeof score);
    put_bytes(p + sizeof score, name);
    return reinterpret_cast<ZMember *>(p);
}

Set::~Set() {
    for (Member *m : sorted_) {
        Member::destroy(m);
    }
    table_.for_each([](Member *m) { Member::destroy(m); });
}

std::size_t Set::lower_bound(std::int64_t v) const {
    std::size_t lo = 0;
    std::size_t hi = sorted_.size();
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        std::int64_t m = 0;
        parse_int64(sorted_[mid]->str(), m);
        if (m < v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

void Set::convert_to_table() {
    for (Member *m : sorted_) {
        table_.insert_new(hash_bytes(m->str()), m);
    }
    sorted_.clear();
    sorted_.shrink_to_fit();
    intset_ = false;
}

bool Set::contains(std::string_view member) const {
    if (!intset_) {
        return table_.find(member) != FlatTable<MemberTraits>::npos;
    }
    std::int64_t v = 0;
    if (!parse_int64(member, v)) {
        return false;
    }
    const std::size_t i = lower_bound(v);
    return i < sorted_.size() && sorted_[i]->str() == member;
}

bool Set::add(std::string_view member) {
    if (intset_) {
        std::int64_t v = 0;
        if (parse_int64(member, v)) {
            const std::size_t i = lower_bound(v);
            if (i < sorted_.size() && sorted_[i]->str() == member) {
                return false;
            }
            if (sorted_.size() < kMaxIntsetEntries) {
                sorted_.insert(sorted_.begin() + static_cast<std::ptrdiff_t>(i),
                               Member::create(member));
                return true;
            }
        }
        convert_to_table();
    }
    const std::uint64_t h = hash_bytes(member);
    if (table_.find(member, h) != FlatTable<MemberTraits>::npos) {
        return false;
    }
    table_.insert_new(h, Member::create(member));
    return true;
}

bool Set::remove(std::string_view member) {
    if (intset_) {
        std::int64_t v = 0;
        if (!parse_int64(member, v)) {
            return false;
        }
        const std::size_t i = lower_bound(v);
        if (i >= sorted_.size() || sorted_[i]->str() != member) {
            return false;
        }
        Member::destroy(sorted_[i]);
        sorted_.erase(sorted_.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
    }
    const std::size_t slot = table_.find(member);
    if (slot == FlatTable<MemberTraits>::npos) {
        return false;
    }
    Member::destroy(table_.erase(slot));
    return true;
}

Hash::~Hash() {
    for (Field *f : small_) {
        Field::destroy(f);
    }
    table_.for_each([](Field *f) { Field::destroy(f); });
}

std::size_t Hash::small_find(std::string_view field) const {
    for (std::size_t i = 0; i < small_.size(); ++i) {
        if (small_[i]->name() == field) {
            return i;
        }
    }
    return small_.size();
}

void Hash::convert_to_table() {
    for (Field *f : small_) {
        table_.insert_new(hash_bytes(f->name()), f);
    }
    small_.clear();
    small_.shrink_to_fit();
    listpack_ = false;
}

bool Hash::set(std::string_view field, std::string_view value) {
    prepare_for(field, value);
    if (listpack_) {
        const std::size_t i = small_find(field);
        if (i < small_.size()) {
            Field *old = small_[i];
            small_[i] = Field::create(field, value);
            Field::destroy(old);
            return false;
        }
        small_.push_back(Field::create(field, value));
        if (small_.size() > kMaxListpackEntries) {
            convert_to_table();
        }
        return true;
    }
    const std::uint64_t h = hash_bytes(field);
    const std::size_t slot = table_.find(field, h);
    if (slot == FlatTable<FieldTraits>::npos) {
        table_.insert_new(h, Field::create(field, value));
        return true;
    }
    Field *old = table_.at(slot);
    table_.replace(slot, Field::create(field, value));
    Field::destroy(old);
    return false;
}

std::optional<std::string_view> Hash::get(std::string_view field) const {
    if (listpack_) {
        const std::size_t i = small_find(field);
        if (i == small_.size()) {
            return std::nullopt;
        }
        return small_[i]->value();
    }
    const std::size_t slot = table_.find(field);
    if (slot == FlatTable<FieldTraits>::npos) {
        return std::nullopt;
    }
    return table_.at(slot)->value();
}

bool Hash::remove(std::string_view field) {
    if (listpack_) {
        const std::size_t i = small_find(field);
        if (i == small_.size()) {
            return false;
        }
        Field::destroy(small_[i]);
        small_.erase(small_.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
    }
    const std::size_t slot = table_.find(field);
    if (slot == FlatTable<FieldTraits>::npos) {
        return false;
    }
    Field::destroy(table_.erase(slot));
    return true;
}

ZSet::~ZSet() {
    index_.clear();
    members_.for_each([](ZMember *m) { ZMember::destroy(m); });
}

std::optional<double> ZSet::score(std::string_view member) const {
    const std::size_t slot = members_.find(member);
    if (slot == FlatTable<ZMemberTraits>::npos) {
        return std::nullopt;
    }
    return members_.at(slot)->score();
}

bool ZSet::set(std::string_view member, double score) {
    const std::uint64_t h = hash_bytes(member);
    const std::size_t slot = members_.find(member, h);
    if (slot == FlatTable<ZMemberTraits>::npos) {
        if (listpack_like_ &&
            (members_.size() + 1 > kMaxListpackEntries || member.size() > kMaxListpackValue)) {
            listpack_like_ = false;
        }
        if (listpack_like_ && score == 0.0) {
            score = 0.0; // -0 becomes 0
        }
        ZMember *m = ZMember::create(member, score);
        members_.insert_new(h, m);
        index_.insert({score, m->name()});
        return true;
    }
    ZMember *m = members_.at(slot);
    // Equal scores (including 0 and -0) leave the member as it is, as redis.
    if (m->score() != score) {
        if (listpack_like_ && score == 0.0) {
            score = 0.0;
        }
        index_.erase({m->score(), m->name()});
        m->set_score(score);
        index_.insert({score, m->name()});
    }
    return false;
}

bool ZSet::remove(std::string_view member) {
    const std::size_t slot = members_.find(member);
    if (slot == FlatTable<ZMemberTraits>::npos) {
        return false;
    }
    ZMember *m = members_.at(slot);
    index_.erase({m->score(), m->name()});
    members_.erase(slot);
    ZMember::destroy(m);
    return true;
}

std::optional<std::size_t> ZSet::rank(std::string_view member) const {
    const std::size_t slot = members_.find(member);
    if (slot == FlatTable<ZMemberTraits>::npos) {
        return std::nullopt;
    }
    const ZMember *m = members_.at(slot);
    return index_.order_of_key({m->score(), m->name()});
}

} // namespace redis
