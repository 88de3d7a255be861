// Server and connection commands: PING, ECHO, QUIT, INFO, COMMAND, HELLO, CLIENT, CONFIG, TIME.
#include "commands_common.hpp"
#include "globmatch.hpp"

#include <malloc.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace redis::cmd {

namespace {

using util::option_is;

constexpr std::string_view kVersion = "7.0.15";

std::int64_t rss_bytes() {
    long pages = 0;
    if (std::FILE *f = std::fopen("/proc/self/statm", "r")) {
        long size = 0;
        if (std::fscanf(f, "%ld %ld", &size, &pages) != 2) {
            pages = 0;
        }
        std::fclose(f);
    }
    return static_cast<std::int64_t>(pages) * sysconf(_SC_PAGESIZE);
}

std::int64_t heap_bytes() {
    const struct mallinfo2 mi = mallinfo2();
    return static_cast<std::int64_t>(mi.uordblks + mi.hblkhd);
}

void human_bytes(std::string &out, std::int64_t n) {
    char buf[32];
    const auto d = static_cast<double>(n);
    if (n < 1024) {
        std::snprintf(buf, sizeof buf, "%lldB", static_cast<long long>(n));
    } else if (n < 1024 * 1024) {
        std::snprintf(buf, sizeof buf, "%.2fK", d / 1024);
    } else if (n < 1024LL * 1024 * 1024) {
        std::snprintf(buf, sizeof buf, "%.2fM", d / (1024 * 1024));
    } else {
        std::snprintf(buf, sizeof buf, "%.2fG", d / (1024.0 * 1024 * 1024));
    }
    out += buf;
}

template <class... T> void line(std::string &out, const char *fmt, T... values) {
    char buf[256];
    const int n = std::snprintf(buf, sizeof buf, fmt, values...);
    if (n > 0) {
        out.append(buf, static_cast<std::size_t>(n) < sizeof buf ? static_cast<std::size_t>(n)
                                                                 : sizeof buf - 1);
    }
    out += "\r\n";
}

void info_section(Context &ctx, std::string &out, std::string_view section) {
    const ServerStats &st = ctx.stats;
    if (!out.empty()) {
        out += "\r\n";
    }
    if (section == "server") {
        const std::int64_t uptime = (ctx.now_ms - st.start_ms) / 1000;
        out += "# Server\r\n";
        line(out, "redis_version:%s", kVersion.data());
        out += "redis_mode:standalone\r\n";
        out += "os:Linux x86_64\r\narch_bits:64\r\nmultiplexing_api:epoll\r\n";
        line(out, "process_id:%ld", static_cast<long>(getpid()));
        line(out, "tcp_port:%d", st.port);
        line(out, "server_time_usec:%lld", static_cast<long long>(ctx.now_ms) * 1000);
        line(out, "uptime_in_seconds:%lld", static_cast<long long>(uptime));
        line(out, "uptime_in_days:%lld", static_cast<long long>(uptime / 86400));
        out += "hz:10\r\nconfigured_hz:10\r\nexecutable:redis-cpp\r\nconfig_file:\r\n";
        out += "io_threads_active:0\r\n";
    } else if (section == "clients") {
        out += "# Clients\r\n";
        line(out, "connected_clients:%llu", static_cast<unsigned long long>(st.connected_clients));
        out += "cluster_connections:0\r\nmaxclients:10000\r\nblocked_clients:0\r\n";
        out += "tracking_clients:0\r\nclients_in_timeout_table:0\r\n";
    } else if (section == "memory") {
        const std::int64_t used = heap_bytes();
        const std::int64_t rss = rss_bytes();
        out += "# Memory\r\n";
        line(out, "used_memory:%lld", static_cast<long long>(used));
        out += "used_memory_human:";
        human_bytes(out, used);
        out += "\r\n";
        line(out, "used_memory_rss:%lld", static_cast<long long>(rss));
        out += "used_memory_rss_human:";
        human_bytes(out, rss);
        out += "\r\n";
        out += "maxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\n";
        out += "mem_allocator:libc\r\n";
    } else if (section == "stats") {
        out += "# Stats\r\n";
        line(out, "total_connections_received:%llu",
             static_cast<unsigned long long>(st.total_connections));
        line(out, "total_commands_processed:%llu",
             static_cast<unsigned long long>(st.total_commands));
        line(out, "rejected_connections:%llu",
             static_cast<unsigned long long>(st.rejected_connections));
        line(out, "expired_keys:%llu", static_cast<unsigned long long>(st.expired_keys));
    } else if (section == "keyspace") {
        out += "# Keyspace\r\n";
        for (int i = 0; i < kDatabases; ++i) {
            const Db &db = ctx.store.db(i);
            if (db.size() == 0) {
                continue;
            }
            line(out, "db%d:keys=%zu,expires=%zu,avg_ttl=0", i, db.size(), db.volatile_count());
        }
    }
}

constexpr std::string_view kDefaultSections[] = {"server", "clients", "memory", "stats",
                                                 "keyspace"};

bool valid_client_name(std::string_view name) {
    for (const char c : name) {
        if (c < '!' || c > '~') {
            return false;
        }
    }
    return true;
}

void reply_client_info(Context &ctx) {
    std::string s =
        "id=" + std::to_string(ctx.session.id) + " addr=127.0.0.1:0 fd=0 name=" + ctx.session.name +
        " db=" + std::to_string(ctx.session.db) + " flags=N cmd=client user=default resp=2\n";
    ctx.reply.bulk(s);
}

// The configuration parameters CONFIG GET knows (what redis-benchmark and clients ask).
struct ConfigParam {
    std::string_view name;
    std::string_view value;
};
constexpr ConfigParam kConfig[] = {
    {"save", ""},
    {"appendonly", "no"},
    {"databases", "16"},
    {"maxmemory", "0"},
    {"maxmemory-policy", "noeviction"},
    {"proto-max-bulk-len", "536870912"},
    {"client-output-buffer-limit", "normal 67108864 0 0 slave 268435456 67108864 60 pubsub "
                                   "33554432 8388608 60"},
    {"io-threads", "1"},
    {"hz", "10"},
    {"timeout", "0"},
};

} // namespace

