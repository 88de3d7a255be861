// String commands: GET/SET and their variants, counters, APPEND, ranges.
#include "commands_common.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace redis::cmd {

namespace {

using util::int_arg;
using util::option_is;
using util::wrong_type;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

// Options of SET and GETEX (redis's parseExtendedStringArgumentsOrReply).
struct StringOptions {
    bool nx = false;
    bool xx = false;
    bool get = false;
    bool keepttl = false;
    bool persist = false;
    enum class Unit { none, ex, px, exat, pxat } unit = Unit::none;
    std::string_view expire_arg;
};

enum class OptionsFor { set, getex };

bool parse_string_options(Context &ctx, Args args, std::size_t from, OptionsFor kind,
                          StringOptions &o) {
    using Unit = StringOptions::Unit;
    const bool is_set = kind == OptionsFor::set;
    for (std::size_t j = from; j < args.size(); ++j) {
        const std::string_view opt = args[j];
        const bool has_next = j + 1 < args.size();
        // An expire option conflicts with every other expire option but itself.
        auto expire_ok = [&](Unit self) {
            return !o.keepttl && !o.persist && (o.unit == Unit::none || o.unit == self) && has_next;
        };
        if (is_set && option_is(opt, "nx") && !o.xx) {
            o.nx = true;
        } else if (is_set && option_is(opt, "xx") && !o.nx) {
            o.xx = true;
        } else if (is_set && option_is(opt, "get")) {
            o.get = true;
        } else if (is_set && option_is(opt, "keepttl") && !o.persist && o.unit == Unit::none) {
            o.keepttl = true;
        } else if (!is_set && option_is(opt, "persist") && o.unit == Unit::none && !o.keepttl) {
            o.persist = true;
        } else if (option_is(opt, "ex") && expire_ok(Unit::ex)) {
            o.unit = Unit::ex;
            o.expire_arg = args[++j];
        } else if (option_is(opt, "px") && expire_ok(Unit::px)) {
            o.unit = Unit::px;
            o.expire_arg = args[++j];
        } else if (option_is(opt, "exat") && expire_ok(Unit::exat)) {
            o.unit = Unit::exat;
            o.expire_arg = args[++j];
        } else if (option_is(opt, "pxat") && expire_ok(Unit::pxat)) {
            o.unit = Unit::pxat;
            o.expire_arg = args[++j];
        } else {
            ctx.reply.error(errors::kSyntax);
            return false;
        }
    }
    return true;
}

void invalid_expire(Context &ctx, std::string_view command) {
    std::string msg = "ERR invalid expire time in '";
    msg += command;
    msg += "' command";
    ctx.reply.error(msg);
}

// The absolute expire time for an expire argument (redis's getExpireMillisecondsOrReply).
bool expire_time(Context &ctx, std::string_view arg, bool seconds, bool relative,
                 std::string_view command, std::int64_t &when) {
    std::int64_t v = 0;
    if (!int_arg(ctx, arg, v)) {
        return false;
    }
    if (v <= 0 || (seconds && v > kInt64Max / 1000)) {
        invalid_expire(ctx, command);
        return false;
    }
    if (seconds) {
        v *= 1000;
    }
    if (relative) {
        // Wraps like redis's C arithmetic; a wrapped (negative) sum is rejected below.
        v = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) +
                                      static_cast<std::uint64_t>(ctx.now_ms));
    }
    if (v <= 0) {
        invalid_expire(ctx, command);
        return false;
    }
    when = v;
    return true;
}

bool options_expire(Context &ctx, const StringOptions &o, std::string_view command,
                    std::int64_t &when) {
    using Unit = StringOptions::Unit;
    if (o.unit == Unit::none) {
        when = kNoExpire;
        return true;
    }
    const bool seconds = o.unit == Unit::ex || o.unit == Unit::exat;
    const bool relative = o.unit == Unit::ex || o.unit == Unit::px;
    return expire_time(ctx, o.expire_arg, seconds, relative, command, when);
}

