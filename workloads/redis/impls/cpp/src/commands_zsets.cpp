// Sorted-set commands. A sorted set that becomes empty is deleted with its key.
#include "commands_common.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace redis::cmd {

namespace {

using util::option_is;
using util::wrong_type;

const ZSet *zset_for_read(Context &ctx, std::string_view key, bool &wrong) {
    return util::collection<ZSet>(ctx, ctx.db().get(key, ctx.now_ms), Type::zset, wrong);
}

// A score range bound as ZRANGEBYSCORE reads it (redis's zslParseRange): "(" makes it
// exclusive; the number is read with strtod, which here accepts leading blanks and an empty
// string (0) but not trailing bytes or NaN.
struct ScoreRange {
    double min = 0;
    double max = 0;
    bool min_ex = false;
    bool max_ex = false;

    [[nodiscard]] bool above_min(double v) const {
        return min_ex ? v > min : v >= min;
    }
    [[nodiscard]] bool below_max(double v) const {
        return max_ex ? v < max : v <= max;
    }
    [[nodiscard]] bool empty() const {
        return min > max || (min == max && (min_ex || max_ex));
    }
};

bool parse_score_bound(std::string_view arg, double &v, bool &exclusive) {
    std::string text(util::c_string(arg));
    const char *p = text.c_str();
    exclusive = false;
    if (*p == '(') {
        exclusive = true;
        ++p;
    }
    char *end = nullptr;
    v = std::strtod(p, &end);
    return *end == '\0' && !std::isnan(v);
}

bool parse_score_range(std::string_view min, std::string_view max, ScoreRange &r) {
    return parse_score_bound(min, r.min, r.min_ex) && parse_score_bound(max, r.max, r.max_ex);
}

// A lex range bound (redis's zslParseLexRangeItem): "-" and "+" are the extremes, "(" and "["
// start an exclusive or inclusive member.
struct LexBound {
    enum class Kind { min, max, value } kind = Kind::value;
    std::string_view value;
    bool exclusive = false;
};

bool parse_lex_bound(std::string_view arg, LexBound &b) {
    if (arg.empty()) {
        return false;
    }
    switch (arg[0]) {
    case '+':
    case '-':
        if (arg.size() != 1 && arg[1] != '\0') {
            return false;
        }
        b.kind = arg[0] == '+' ? LexBound::Kind::max : LexBound::Kind::min;
        b.exclusive = true;
        return true;
    case '(':
    case '[':
        b.kind = LexBound::Kind::value;
        b.value = arg.substr(1);
        b.exclusive = arg[0] == '(';
        return true;
    default:
        return false;
    }
}

bool lex_above_min(std::string_view v, const LexBound &b) {
    if (b.kind != LexBound::Kind::value) {
        return b.kind == LexBound::Kind::min;
    }
    return b.exclusive ? v > b.value : v >= b.value;
}

bool lex_below_max(std::string_view v, const LexBound &b) {
    if (b.kind != LexBound::Kind::value) {
        return b.kind == LexBound::Kind::max;
    }
    return b.exclusive ? v < b.value : v <= b.value;
}

// The header of n range results: RESP2 flattens member/score pairs, RESP3 nests them.
void reply_range_header(Context &ctx, std::size_t n, bool with_scores) {
    ctx.reply.array(with_scores && !ctx.reply.resp3() ? n * 2 : n);
}

void reply_member(Context &ctx, const ZSet::Key &k, bool with_scores) {
    if (with_scores && ctx.reply.resp3()) {
        ctx.reply.array(2);
    }
    ctx.reply.bulk(k.second);
    if (with_scores) {
        ctx.reply.bulk_double(k.first);
    }
}

// Emits ranks [start, stop] (already clamped), ascending or from the top.
void reply_ranks(Context &ctx, const ZSet &z, std::size_t start, std::size_t stop, bool reverse,
                 bool with_scores) {
    const std::size_t n = stop - start + 1;
    reply_range_header(ctx, n, with_scores);
    const auto &index = z.index();
    if (!reverse) {
        auto it = index.find_by_order(start);
        for (std::size_t i = 0; i < n; ++i, ++it) {
            reply_member(ctx, *it, with_scores);
        }
    } else {
        auto it = index.find_by_order(z.size() - 1 - start);
        for (std::size_t i = 0; i < n; ++i, --it) {
            reply_member(ctx, *it, with_scores);
        }
    }
}

enum class RangeBy { rank, score, lex };

// ZRANGE and its older forms (redis's zrangeGenericCommand): `by` and `reverse` are fixed by
// ZREVRANGE/ZRANGEBYSCORE, or chosen by ZRANGE's BYSCORE/BYLEX/REV options.
void zrange_generic(Context &ctx, Args args, RangeBy by, bool reverse, bool fixed) {
    bool with_scores = false;
    std::int64_t offset = 0;
    std::int64_t limit = -1;
    bool has_limit = false;
    bool by_chosen = fixed;
    bool dir_chosen = fixed;
    for (std::size_t j = 4; j < args.size(); ++j) {
        const std::size_t left = args.size() - j - 1;
        if (option_is(args[j], "withscores")) {
            with_scores = true;
        } else if (option_is(args[j], "limit") && left >= 2) {
            if (!util::int_arg(ctx, args[j + 1], offset) ||
                !util::int_arg(ctx, args[j + 2], limit)) {
                return;
            }
            has_limit = true;
            j += 2;
        } else if (!dir_chosen && option_is(args[j], "rev")) {
            reverse = true;
            dir_chosen = true;
        } else if (!by_chosen && option_is(args[j], "bylex")) {
            by = RangeBy::lex;
            by_chosen = true;
        } else if (!by_chosen && option_is(args[j], "byscore")) {
            by = RangeBy::score;
            by_chosen = true;
        } else {
            ctx.reply.error(errors::kSyntax);
            return;
        }
    }
    if (has_limit && limit != -1 && by == RangeBy::rank) {
        ctx.reply.error("ERR syntax error, LIMIT is only supported in combination with either "
                        "BYSCORE or BYLEX");
        return;
    }
    if (with_scores && by == RangeBy::lex) {
        ctx.reply.error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    // Score and lex ranges are given as max, min when reversed.
    std::string_view lo = args[2];
    std::string_view hi = args[3];
    if (reverse && by != RangeBy::rank) {
        std::swap(lo, hi);
    }
    std::int64_t start = 0;
    std::int64_t stop = 0;
    ScoreRange scores;
    LexBound lex_min;
    LexBound lex_max;
    switch (by) {
    case RangeBy::rank:
        if (!util::int_arg(ctx, lo, start) || !util::int_arg(ctx, hi, stop)) {
            return;
        }
        break;
    case RangeBy::score:
        if (!parse_score_range(lo, hi, scores)) {
            ctx.reply.error("ERR min or max is not a float");
            return;
        }
        break;
    case RangeBy::lex:
        if (!parse_lex_bound(lo, lex_min) || !parse_lex_bound(hi, lex_max)) {
            ctx.reply.error("ERR min or max not valid string range item");
            return;
        }
        break;
    }
    bool wrong = false;
    const ZSet *z = zset_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    if (z == nullptr) {
        ctx.reply.empty_array();
        return;
    }
    const auto size = static_cast<std::int64_t>(z->size());
    if (by == RangeBy::rank) {
        if (!util::clamp_range(start, stop, size)) {
            ctx.reply.empty_array();
            return;
        }
        reply_ranks(ctx, *z, static_cast<std::size_t>(start), static_cast<std::size_t>(stop),
                    reverse, with_scores);
        return;
    }
    // Score and lex ranges: walk from the first member in range (in the walk's direction),
    // skip `offset` members, emit up to `limit` (negative: all) while still in range. As in
    // redis, a negative offset skips everything.
    if ((offset > 0 && offset >= size) || offset < 0) {
        ctx.reply.empty_array();
        return;
    }
    const auto &index = z->index();
    auto in_low = [&](const ZSet::Key &k) {
        return by == RangeBy::score ? scores.above_min(k.first) : lex_above_min(k.second, lex_min);
    };
    auto in_high = [&](const ZSet::Key &k) {
        return by == RangeBy::score ? scores.below_max(k.first) : lex_below_max(k.second, lex_max);
    };
    // Rank of the first member at or above the low end (members are sorted by score, and by
    // member among equal scores, which is the order lex ranges assume).
    auto first_above_low = [&] {
        std::size_t a = 0;
        std::size_t b = z->size();
        while (a < b) {
            const std::size_t mid = a + (b - a) / 2;
            if (in_low(*index.find_by_order(mid))) {
                b = mid;
            } else {
                a = mid + 1;
            }
        }
        return a;
    };
    auto last_below_high = [&] { // rank + 1 of the last member at or below the high end
        std::size_t a = 0;
        std::size_t b = z->size();
        while (a < b) {
            const std::size_t mid = a + (b - a) / 2;
            if (in_high(*index.find_by_order(mid))) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        return a;
    };
    std::vector<ZSet::Key> out;
    if (!(by == RangeBy::score && scores.empty())) {
        const std::size_t lo_rank = first_above_low();
        const std::size_t hi_end = last_below_high();
        if (lo_rank < hi_end) {
            const std::size_t count = hi_end - lo_rank;
            const auto skip = static_cast<std::size_t>(offset);
            if (skip < count) {
                std::size_t take = count - skip;
                if (limit >= 0 && static_cast<std::size_t>(limit) < take) {
                    take = static_cast<std::size_t>(limit);
                }
                out.reserve(take);
                if (!reverse) {
                    auto it = index.find_by_order(lo_rank + skip);
                    for (std::size_t i = 0; i < take; ++i, ++it) {
                        out.push_back(*it);
                    }
                } else {
                    auto it = index.find_by_order(hi_end - 1 - skip);
                    for (std::size_t i = 0; i < take; ++i, --it) {
                        out.push_back(*it);
                    }
                }
            }
        }
    }
    reply_range_header(ctx, out.size(), with_scores);
    for (const auto &k : out) {
        reply_member(ctx, k, with_scores);
    }
}

void zpop_generic(Context &ctx, Args args, bool max) {
    if (args.size() > 3) {
        ctx.reply.error(errors::kSyntax);
        return;
    }
    std::int64_t count = -1; // -1: no count given
    if (args.size() == 3 && (!parse_int64(args[2], count) || count < 0)) {
        ctx.reply.error(errors::kPositive);
        return;
    }
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::zset)) {
        return;
    }
    if (ref.entry == nullptr || count == 0) {
        ctx.reply.empty_array();
        return;
    }
    ZSet *z = ref.entry->object<ZSet>();
    const std::size_t n = std::min(static_cast<std::size_t>(count < 0 ? 1 : count), z->size());
    // RESP3 nests member/score pairs when a count was given; RESP2 always flattens them.
    const bool nested = ctx.reply.resp3() && count >= 0;
    ctx.reply.array(nested ? n : n * 2);
    for (std::size_t i = 0; i < n; ++i) {
        const ZSet::Key k = max ? *z->index().rbegin() : *z->index().begin();
        if (nested) {
            ctx.reply.array(2);
        }
        ctx.reply.bulk(k.second);
        ctx.reply.bulk_double(k.first);
        z->remove(std::string(k.second)); // (the view points into the member being freed)
    }
    if (z->size() == 0) {
        db.remove(ref);
    }
}

// ZADD and ZINCRBY (redis's zaddGenericCommand).
void zadd_generic(Context &ctx, Args args, bool incr) {
    bool nx = false;
    bool xx = false;
    bool gt = false;
    bool lt = false;
    bool ch = false;
    std::size_t i = 2;
    for (; i < args.size(); ++i) {
        const std::string_view opt = args[i];
        if (option_is(opt, "nx")) {
            nx = true;
        } else if (option_is(opt, "xx")) {
            xx = true;
        } else if (option_is(opt, "ch")) {
            ch = true;
        } else if (option_is(opt, "incr")) {
            incr = true;
        } else if (option_is(opt, "gt")) {
            gt = true;
        } else if (option_is(opt, "lt")) {
            lt = true;
        } else {
            break;
        }
    }
    const std::size_t rest = args.size() - i;
    if (rest == 0 || rest % 2 != 0) {
        ctx.reply.error(errors::kSyntax);
        return;
    }
    const std::size_t pairs = rest / 2;
    if (nx && xx) {
        ctx.reply.error("ERR XX and NX options at the same time are not compatible");
        return;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        ctx.reply.error("ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && pairs > 1) {
        ctx.reply.error("ERR INCR option supports a single increment-element pair");
        return;
    }
    // Every score is checked before anything changes.
    std::vector<double> scores(pairs);
    for (std::size_t p = 0; p < pairs; ++p) {
        if (!util::float_arg(ctx, args[i + 2 * p], scores[p])) {
            return;
        }
    }
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::zset)) {
        return;
    }
    std::int64_t added = 0;
    std::int64_t updated = 0;
    std::int64_t processed = 0;
    double score = 0;
    ZSet *z = nullptr;
    if (ref.entry != nullptr) {
        z = ref.entry->object<ZSet>();
    } else if (!xx) {
        auto fresh = std::make_unique<ZSet>(args[i + 1].size());
        z = fresh.get();
        db.put(ref, Entry::create_object(args[1], Type::zset, z));
        fresh.release(); // owned by the entry now
    }
    for (std::size_t p = 0; z != nullptr && p < pairs; ++p) {
        score = scores[p];
        const std::string_view member = args[i + 2 * p + 1];
        if (std::isnan(score)) {
            ctx.reply.error("ERR resulting score is not a number (NaN)");
            return;
        }
        const auto current = z->score(member);
        if (current) {
            if (nx) {
                continue;
            }
            if (incr) {
                score += *current;
                if (std::isnan(score)) {
                    ctx.reply.error("ERR resulting score is not a number (NaN)");
                    return;
                }
            }
            if ((lt && score >= *current) || (gt && score <= *current)) {
                continue;
            }
            if (score != *current) {
                z->set(member, score);
                ++updated;
            }
            ++processed;
        } else if (!xx) {
            z->set(member, score);
            ++added;
            ++processed;
        }
    }
    if (incr) {
        if (processed != 0) {
            ctx.reply.bulk_double(score);
        } else {
            ctx.reply.null_bulk();
        }
    } else {
        ctx.reply.integer(ch ? added + updated : added);
    }
}

