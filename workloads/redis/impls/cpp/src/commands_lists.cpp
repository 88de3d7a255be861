// List commands. A list that becomes empty is deleted with its key.
#include "commands_common.hpp"

#include <algorithm>

namespace redis::cmd {

namespace {

using util::int_arg;
using util::wrong_type;

enum class End { head, tail };

void push_generic(Context &ctx, Args args, End end, bool only_existing) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::list)) {
        return;
    }
    if (ref.entry == nullptr && only_existing) {
        ctx.reply.integer(0);
        return;
    }
    List *list = nullptr;
    if (ref.entry == nullptr) {
        auto fresh = std::make_unique<List>();
        list = fresh.get();
        db.put(ref, Entry::create_object(args[1], Type::list, fresh.get()));
        fresh.release(); // owned by the entry now
    } else {
        list = ref.entry->object<List>();
    }
    for (std::size_t i = 2; i < args.size(); ++i) {
        if (end == End::head) {
            list->push_front(args[i]);
        } else {
            list->push_back(args[i]);
        }
    }
    ctx.reply.integer(static_cast<std::int64_t>(list->size()));
}

void pop_generic(Context &ctx, Args args, End end) {
    const bool has_count = args.size() == 3;
    std::int64_t count = 0;
    if (args.size() > 3) {
        util::arity_error(ctx, end == End::head ? "lpop" : "rpop");
        return;
    }
    if (has_count && (!parse_int64(args[2], count) || count < 0)) {
        ctx.reply.error(errors::kPositive);
        return;
    }
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (ref.entry == nullptr) {
        if (has_count) {
            ctx.reply.null_array();
        } else {
            ctx.reply.null_bulk();
        }
        return;
    }
    if (wrong_type(ctx, ref.entry, Type::list)) {
        return;
    }
    // An element is copied into the reply before it is popped: its view may be into the list.
    List &items = *ref.entry->object<List>();
    if (has_count) {
        const auto n = std::min(static_cast<std::size_t>(count), items.size());
        ctx.reply.array(n);
        for (std::size_t i = 0; i < n; ++i) {
            if (end == End::head) {
                ctx.reply.bulk(items.front());
                items.pop_front();
            } else {
                ctx.reply.bulk(items.back());
                items.pop_back();
            }
        }
    } else if (end == End::head) {
        ctx.reply.bulk(items.front());
        items.pop_front();
    } else {
        ctx.reply.bulk(items.back());
        items.pop_back();
    }
    if (items.empty()) {
        db.remove(ref);
    }
}

} // namespace

void lpush(Context &ctx, Args args) {
    push_generic(ctx, args, End::head, false);
}

void rpush(Context &ctx, Args args) {
    push_generic(ctx, args, End::tail, false);
}

void lpushx(Context &ctx, Args args) {
    push_generic(ctx, args, End::head, true);
}

void rpushx(Context &ctx, Args args) {
    push_generic(ctx, args, End::tail, true);
}

void lpop(Context &ctx, Args args) {
    pop_generic(ctx, args, End::head);
}

void rpop(Context &ctx, Args args) {
    pop_generic(ctx, args, End::tail);
}

void llen(Context &ctx, Args args) {
    bool wrong = false;
    const List *list =
        util::collection<List>(ctx, ctx.db().get(args[1], ctx.now_ms), Type::list, wrong);
    if (!wrong) {
        ctx.reply.integer(list ? static_cast<std::int64_t>(list->size()) : 0);
    }
}

void lindex(Context &ctx, Args args) {
    bool wrong = false;
    const List *list =
        util::collection<List>(ctx, ctx.db().get(args[1], ctx.now_ms), Type::list, wrong);
    if (wrong) {
        return;
    }
    if (list == nullptr) {
        ctx.reply.null_bulk();
        return;
    }
    std::int64_t index = 0;
    if (!int_arg(ctx, args[2], index)) {
        return;
    }
    const auto size = static_cast<std::int64_t>(list->size());
    if (index < 0) {
        index += size;
    }
    if (index < 0 || index >= size) {
        ctx.reply.null_bulk();
        return;
    }
    ctx.reply.bulk((*list)[static_cast<std::size_t>(index)]);
}

void lset(Context &ctx, Args args) {
    const Entry *e = ctx.db().get(args[1], ctx.now_ms);
    if (e == nullptr) {
        ctx.reply.error(errors::kNoSuchKey);
        return;
    }
    if (wrong_type(ctx, e, Type::list)) {
        return;
    }
    std::int64_t index = 0;
    if (!int_arg(ctx, args[2], index)) {
        return;
    }
    List &items = *e->object<List>();
    const auto size = static_cast<std::int64_t>(items.size());
    if (index < 0) {
        index += size;
    }
    if (index < 0 || index >= size) {
        ctx.reply.error(errors::kOutOfRange);
        return;
    }
    items.set(static_cast<std::size_t>(index), args[3]);
    ctx.reply.ok();
}

void lrange(Context &ctx, Args args) {
    std::int64_t start = 0;
    std::int64_t stop = 0;
    if (!int_arg(ctx, args[2], start) || !int_arg(ctx, args[3], stop)) {
        return;
    }
    bool wrong = false;
    const List *list =
        util::collection<List>(ctx, ctx.db().get(args[1], ctx.now_ms), Type::list, wrong);
    if (wrong) {
        return;
    }
    if (list == nullptr ||
        !util::clamp_range(start, stop, static_cast<std::int64_t>(list->size()))) {
        ctx.reply.empty_array();
        return;
    }
    ctx.reply.array(static_cast<std::size_t>(stop - start + 1));
    ctx.reply.bulks(list->at(static_cast<std::size_t>(start)),
                    list->at(static_cast<std::size_t>(stop) + 1));
}

void ltrim(Context &ctx, Args args) {
    std::int64_t start = 0;
    std::int64_t stop = 0;
    if (!int_arg(ctx, args[2], start) || !int_arg(ctx, args[3], stop)) {
        return;
    }
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (ref.entry == nullptr) {
        ctx.reply.ok();
        return;
    }
    if (wrong_type(ctx, ref.entry, Type::list)) {
        return;
    }
    List &items = *ref.entry->object<List>();
    if (!util::clamp_range(start, stop, static_cast<std::int64_t>(items.size()))) {
        db.remove(ref); // nothing kept
        ctx.reply.ok();
        return;
    }
    items.keep(static_cast<std::size_t>(start), static_cast<std::size_t>(stop - start + 1));
    ctx.reply.ok();
}

void lrem(Context &ctx, Args args) {
    std::int64_t count = 0;
    if (!int_arg(ctx, args[2], count)) {
        return;
    }
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (ref.entry == nullptr) {
        ctx.reply.integer(0);
        return;
    }
    if (wrong_type(ctx, ref.entry, Type::list)) {
        return;
    }
    List &items = *ref.entry->object<List>();
    // How many to remove (0 = all), from the head (count >= 0) or the tail (count < 0).
    const std::uint64_t limit = count == 0 ? ~std::uint64_t{0}
                                           : (count > 0 ? static_cast<std::uint64_t>(count)
                                                        : 0 - static_cast<std::uint64_t>(count));
    const std::size_t removed = items.remove(args[3], limit, count < 0);
    if (items.empty()) {
        db.remove(ref);
    }
    ctx.reply.integer(static_cast<std::int64_t>(removed));
}

} // namespace redis::cmd
