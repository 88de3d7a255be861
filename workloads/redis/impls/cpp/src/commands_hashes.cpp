// Hash commands. A hash that becomes empty is deleted with its key.
#include "commands_common.hpp"

#include <cmath>
#include <limits>
#include <memory>

namespace redis::cmd {

namespace {

using util::wrong_type;

// The hash at `key`, created when missing; null after a WRONGTYPE reply.
Hash *hash_for_write(Context &ctx, std::string_view key) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(key, ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::hash)) {
        return nullptr;
    }
    if (ref.entry != nullptr) {
        return ref.entry->object<Hash>();
    }
    auto fresh = std::make_unique<Hash>();
    Hash *h = fresh.get();
    db.put(ref, Entry::create_object(key, Type::hash, h));
    fresh.release(); // owned by the entry now
    return h;
}

// The hash at `key` for reading; null when missing or after a WRONGTYPE reply (`wrong`).
const Hash *hash_for_read(Context &ctx, std::string_view key, bool &wrong) {
    return util::collection<Hash>(ctx, ctx.db().get(key, ctx.now_ms), Type::hash, wrong);
}

std::size_t hset_pairs(Context &ctx, Args args, std::string_view name, bool &ok) {
    ok = false;
    if (args.size() % 2 == 1U) {
        util::arity_error(ctx, name);
        return 0;
    }
    Hash *h = hash_for_write(ctx, args[1]);
    if (h == nullptr) {
        return 0;
    }
    for (std::size_t i = 2; i < args.size(); i += 2) {
        h->prepare_for(args[i], args[i + 1]);
    }
    std::size_t created = 0;
    for (std::size_t i = 2; i < args.size(); i += 2) {
        created += h->set(args[i], args[i + 1]) ? 1U : 0U;
    }
    ok = true;
    return created;
}

} // namespace

void hset(Context &ctx, Args args) {
    bool ok = false;
    const std::size_t created = hset_pairs(ctx, args, "hset", ok);
    if (ok) {
        ctx.reply.integer(static_cast<std::int64_t>(created));
    }
}

void hmset(Context &ctx, Args args) {
    bool ok = false;
    hset_pairs(ctx, args, "hmset", ok);
    if (ok) {
        ctx.reply.ok();
    }
}

void hsetnx(Context &ctx, Args args) {
    Hash *h = hash_for_write(ctx, args[1]);
    if (h == nullptr) {
        return;
    }
    if (h->get(args[2])) {
        ctx.reply.integer(0);
        return;
    }
    h->set(args[2], args[3]);
    ctx.reply.integer(1);
}

void hget(Context &ctx, Args args) {
    bool wrong = false;
    const Hash *h = hash_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    const auto v = h ? h->get(args[2]) : std::nullopt;
    if (v) {
        ctx.reply.bulk(*v);
    } else {
        ctx.reply.null_bulk();
    }
}

void hmget(Context &ctx, Args args) {
    bool wrong = false;
    const Hash *h = hash_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    ctx.reply.array(args.size() - 2);
    for (std::size_t i = 2; i < args.size(); ++i) {
        const auto v = h ? h->get(args[i]) : std::nullopt;
        if (v) {
            ctx.reply.bulk(*v);
        } else {
            ctx.reply.null_bulk();
        }
    }
}

void hgetall(Context &ctx, Args args) {
    bool wrong = false;
    const Hash *h = hash_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    if (h == nullptr) {
        ctx.reply.map(0);
        return;
    }
    ctx.reply.map(h->size());
    h->for_each([&](std::string_view f, std::string_view v) {
        ctx.reply.bulk(f);
        ctx.reply.bulk(v);
    });
}

void hkeys(Context &ctx, Args args) {
    bool wrong = false;
    const Hash *h = hash_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    if (h == nullptr) {
        ctx.reply.empty_array();
        return;
    }
    ctx.reply.array(h->size());
    h->for_each([&](std::string_view f, std::string_view) { ctx.reply.bulk(f); });
}

void hvals(Context &ctx, Args args) {
    bool wrong = false;
    const Hash *h = hash_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    if (h == nullptr) {
        ctx.reply.empty_array();
        return;
    }
    ctx.reply.array(h->size());
    h->for_each([&](std::string_view, std::string_view v) { ctx.reply.bulk(v); });
}

void hdel(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::hash)) {
        return;
    }
    if (ref.entry == nullptr) {
        ctx.reply.integer(0);
        return;
    }
    Hash *h = ref.entry->object<Hash>();
    std::int64_t deleted = 0;
    for (std::size_t i = 2; i < args.size() && h->size() != 0; ++i) {
        deleted += h->remove(args[i]) ? 1 : 0;
    }
    if (h->size() == 0) {
        db.remove(ref);
    }
    ctx.reply.integer(deleted);
}

void hlen(Context &ctx, Args args) {
    bool wrong = false;
    const Hash *h = hash_for_read(ctx, args[1], wrong);
    if (!wrong) {
        ctx.reply.integer(h ? static_cast<std::int64_t>(h->size()) : 0);
    }
}

void hexists(Context &ctx, Args args) {
    bool wrong = false;
    const Hash *h = hash_for_read(ctx, args[1], wrong);
    if (!wrong) {
        ctx.reply.integer(h && h->get(args[2]) ? 1 : 0);
    }
}

void hstrlen(Context &ctx, Args args) {
    bool wrong = false;
    const Hash *h = hash_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    const auto v = h ? h->get(args[2]) : std::nullopt;
    ctx.reply.integer(v ? static_cast<std::int64_t>(v->size()) : 0);
}

void hincrby(Context &ctx, Args args) {
    std::int64_t incr = 0;
    if (!util::int_arg(ctx, args[3], incr)) {
        return;
    }
    Hash *h = hash_for_write(ctx, args[1]);
    if (h == nullptr) {
        return;
    }
    std::int64_t value = 0;
    if (const auto old = h->get(args[2])) {
        if (!parse_int64(*old, value)) {
            ctx.reply.error("ERR hash value is not an integer");
            return;
        }
    }
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
    if ((incr < 0 && value < 0 && incr < kMin - value) ||
        (incr > 0 && value > 0 && incr > kMax - value)) {
        ctx.reply.error(errors::kOverflow);
        return;
    }
    value += incr;
    char buf[kNumberChars];
    h->set(args[2], format_int64(value, buf));
    ctx.reply.integer(value);
}

void hincrbyfloat(Context &ctx, Args args) {
    long double incr = 0;
    if (!parse_long_double(args[3], incr)) {
        ctx.reply.error(errors::kNotFloat);
        return;
    }
    if (std::isnan(incr) || std::isinf(incr)) {
        ctx.reply.error("ERR value is NaN or Infinity");
        return;
    }
    Hash *h = hash_for_write(ctx, args[1]);
    if (h == nullptr) {
        return;
    }
    long double value = 0;
    if (const auto old = h->get(args[2])) {
        if (!parse_long_double(*old, value)) {
            ctx.reply.error("ERR hash value is not a float");
            return;
        }
    }
    value += incr;
    if (std::isnan(value) || std::isinf(value)) {
        ctx.reply.error("ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[5 * 1024];
    std::size_t len = 0;
    if (!format_long_double(value, buf, sizeof buf, len)) {
        len = 0;
    }
    const std::string_view text(buf, len);
    h->set(args[2], text);
    ctx.reply.bulk(text);
}

} // namespace redis::cmd