void rank_generic(Context &ctx, Args args, bool reverse) {
    bool wrong = false;
    const ZSet *z = zset_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    const auto r = z ? z->rank(args[2]) : std::nullopt;
    if (!r) {
        ctx.reply.null_bulk();
        return;
    }
    const std::size_t rank = reverse ? z->size() - 1 - *r : *r;
    ctx.reply.integer(static_cast<std::int64_t>(rank));
}

} // namespace

void zadd(Context &ctx, Args args) {
    zadd_generic(ctx, args, false);
}

void zincrby(Context &ctx, Args args) {
    zadd_generic(ctx, args, true);
}

void zrange(Context &ctx, Args args) {
    zrange_generic(ctx, args, RangeBy::rank, false, false);
}

void zrevrange(Context &ctx, Args args) {
    zrange_generic(ctx, args, RangeBy::rank, true, true);
}

void zrangebyscore(Context &ctx, Args args) {
    zrange_generic(ctx, args, RangeBy::score, false, true);
}

void zscore(Context &ctx, Args args) {
    bool wrong = false;
    const ZSet *z = zset_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    const auto s = z ? z->score(args[2]) : std::nullopt;
    if (s) {
        ctx.reply.bulk_double(*s);
    } else {
        ctx.reply.null_bulk();
    }
}