void ping(Context &ctx, Args args) {
    if (args.size() > 2) {
        util::arity_error(ctx, "ping");
        return;
    }
    if (args.size() == 1) {
        ctx.reply.raw("+PONG\r\n");
    } else {
        ctx.reply.bulk(args[1]);
    }
}

void echo(Context &ctx, Args args) {
    ctx.reply.bulk(args[1]);
}

void quit(Context &ctx, Args) {
    ctx.reply.ok();
    ctx.session.close_after_reply = true;
}

void time(Context &ctx, Args) {
    struct timeval tv {};
    gettimeofday(&tv, nullptr);
    ctx.reply.array(2);
    ctx.reply.bulk_int(tv.tv_sec);
    ctx.reply.bulk_int(tv.tv_usec);
}

void info(Context &ctx, Args args) {
    std::string out;
    if (args.size() == 1) {
        for (const auto s : kDefaultSections) {
            info_section(ctx, out, s);
        }
    } else {
        bool all = false;
        for (std::size_t i = 1; i < args.size(); ++i) {
            if (option_is(args[i], "all") || option_is(args[i], "default") ||
                option_is(args[i], "everything")) {
                all = true;
            }
        }
        for (const auto s : kDefaultSections) {
            bool wanted = all;
            for (std::size_t i = 1; i < args.size() && !wanted; ++i) {
                wanted = option_is(args[i], s);
            }
            if (wanted) {
                info_section(ctx, out, s);
            }
        }
    }
    ctx.reply.verbatim(out);
}

