// Keyspace commands: existence, deletion, expiry, iteration, databases.
#include "commands_common.hpp"
#include "globmatch.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace redis::cmd {

namespace {

using util::int_arg;
using util::option_is;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

std::string_view type_name(const Entry *e) {
    if (e == nullptr) {
        return "none";
    }
    switch (e->type()) {
    case Type::string:
        return "string";
    case Type::list:
        return "list";
    case Type::hash:
        return "hash";
    case Type::set:
        return "set";
    case Type::zset:
        return "zset";
    }
    return "none";
}

// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (redis's expireGenericCommand). `base` is added to the
// argument: now for the relative forms, 0 for the absolute ones.
void expire_generic(Context &ctx, Args args, std::int64_t base, bool seconds,
                    std::string_view command) {
    bool nx = false;
    bool xx = false;
    bool gt = false;
    bool lt = false;
    for (std::size_t j = 3; j < args.size(); ++j) {
        if (option_is(args[j], "nx")) {
            nx = true;
        } else if (option_is(args[j], "xx")) {
            xx = true;
        } else if (option_is(args[j], "gt")) {
            gt = true;
        } else if (option_is(args[j], "lt")) {
            lt = true;
        } else {
            std::string msg = "ERR Unsupported option ";
            msg += util::c_string(args[j]);
            ctx.reply.error(msg);
            return;
        }
    }
    if (nx && (xx || gt || lt)) {
        ctx.reply.error("ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if (gt && lt) {
        ctx.reply.error("ERR GT and LT options at the same time are not compatible");
        return;
    }
    std::int64_t when = 0;
    if (!int_arg(ctx, args[2], when)) {
        return;
    }
    auto invalid = [&] {
        std::string msg = "ERR invalid expire time in '";
        msg += command;
        msg += "' command";
        ctx.reply.error(msg);
    };
    if (seconds) {
        if (when > kInt64Max / 1000 || when < kInt64Min / 1000) {
            invalid();
            return;
        }
        when *= 1000;
    }
    if (when > kInt64Max - base) {
        invalid();
        return;
    }
    when += base;

    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (ref.entry == nullptr) {
        ctx.reply.integer(0);
        return;
    }
    const std::int64_t current = ref.entry->expire_at();
    const bool has = current != kNoExpire;
    if ((nx && has) || (xx && !has) || (gt && (!has || when <= current)) ||
        (lt && has && when >= current)) {
        ctx.reply.integer(0);
        return;
    }
    if (when <= ctx.now_ms) {
        db.remove(ref); // a time already past deletes the key
    } else {
        db.put(ref, Entry::assign_expire(ref.entry, when));
    }
    ctx.reply.integer(1);
}

// TTL, PTTL, EXPIRETIME, PEXPIRETIME.
void ttl_generic(Context &ctx, Args args, bool ms, bool absolute) {
    const Entry *e = ctx.db().get(args[1], ctx.now_ms);
    if (e == nullptr) {
        ctx.reply.integer(-2);
        return;
    }
    if (!e->has_expire()) {
        ctx.reply.integer(-1);
        return;
    }
    std::int64_t t = absolute ? e->expire_at() : e->expire_at() - ctx.now_ms;
    if (t < 0) {
        t = 0;
    }
    // Seconds rounded half up, as redis's (t+500)/1000, without its signed overflow near the
    // largest time (a PXAT of 2^63-1: UBSan in the sanitize profile).
    ctx.reply.integer(ms ? t : t / 1000 + (t % 1000 >= 500 ? 1 : 0));
}

// FLUSHDB/FLUSHALL's optional SYNC or ASYNC (both run synchronously here).
bool flush_flags_ok(Context &ctx, Args args) {
    if (args.size() == 1 ||
        (args.size() == 2 && (option_is(args[1], "sync") || option_is(args[1], "async")))) {
        return true;
    }
    ctx.reply.error(errors::kSyntax);
    return false;
}

void rename_generic(Context &ctx, Args args, bool nx) {
    Db &db = ctx.db();
    Db::Ref src = db.find(args[1], ctx.now_ms);
    if (src.entry == nullptr) {
        ctx.reply.error(errors::kNoSuchKey);
        return;
    }
    if (args[1] == args[2]) {
        if (nx) {
            ctx.reply.integer(0);
        } else {
            ctx.reply.ok();
        }
        return;
    }
    if (nx && db.get(args[2], ctx.now_ms) != nullptr) {
        ctx.reply.integer(0);
        return;
    }
    // Move the value: unlink the source block, build the destination block around the same
    // value (the collection pointer moves; a string is copied), then free the old block.
    src = db.find(args[1], ctx.now_ms);
    Entry *old = db.detach(src);
    Entry *fresh =
        old->type() == Type::string
            ? Entry::create_string(args[2], old->string_value(), old->expire_at())
            : Entry::create_object(args[2], old->type(), old->object<void>(), old->expire_at());
    Entry::free_block(old);
    Db::Ref dst = db.find(args[2], ctx.now_ms);
    db.put(dst, fresh);
    if (nx) {
        ctx.reply.integer(1);
    } else {
        ctx.reply.ok();
    }
}

} // namespace

void del(Context &ctx, Args args) {
    Db &db = ctx.db();
    std::int64_t deleted = 0;
    for (std::size_t i = 1; i < args.size(); ++i) {
        Db::Ref ref = db.find(args[i], ctx.now_ms);
        if (ref.entry != nullptr) {
            db.remove(ref);
            ++deleted;
        }
    }
    ctx.reply.integer(deleted);
}

void exists(Context &ctx, Args args) {
    Db &db = ctx.db();
    std::int64_t n = 0;
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (db.get(args[i], ctx.now_ms) != nullptr) {
            ++n;
        }
    }
    ctx.reply.integer(n);
}