void zmscore(Context &ctx, Args args) {
    bool wrong = false;
    const ZSet *z = zset_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    ctx.reply.array(args.size() - 2);
    for (std::size_t i = 2; i < args.size(); ++i) {
        const auto s = z ? z->score(args[i]) : std::nullopt;
        if (s) {
            ctx.reply.bulk_double(*s);
        } else {
            ctx.reply.null_bulk();
        }
    }
}

void zcard(Context &ctx, Args args) {
    bool wrong = false;
    const ZSet *z = zset_for_read(ctx, args[1], wrong);
    if (!wrong) {
        ctx.reply.integer(z ? static_cast<std::int64_t>(z->size()) : 0);
    }
}

void zrem(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::zset)) {
        return;
    }
    if (ref.entry == nullptr) {
        ctx.reply.integer(0);
        return;
    }
    ZSet *z = ref.entry->object<ZSet>();
    std::int64_t removed = 0;
    for (std::size_t i = 2; i < args.size() && z->size() != 0; ++i) {
        removed += z->remove(args[i]) ? 1 : 0;
    }
    if (z->size() == 0) {
        db.remove(ref);
    }
    ctx.reply.integer(removed);
}

void zrank(Context &ctx, Args args) {
    rank_generic(ctx, args, false);
}

void zrevrank(Context &ctx, Args args) {
    rank_generic(ctx, args, true);
}