void hello(Context &ctx, Args args) {
    std::size_t next = 1;
    int protocol = 0; // 0: unchanged
    if (args.size() >= 2) {
        std::int64_t ver = 0;
        if (!parse_int64(args[1], ver)) {
            ctx.reply.error("ERR Protocol version is not an integer or out of range");
            return;
        }
        if (ver < 2 || ver > 3) {
            ctx.reply.error("NOPROTO unsupported protocol version");
            return;
        }
        protocol = static_cast<int>(ver);
        next = 2;
    }
    std::string_view name;
    bool set_name = false;
    for (std::size_t j = next; j < args.size(); ++j) {
        const std::size_t more = args.size() - 1 - j;
        if (option_is(args[j], "auth") && more >= 2) {
            // Only the default user exists, and it has no password.
            if (args[j + 1] != "default") {
                ctx.reply.error("WRONGPASS invalid username-password pair or user is disabled.");
                return;
            }
            j += 2;
        } else if (option_is(args[j], "setname") && more >= 1) {
            name = args[j + 1];
            set_name = true;
            ++j;
        } else {
            std::string msg = "ERR Syntax error in HELLO option '";
            msg += util::c_string(args[j]);
            msg += "'";
            ctx.reply.error(msg);
            return;
        }
    }
    if (set_name) {
        if (!valid_client_name(name)) {
            ctx.reply.error(
                "ERR Client names cannot contain spaces, newlines or special characters.");
            return;
        }
        ctx.session.name.assign(name);
    }
    if (protocol != 0) {
        ctx.session.protocol = protocol;
        ctx.reply.set_protocol(protocol);
    }
    ctx.reply.map(7);
    ctx.reply.bulk("server");
    ctx.reply.bulk("redis");
    ctx.reply.bulk("version");
    ctx.reply.bulk(kVersion);
    ctx.reply.bulk("proto");
    ctx.reply.integer(ctx.session.protocol);
    ctx.reply.bulk("id");
    ctx.reply.integer(static_cast<std::int64_t>(ctx.session.id));
    ctx.reply.bulk("mode");
    ctx.reply.bulk("standalone");
    ctx.reply.bulk("role");
    ctx.reply.bulk("master");
    ctx.reply.bulk("modules");
    ctx.reply.empty_array();
}

void client(Context &ctx, Args args) {
    const std::string_view sub = args[1];
    if (option_is(sub, "setname")) {
        if (!valid_client_name(args[2])) {
            ctx.reply.error(
                "ERR Client names cannot contain spaces, newlines or special characters.");
            return;
        }
        ctx.session.name.assign(args[2]);
        ctx.reply.ok();
    } else if (option_is(sub, "getname")) {
        if (ctx.session.name.empty()) {
            ctx.reply.null_bulk();
        } else {
            ctx.reply.bulk(ctx.session.name);
        }
    } else if (option_is(sub, "id")) {
        ctx.reply.integer(static_cast<std::int64_t>(ctx.session.id));
    } else if (option_is(sub, "info") || option_is(sub, "list")) {
        reply_client_info(ctx);
    } else {
        ctx.reply.ok(); // the remaining subcommands in the table are accepted and ignored
    }
}

void config(Context &ctx, Args args) {
    const std::string_view sub = args[1];
    if (option_is(sub, "get")) {
        // Pairs of (name as replied, value). A pattern without glob characters names one
        // parameter and is echoed as given (CONFIG GET SAVE replies "SAVE"), as redis does.
        std::vector<std::pair<std::string_view, const ConfigParam *>> found;
        auto add = [&](std::string_view name, const ConfigParam &p) {
            for (const auto &f : found) {
                if (f.second == &p) {
                    return;
                }
            }
            found.emplace_back(name, &p);
        };
        for (std::size_t i = 2; i < args.size(); ++i) {
            const std::string_view pattern = args[i];
            const bool glob = pattern.find_first_of("*?[") != std::string_view::npos;
            for (const ConfigParam &p : kConfig) {
                if (!glob && util::iequals(pattern, p.name)) {
                    add(pattern, p);
                } else if (glob && glob_match(pattern, p.name, true)) {
                    add(p.name, p);
                }
            }
        }
        ctx.reply.map(found.size());
        for (const auto &[name, p] : found) {
            ctx.reply.bulk(name);
            ctx.reply.bulk(p->value);
        }
    } else if (option_is(sub, "rewrite")) {
        ctx.reply.error("ERR The server is running without a config file");
    } else {
        ctx.reply.ok(); // SET and RESETSTAT: accepted, nothing to change
    }
}