void type(Context &ctx, Args args) {
    ctx.reply.simple(type_name(ctx.db().get(args[1], ctx.now_ms)));
}

void expire(Context &ctx, Args args) {
    expire_generic(ctx, args, ctx.now_ms, true, "expire");
}

void pexpire(Context &ctx, Args args) {
    expire_generic(ctx, args, ctx.now_ms, false, "pexpire");
}

void expireat(Context &ctx, Args args) {
    expire_generic(ctx, args, 0, true, "expireat");
}

void pexpireat(Context &ctx, Args args) {
    expire_generic(ctx, args, 0, false, "pexpireat");
}

void ttl(Context &ctx, Args args) {
    ttl_generic(ctx, args, false, false);
}

void pttl(Context &ctx, Args args) {
    ttl_generic(ctx, args, true, false);
}

void expiretime(Context &ctx, Args args) {
    ttl_generic(ctx, args, false, true);
}

void pexpiretime(Context &ctx, Args args) {
    ttl_generic(ctx, args, true, true);
}

void persist(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (ref.entry == nullptr || !ref.entry->has_expire()) {
        ctx.reply.integer(0);
        return;
    }
    db.put(ref, Entry::assign_expire(ref.entry, kNoExpire));
    ctx.reply.integer(1);
}

void keys(Context &ctx, Args args) {
    const std::string_view pattern = args[1];
    const bool all = pattern == "*";
    const Db &db = ctx.db();
    // The count is known only at the end: collect first (as redis's deferred array length).
    std::vector<std::string_view> found;
    db.keys().for_each([&](const Entry *e) {
        if ((e->has_expire() && e->expire_at() <= ctx.now_ms)) {
            return;
        }
        const std::string_view k = e->key();
        if (all || glob_match(pattern, k)) {
            found.push_back(k);
        }
    });
    ctx.reply.array(found.size());
    for (const std::string_view k : found) {
        ctx.reply.bulk(k);
    }
}

