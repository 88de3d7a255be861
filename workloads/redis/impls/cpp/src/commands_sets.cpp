// Set commands. A set that becomes empty is deleted with its key.
#include "commands_common.hpp"

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace redis::cmd {

namespace {

using util::wrong_type;

const Set *set_for_read(Context &ctx, std::string_view key, bool &wrong) {
    return util::collection<Set>(ctx, ctx.db().get(key, ctx.now_ms), Type::set, wrong);
}

} // namespace

void sadd(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::set)) {
        return;
    }
    Set *set = nullptr;
    if (ref.entry == nullptr) {
        auto fresh = std::make_unique<Set>();
        set = fresh.get();
        db.put(ref, Entry::create_object(args[1], Type::set, set));
        fresh.release(); // owned by the entry now
    } else {
        set = ref.entry->object<Set>();
    }
    std::int64_t added = 0;
    for (std::size_t i = 2; i < args.size(); ++i) {
        added += set->add(args[i]) ? 1 : 0;
    }
    ctx.reply.integer(added);
}

void srem(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::set)) {
        return;
    }
    if (ref.entry == nullptr) {
        ctx.reply.integer(0);
        return;
    }
    Set *set = ref.entry->object<Set>();
    std::int64_t removed = 0;
    for (std::size_t i = 2; i < args.size() && set->size() != 0; ++i) {
        removed += set->remove(args[i]) ? 1 : 0;
    }
    if (set->size() == 0) {
        db.remove(ref);
    }
    ctx.reply.integer(removed);
}

void smembers(Context &ctx, Args args) {
    bool wrong = false;
    const Set *set = set_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    if (set == nullptr) {
        ctx.reply.set(0);
        return;
    }
    ctx.reply.set(set->size());
    set->for_each([&](std::string_view m) { ctx.reply.bulk(m); });
}

void sismember(Context &ctx, Args args) {
    bool wrong = false;
    const Set *set = set_for_read(ctx, args[1], wrong);
    if (!wrong) {
        ctx.reply.integer(set && set->contains(args[2]) ? 1 : 0);
    }
}

void smismember(Context &ctx, Args args) {
    bool wrong = false;
    const Set *set = set_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    ctx.reply.array(args.size() - 2);
    for (std::size_t i = 2; i < args.size(); ++i) {
        ctx.reply.integer(set && set->contains(args[i]) ? 1 : 0);
    }
}

void scard(Context &ctx, Args args) {
    bool wrong = false;
    const Set *set = set_for_read(ctx, args[1], wrong);
    if (!wrong) {
        ctx.reply.integer(set ? static_cast<std::int64_t>(set->size()) : 0);
    }
}

void spop(Context &ctx, Args args) {
    if (args.size() > 3) {
        ctx.reply.error(errors::kSyntax);
        return;
    }
    const bool has_count = args.size() == 3;
    std::int64_t count = 1;
    if (has_count && (!parse_int64(args[2], count) || count < 0)) {
        ctx.reply.error(errors::kPositive);
        return;
    }
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (ref.entry == nullptr) {
        if (has_count) {
            ctx.reply.set(0);
        } else {
            ctx.reply.null_bulk();
        }
        return;
    }
    if (wrong_type(ctx, ref.entry, Type::set)) {
        return;
    }
    Set *set = ref.entry->object<Set>();
    const std::size_t n = std::min(static_cast<std::size_t>(count), set->size());
    if (has_count) {
        ctx.reply.set(n);
    }
    for (std::size_t i = 0; i < n; ++i) {
        set->pop_random(ctx.rng(), [&](std::string_view m) { ctx.reply.bulk(m); });
    }
    if (set->size() == 0) {
        db.remove(ref);
    }
}

void srandmember(Context &ctx, Args args) {
    if (args.size() > 3) {
        ctx.reply.error(errors::kSyntax);
        return;
    }
    if (args.size() == 2) {
        bool wrong = false;
        const Set *set = set_for_read(ctx, args[1], wrong);
        if (wrong) {
            return;
        }
        if (set == nullptr) {
            ctx.reply.null_bulk();
        } else {
            ctx.reply.bulk(set->random_member(ctx.rng()));
        }
        return;
    }
    std::int64_t count = 0;
    if (!util::int_arg(ctx, args[2], count)) {
        return;
    }
    if (count == std::numeric_limits<std::int64_t>::min()) {
        ctx.reply.error("ERR value is out of range, value must between -9223372036854775807 and "
                        "9223372036854775807");
        return;
    }
    bool wrong = false;
    const Set *set = set_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    if (set == nullptr || count == 0) {
        ctx.reply.empty_array();
        return;
    }
    if (count < 0) {
        // Repetitions allowed: count picks. A huge count stops once the reply passes the
        // output limit (the connection is then closed, as redis does).
        const auto n = static_cast<std::uint64_t>(-count);
        ctx.reply.array(static_cast<std::size_t>(n));
        for (std::uint64_t i = 0; i < n && !ctx.reply.full(); ++i) {
            ctx.reply.bulk(set->random_member(ctx.rng()));
        }
        return;
    }
    const auto n = static_cast<std::size_t>(count);
    if (n >= set->size()) {
        ctx.reply.array(set->size());
        set->for_each([&](std::string_view m) { ctx.reply.bulk(m); });
        return;
    }
    // Distinct members: collect them all, then a partial Fisher-Yates shuffle.
    std::vector<std::string_view> all;
    all.reserve(set->size());
    set->for_each([&](std::string_view m) { all.push_back(m); });
    ctx.reply.array(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t j = i + ctx.rng() % (all.size() - i);
        std::swap(all[i], all[j]);
        ctx.reply.bulk(all[i]);
    }
}

} // namespace redis::cmd