void command(Context &ctx, Args args) {
    auto reply_info = [&](const Command &c) {
        ctx.reply.array(10);
        ctx.reply.bulk(c.name);
        ctx.reply.integer(c.arity);
        auto words = [&](std::string_view list) {
            std::size_t n = 0;
            for (std::size_t i = 0; i < list.size();) {
                const std::size_t end = std::min(list.find(' ', i), list.size());
                n += end > i ? 1 : 0;
                i = end + 1;
            }
            ctx.reply.array(n);
            for (std::size_t i = 0; i < list.size();) {
                const std::size_t end = std::min(list.find(' ', i), list.size());
                if (end > i) {
                    ctx.reply.simple(list.substr(i, end - i));
                }
                i = end + 1;
            }
        };
        words(c.flags);
        ctx.reply.integer(c.first_key);
        ctx.reply.integer(c.last_key);
        ctx.reply.integer(c.key_step);
        words(c.categories);
        ctx.reply.empty_array(); // tips
        ctx.reply.empty_array(); // key specs
        ctx.reply.empty_array(); // subcommands
    };
    const auto table = all_commands();
    if (args.size() == 1) {
        ctx.reply.array(table.size());
        for (const Command &c : table) {
            reply_info(c);
        }
        return;
    }
    const std::string_view sub = args[1];
    if (option_is(sub, "count")) {
        ctx.reply.integer(static_cast<std::int64_t>(table.size()));
    } else if (option_is(sub, "list")) {
        ctx.reply.array(table.size());
        for (const Command &c : table) {
            ctx.reply.bulk(c.name);
        }
    } else if (option_is(sub, "info")) {
        ctx.reply.array(args.size() - 2);
        for (std::size_t i = 2; i < args.size(); ++i) {
            const Command *c = find_command(args[i]);
            if (c == nullptr) {
                ctx.reply.null_array();
            } else {
                reply_info(*c);
            }
        }
    } else if (option_is(sub, "docs")) {
        // A map of name -> doc (flat in RESP2). redis-cli reads summary, since and group.
        std::vector<const Command *> wanted;
        if (args.size() == 2) {
            for (const Command &c : table) {
                wanted.push_back(&c);
            }
        } else {
            for (std::size_t i = 2; i < args.size(); ++i) {
                if (const Command *c = find_command(args[i])) {
                    wanted.push_back(c);
                }
            }
        }
        ctx.reply.map(wanted.size());
        for (const Command *c : wanted) {
            ctx.reply.bulk(c->name);
            ctx.reply.map(3);
            ctx.reply.bulk("summary");
            ctx.reply.bulk("");
            ctx.reply.bulk("since");
            ctx.reply.bulk("1.0.0");
            ctx.reply.bulk("group");
            // The first category after @read/@write names the group (@string -> string).
            std::string_view group = "generic";
            for (const std::string_view g :
                 {"string", "list", "hash", "set", "sortedset", "connection", "server"}) {
                if (c->categories.find(std::string("@") + std::string(g)) !=
                    std::string_view::npos) {
                    group = g;
                    break;
                }
            }
            ctx.reply.bulk(group == "sortedset" ? "sorted-set" : group);
        }
    } else {
        ctx.reply.empty_array();
    }
}

void multi(Context &ctx, Args) {
    if (ctx.session.in_multi) {
        ctx.reply.error("ERR MULTI calls can not be nested");
        return;
    }
    ctx.session.in_multi = true;
    ctx.session.multi_failed = false;
    ctx.session.queued.clear();
    ctx.reply.ok();
}

void exec(Context &ctx, Args) {
    Session &s = ctx.session;
    if (!s.in_multi) {
        ctx.reply.error("ERR EXEC without MULTI");
        return;
    }
    // Take the queue first: the commands run outside MULTI (and may not see it).
    auto queued = std::move(s.queued);
    const bool failed = s.multi_failed;
    s.queued.clear();
    s.in_multi = false;
    s.multi_failed = false;
    if (failed) {
        ctx.reply.error("EXECABORT Transaction discarded because of previous errors.");
        return;
    }
    ctx.reply.array(queued.size());
    std::vector<std::string_view> args;
    for (const auto &request : queued) {
        args.assign(request.begin(), request.end());
        execute(ctx, args);
    }
}

void discard(Context &ctx, Args) {
    if (!ctx.session.in_multi) {
        ctx.reply.error("ERR DISCARD without MULTI");
        return;
    }
    ctx.session.in_multi = false;
    ctx.session.multi_failed = false;
    ctx.session.queued.clear();
    ctx.reply.ok();
}

} // namespace redis::cmd