void scan(Context &ctx, Args args) {
    // The cursor is read with strtoul, as redis: "+5", "007" and "-1" (wrapping) are valid.
    const std::string cursor_text(util::c_string(args[1]));
    char *end = nullptr;
    errno = 0;
    const unsigned long parsed = std::strtoul(cursor_text.c_str(), &end, 10);
    const char first = cursor_text.empty() ? '\0' : cursor_text[0];
    if (first == ' ' || (first >= '\t' && first <= '\r') || *end != '\0' || errno == ERANGE) {
        ctx.reply.error("ERR invalid cursor");
        return;
    }
    std::int64_t count = 10;
    std::string_view pattern;
    bool use_pattern = false;
    std::string_view type_filter;
    bool use_type = false;
    for (std::size_t i = 2; i < args.size();) {
        const std::size_t left = args.size() - i;
        if (option_is(args[i], "count") && left >= 2) {
            if (!int_arg(ctx, args[i + 1], count)) {
                return;
            }
            if (count < 1) {
                ctx.reply.error(errors::kSyntax);
                return;
            }
            i += 2;
        } else if (option_is(args[i], "match") && left >= 2) {
            pattern = args[i + 1];
            use_pattern = pattern != "*";
            i += 2;
        } else if (option_is(args[i], "type") && left >= 2) {
            type_filter = util::c_string(args[i + 1]);
            use_type = true;
            i += 2;
        } else {
            ctx.reply.error(errors::kSyntax);
            return;
        }
    }
    Db &db = ctx.db();
    std::vector<std::string> found;
    const std::uint64_t next =
        db.keys().scan(parsed, static_cast<std::size_t>(count),
                       [&](const Entry *e) { found.emplace_back(e->key()); });
    // Filter after the walk (the walk must not change the table): pattern, type, expiry.
    std::vector<std::string_view> keep;
    for (const std::string &k : found) {
        if (use_pattern && !glob_match(pattern, k)) {
            continue;
        }
        const Entry *e = db.get(k, ctx.now_ms); // deletes it if expired
        if (e == nullptr) {
            continue;
        }
        if (use_type) {
            const std::string_view t = type_name(e);
            bool same = t.size() == type_filter.size();
            for (std::size_t i = 0; same && i < t.size(); ++i) {
                same = t[i] ==
                       static_cast<char>(std::tolower(static_cast<unsigned char>(type_filter[i])));
            }
            if (!same) {
                continue;
            }
        }
        keep.push_back(k);
    }
    ctx.reply.array(2);
    char buf[kNumberChars];
    const auto r = std::to_chars(buf, buf + sizeof buf, next);
    ctx.reply.bulk({buf, static_cast<std::size_t>(r.ptr - buf)});
    ctx.reply.array(keep.size());
    for (const std::string_view k : keep) {
        ctx.reply.bulk(k);
    }
}

void dbsize(Context &ctx, Args) {
    ctx.reply.integer(static_cast<std::int64_t>(ctx.db().size()));
}

void flushdb(Context &ctx, Args args) {
    if (flush_flags_ok(ctx, args)) {
        ctx.db().clear();
        ctx.reply.ok();
    }
}

void flushall(Context &ctx, Args args) {
    if (flush_flags_ok(ctx, args)) {
        for (int i = 0; i < kDatabases; ++i) {
            ctx.store.db(i).clear();
        }
        ctx.reply.ok();
    }
}

void select(Context &ctx, Args args) {
    std::int64_t id = 0;
    if (!int_arg(ctx, args[1], id)) {
        return;
    }
    if (id < std::numeric_limits<int>::min() || id > std::numeric_limits<int>::max()) {
        ctx.reply.error("ERR value is out of range, value must between -2147483648 and 2147483647");
        return;
    }
    if (id < 0 || id >= kDatabases) {
        ctx.reply.error(errors::kDbIndex);
        return;
    }
    ctx.session.db = static_cast<int>(id);
    ctx.reply.ok();
}

void randomkey(Context &ctx, Args) {
    const Entry *e = ctx.db().random_entry(ctx.rng, ctx.now_ms);
    if (e == nullptr) {
        ctx.reply.null_bulk();
    } else {
        ctx.reply.bulk(e->key());
    }
}

void rename(Context &ctx, Args args) {
    rename_generic(ctx, args, false);
}

void renamenx(Context &ctx, Args args) {
    rename_generic(ctx, args, true);
}

} // namespace redis::cmd