void zpopmin(Context &ctx, Args args) {
    zpop_generic(ctx, args, false);
}

void zpopmax(Context &ctx, Args args) {
    zpop_generic(ctx, args, true);
}

void zcount(Context &ctx, Args args) {
    ScoreRange r;
    if (!parse_score_range(args[2], args[3], r)) {
        ctx.reply.error("ERR min or max is not a float");
        return;
    }
    bool wrong = false;
    const ZSet *z = zset_for_read(ctx, args[1], wrong);
    if (wrong) {
        return;
    }
    if (z == nullptr || r.empty()) {
        ctx.reply.integer(0);
        return;
    }
    const auto &index = z->index();
    // Ranks of the first member >= min and of the first member > max.
    auto first = [&](auto &&pred) {
        std::size_t a = 0;
        std::size_t b = z->size();
        while (a < b) {
            const std::size_t mid = a + (b - a) / 2;
            if (pred(index.find_by_order(mid)->first)) {
                b = mid;
            } else {
                a = mid + 1;
            }
        }
        return a;
    };
    const std::size_t lo = first([&](double s) { return r.above_min(s); });
    const std::size_t hi = first([&](double s) { return !r.below_max(s); });
    ctx.reply.integer(hi > lo ? static_cast<std::int64_t>(hi - lo) : 0);
}

} // namespace redis::cmd