// Stores a string value under ref.key. keep_ttl keeps an existing expire time; otherwise the
// key gets `expire` (kNoExpire: none).
void store_string(Db &db, Db::Ref &ref, std::string_view value, std::int64_t expire,
                  bool keep_ttl = false) {
    if (keep_ttl && ref.entry != nullptr) {
        expire = ref.entry->expire_at();
    }
    Entry *fresh = ref.entry ? Entry::assign_string(ref.entry, value, expire)
                             : Entry::create_string(ref.key, value, expire);
    db.put(ref, fresh);
}

// The GET part of GET, GETSET, GETDEL and SET ... GET: false after a WRONGTYPE reply.
bool reply_value(Context &ctx, const Entry *e) {
    if (e == nullptr) {
        ctx.reply.null_bulk();
        return true;
    }
    if (wrong_type(ctx, e, Type::string)) {
        return false;
    }
    ctx.reply.bulk(e->string_value());
    return true;
}

// SET, SETNX, SETEX, PSETEX (redis's setGenericCommand).
void set_generic(Context &ctx, std::string_view key, std::string_view value, const StringOptions &o,
                 std::string_view command, bool reply_int) {
    std::int64_t when = kNoExpire;
    if (!options_expire(ctx, o, command, when)) {
        return;
    }
    Db &db = ctx.db();
    Db::Ref ref = db.find(key, ctx.now_ms);
    if (o.get && !reply_value(ctx, ref.entry)) {
        return;
    }
    const bool found = ref.entry != nullptr;
    if ((o.nx && found) || (o.xx && !found)) {
        if (!o.get) {
            if (reply_int) {
                ctx.reply.integer(0);
            } else {
                ctx.reply.null_bulk();
            }
        }
        return;
    }
    store_string(db, ref, value, when, o.keepttl);
    if (!o.get) {
        if (reply_int) {
            ctx.reply.integer(1);
        } else {
            ctx.reply.ok();
        }
    }
}

void incr_by(Context &ctx, std::string_view key, std::int64_t incr) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(key, ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::string)) {
        return;
    }
    std::int64_t value = 0;
    if (ref.entry != nullptr && !parse_int64(ref.entry->string_value(), value)) {
        ctx.reply.error(errors::kNotInteger);
        return;
    }
    if ((incr < 0 && value < 0 && incr < kInt64Min - value) ||
        (incr > 0 && value > 0 && incr > kInt64Max - value)) {
        ctx.reply.error(errors::kOverflow);
        return;
    }
    value += incr;
    char buf[kNumberChars];
    store_string(db, ref, format_int64(value, buf), kNoExpire, true);
    ctx.reply.integer(value);
}

// redis's checkStringLength: a string may not grow past proto-max-bulk-len.
bool check_length(Context &ctx, std::uint64_t size, std::uint64_t append) {
    if (size + append > static_cast<std::uint64_t>(kMaxBulkBytes)) {
        ctx.reply.error(errors::kStringTooLong);
        return false;
    }
    return true;
}

} // namespace

void get(Context &ctx, Args args) {
    reply_value(ctx, ctx.db().get(args[1], ctx.now_ms));
}

void set(Context &ctx, Args args) {
    StringOptions o;
    if (parse_string_options(ctx, args, 3, OptionsFor::set, o)) {
        set_generic(ctx, args[1], args[2], o, "set", false);
    }
}

void setnx(Context &ctx, Args args) {
    StringOptions o;
    o.nx = true;
    set_generic(ctx, args[1], args[2], o, "setnx", true);
}

void setex(Context &ctx, Args args) {
    StringOptions o;
    o.unit = StringOptions::Unit::ex;
    o.expire_arg = args[2];
    set_generic(ctx, args[1], args[3], o, "setex", false);
}

void psetex(Context &ctx, Args args) {
    StringOptions o;
    o.unit = StringOptions::Unit::px;
    o.expire_arg = args[2];
    set_generic(ctx, args[1], args[3], o, "psetex", false);
}

void getset(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (reply_value(ctx, ref.entry)) {
        store_string(db, ref, args[2], kNoExpire);
    }
}

void getdel(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (reply_value(ctx, ref.entry) && ref.entry != nullptr) {
        db.remove(ref);
    }
}

void getex(Context &ctx, Args args) {
    StringOptions o;
    if (!parse_string_options(ctx, args, 2, OptionsFor::getex, o)) {
        return;
    }
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (ref.entry == nullptr) {
        ctx.reply.null_bulk();
        return;
    }
    if (wrong_type(ctx, ref.entry, Type::string)) {
        return;
    }
    // As redis: the key is checked before the expire argument.
    std::int64_t when = kNoExpire;
    if (!options_expire(ctx, o, "getex", when)) {
        return;
    }
    ctx.reply.bulk(ref.entry->string_value());
    using Unit = StringOptions::Unit;
    if ((o.unit == Unit::exat || o.unit == Unit::pxat) && when <= ctx.now_ms) {
        db.remove(ref); // an absolute time already past deletes the key
    } else if (o.unit != Unit::none) {
        db.put(ref, Entry::assign_expire(ref.entry, when));
    } else if (o.persist && ref.entry->has_expire()) {
        db.put(ref, Entry::assign_expire(ref.entry, kNoExpire));
    }
}

void mget(Context &ctx, Args args) {
    Db &db = ctx.db();
    ctx.reply.array(args.size() - 1);
    for (std::size_t i = 1; i < args.size(); ++i) {
        const Entry *e = db.get(args[i], ctx.now_ms);
        if (e == nullptr || e->type() != Type::string) {
            ctx.reply.null_bulk();
        } else {
            ctx.reply.bulk(e->string_value());
        }
    }
}

void mset(Context &ctx, Args args) {
    if (args.size() % 2 == 0) {
        util::arity_error(ctx, "mset");
        return;
    }
    Db &db = ctx.db();
    for (std::size_t i = 1; i < args.size(); i += 2) {
        Db::Ref ref = db.find(args[i], ctx.now_ms);
        store_string(db, ref, args[i + 1], kNoExpire);
    }
    ctx.reply.ok();
}

void msetnx(Context &ctx, Args args) {
    if (args.size() % 2 == 0) {
        util::arity_error(ctx, "msetnx");
        return;
    }
    Db &db = ctx.db();
    for (std::size_t i = 1; i < args.size(); i += 2) {
        if (db.get(args[i], ctx.now_ms) != nullptr) {
            ctx.reply.integer(0);
            return;
        }
    }
    for (std::size_t i = 1; i < args.size(); i += 2) {
        Db::Ref ref = db.find(args[i], ctx.now_ms);
        store_string(db, ref, args[i + 1], kNoExpire);
    }
    ctx.reply.integer(1);
}

void incr(Context &ctx, Args args) {
    incr_by(ctx, args[1], 1);
}

void decr(Context &ctx, Args args) {
    incr_by(ctx, args[1], -1);
}

void incrby(Context &ctx, Args args) {
    std::int64_t n = 0;
    if (int_arg(ctx, args[2], n)) {
        incr_by(ctx, args[1], n);
    }
}

void decrby(Context &ctx, Args args) {
    std::int64_t n = 0;
    if (!int_arg(ctx, args[2], n)) {
        return;
    }
    if (n == kInt64Min) {
        ctx.reply.error("ERR decrement would overflow");
        return;
    }
    incr_by(ctx, args[1], -n);
}

void incrbyfloat(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::string)) {
        return;
    }
    long double value = 0;
    long double incr = 0;
    if ((ref.entry != nullptr && !parse_long_double(ref.entry->string_value(), value)) ||
        !parse_long_double(args[2], incr)) {
        ctx.reply.error(errors::kNotFloat);
        return;
    }
    value += incr;
    if (std::isnan(value) || std::isinf(value)) {
        ctx.reply.error("ERR increment would produce NaN or Infinity");
        return;
    }
    char buf[5 * 1024];
    std::size_t len = 0;
    if (!format_long_double(value, buf, sizeof buf, len)) {
        len = 0; // redis stores an empty string when the text does not fit
    }
    const std::string_view text(buf, len);
    store_string(db, ref, text, kNoExpire, true);
    ctx.reply.bulk(text);
}

void append(Context &ctx, Args args) {
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (ref.entry == nullptr) {
        db.put(ref, Entry::create_string(args[1], args[2]));
        ctx.reply.integer(static_cast<std::int64_t>(args[2].size()));
        return;
    }
    if (wrong_type(ctx, ref.entry, Type::string)) {
        return;
    }
    const std::string_view old = ref.entry->string_value();
    if (!check_length(ctx, old.size(), args[2].size())) {
        return;
    }
    const std::size_t total = old.size() + args[2].size();
    if (Entry::try_append(ref.entry, args[2])) {
        ctx.reply.integer(static_cast<std::int64_t>(total));
        return;
    }
    std::string &value = ctx.scratch;
    value.assign(old);
    value.append(args[2]);
    // Growing strings get room to spare (as sds does: double up to 1 MiB, then +1 MiB), so a
    // loop of APPENDs mostly appends in place.
    const std::size_t grow = value.size() < (1U << 20) ? value.size() : (1U << 20);
    Entry *fresh =
        Entry::assign_string(ref.entry, value, ref.entry->expire_at(), value.size() + grow);
    db.put(ref, fresh);
    ctx.reply.integer(static_cast<std::int64_t>(total));
}

void strlen(Context &ctx, Args args) {
    const Entry *e = ctx.db().get(args[1], ctx.now_ms);
    if (wrong_type(ctx, e, Type::string)) {
        return;
    }
    ctx.reply.integer(e ? static_cast<std::int64_t>(e->string_value().size()) : 0);
}

void getrange(Context &ctx, Args args) {
    std::int64_t start = 0;
    std::int64_t end = 0;
    if (!int_arg(ctx, args[2], start) || !int_arg(ctx, args[3], end)) {
        return;
    }
    const Entry *e = ctx.db().get(args[1], ctx.now_ms);
    if (e == nullptr) {
        ctx.reply.bulk("");
        return;
    }
    if (wrong_type(ctx, e, Type::string)) {
        return;
    }
    const std::string_view s = e->string_value();
    const auto len = static_cast<std::int64_t>(s.size());
    if (start < 0 && end < 0 && start > end) {
        ctx.reply.bulk("");
        return;
    }
    if (start < 0) {
        start += len;
    }
    if (end < 0) {
        end += len;
    }
    if (start < 0) {
        start = 0;
    }
    if (end < 0) {
        end = 0;
    }
    if (end >= len) {
        end = len - 1;
    }
    if (start > end || len == 0) {
        ctx.reply.bulk("");
        return;
    }
    ctx.reply.bulk(
        s.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start + 1)));
}

void setrange(Context &ctx, Args args) {
    std::int64_t offset = 0;
    if (!int_arg(ctx, args[2], offset)) {
        return;
    }
    if (offset < 0) {
        ctx.reply.error("ERR offset is out of range");
        return;
    }
    const std::string_view patch = args[3];
    Db &db = ctx.db();
    Db::Ref ref = db.find(args[1], ctx.now_ms);
    if (wrong_type(ctx, ref.entry, Type::string)) {
        return;
    }
    const std::string_view old = ref.entry ? ref.entry->string_value() : std::string_view{};
    if (patch.empty()) {
        ctx.reply.integer(static_cast<std::int64_t>(old.size()));
        return;
    }
    if (!check_length(ctx, static_cast<std::uint64_t>(offset), patch.size())) {
        return;
    }
    const auto off = static_cast<std::size_t>(offset);
    if (ref.entry != nullptr && off + patch.size() <= old.size()) {
        Entry::overwrite(ref.entry, off, patch); // within the current length: in place
        ctx.reply.integer(static_cast<std::int64_t>(old.size()));
        return;
    }
    std::string &value = ctx.scratch;
    value.assign(old);
    if (value.size() < off + patch.size()) {
        value.resize(off + patch.size(), '\0');
    }
    value.replace(off, patch.size(), patch);
    store_string(db, ref, value, kNoExpire, true);
    ctx.reply.integer(static_cast<std::int64_t>(value.size()));
}

} // namespace redis::cmd
