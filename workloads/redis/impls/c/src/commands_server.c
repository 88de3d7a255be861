/* Connection and server commands: PING, ECHO, HELLO, CLIENT, CONFIG, COMMAND, INFO. */
#include "commands.h"

#include "connection.h"
#include "globmatch.h"
#include "numeric.h"
#include "server.h"

#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define REDIS_VERSION "7.0.15"

static void ping_command(struct client *c, int argc, struct slice *argv) {
    if (argc > 2) {
        reply_error(c->out, "wrong number of arguments for 'ping' command");
        return;
    }
    if (argc == 1)
        REPLY_LITERAL(c->out, "+PONG\r\n");
    else
        reply_bulk(c->out, argv[1].p, argv[1].len);
}

static void echo_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    reply_bulk(c->out, argv[1].p, argv[1].len);
}

static void reply_cstr(struct client *c, const char *s) {
    reply_bulk(c->out, s, strlen(s));
}

/* CLIENT SETNAME's rule: printable ASCII without spaces; empty clears the name. */
static bool set_client_name(struct client *c, struct slice name) {
    for (size_t i = 0; i < name.len; i++) {
        if (name.p[i] < '!' || name.p[i] > '~') {
            reply_error(c->out,
                        "Client names cannot contain spaces, newlines or special characters.");
            return false;
        }
    }
    free(c->name);
    c->name = NULL;
    if (name.len) {
        c->name = malloc(name.len + 1);
        if (c->name) {
            memcpy(c->name, name.p, name.len);
            c->name[name.len] = '\0';
        }
    }
    return true;
}

static void hello_command(struct client *c, int argc, struct slice *argv) {
    int next = 1, proto = 0;
    if (argc >= 2) {
        long long ver;
        if (!parse_ll(argv[1].p, argv[1].len, &ver)) {
            reply_error(c->out, "Protocol version is not an integer or out of range");
            return;
        }
        next = 2;
        if (ver < 2 || ver > 3) {
            reply_error(c->out, "-NOPROTO unsupported protocol version");
            return;
        }
        proto = (int)ver;
    }
    struct slice *name = NULL;
    for (int j = next; j < argc; j++) {
        int more = argc - 1 - j;
        if (slice_is(argv[j], "auth") && more >= 2) {
            j += 2; /* the default user has no password: any password is accepted */
        } else if (slice_is(argv[j], "setname") && more >= 1) {
            name = &argv[++j];
        } else {
            const char *nul = memchr(argv[j].p, '\0', argv[j].len);
            int len = (int)(nul ? (size_t)(nul - argv[j].p) : argv[j].len);
            reply_errorf(c->out, "Syntax error in HELLO option '%.*s'", len, argv[j].p);
            return;
        }
    }
    if (name && !set_client_name(c, *name))
        return;
    if (proto) {
        /* From this reply on, the client speaks this version. */
        c->resp = proto;
        c->out->resp = proto;
    }
    reply_map(c->out, 7);
    reply_cstr(c, "server");
    reply_cstr(c, "redis");
    reply_cstr(c, "version");
    reply_cstr(c, REDIS_VERSION);
    reply_cstr(c, "proto");
    reply_int(c->out, c->resp);
    reply_cstr(c, "id");
    reply_int(c->out, c->id);
    reply_cstr(c, "mode");
    reply_cstr(c, "standalone");
    reply_cstr(c, "role");
    reply_cstr(c, "master");
    reply_cstr(c, "modules");
    REPLY_LITERAL(c->out, "*0\r\n");
}

static void auth_command(struct client *c, int argc, struct slice *argv) {
    if (argc > 3) {
        reply_error(c->out, ERR_SYNTAX);
        return;
    }
    if (argc == 2) {
        reply_error(c->out, "AUTH <password> called without any password configured for the "
                            "default user. Are you sure your configuration is correct?");
        return;
    }
    /* AUTH default <anything>: the default user has no password; there is no other user. */
    if (argv[1].len == 7 && memcmp(argv[1].p, "default", 7) == 0)
        reply_ok(c->out);
    else
        reply_error(c->out, "-WRONGPASS invalid username-password pair or user is disabled.");
}

/* A container's HELP: its lines as simple strings, then HELP itself. */
static void reply_help(struct client *c, const char *container, const char *const *lines) {
    size_t n = 0;
    while (lines[n])
        n++;
    reply_array(c->out, (long long)n + 3);
    char head[128];
    snprintf(head, sizeof head,
             "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", container);
    reply_simple(c->out, head);
    for (size_t i = 0; i < n; i++)
        reply_simple(c->out, lines[i]);
    reply_simple(c->out, "HELP");
    reply_simple(c->out, "    Prints this help.");
}

/* ---- CLIENT ---- */

static void client_id_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    reply_int(c->out, c->id);
}

static void client_getname_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    if (c->name)
        reply_cstr(c, c->name);
    else
        reply_null(c->out);
}

static void client_setname_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    if (set_client_name(c, argv[2]))
        reply_ok(c->out);
}

/* One CLIENT LIST / CLIENT INFO line (the fields clients parse most). */
static size_t client_line(char *buf, size_t cap, const struct client *cl, long long now) {
    long long age = (now - cl->created_ms) / 1000;
    return (size_t)snprintf(buf, cap,
                            "id=%lld addr=%s laddr=%s:%d fd=%d name=%s age=%lld idle=0 "
                            "flags=N db=%d sub=0 psub=0 ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu "
                            "obl=0 oll=0 omem=%zu events=r cmd=client user=default redir=-1 "
                            "resp=2\n",
                            cl->id, connection_peer(cl), server_stats.host, server_stats.port,
                            cl->fd, cl->name ? cl->name : "", age, cl->db_index, cl->qlen,
                            cl->qcap - cl->qlen, cl->pending_len);
}

static void client_list_command(struct client *c, int argc, struct slice *argv) {
    (void)argv;
    if (argc > 2) {
        reply_error(c->out, ERR_SYNTAX);
        return;
    }
    long long now = monotonic_ms();
    struct outbuf text = {0};
    for (const struct client *cl = connection_clients(); cl; cl = cl->next) {
        char line[512];
        size_t n = client_line(line, sizeof line, cl, now);
        reply_raw(&text, line, n < sizeof line ? n : sizeof line - 1);
    }
    reply_verbatim(c->out, text.buf, text.len);
    free(text.buf);
}

static void client_info_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    char line[512];
    size_t n = client_line(line, sizeof line, c, monotonic_ms());
    reply_verbatim(c->out, line, n < sizeof line ? n : sizeof line - 1);
}

static void client_help_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    static const char *const lines[] = {
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "LIST",
        "    Return information about client connections.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        NULL};
    reply_help(c, "CLIENT", lines);
}

static const struct command client_subcommands[] = {
    {"client|help", client_help_command, 2, "loading stale", 0, 0, 0, "connection",
     "Show helpful text about the different subcommands", NULL},
    {"client|id", client_id_command, 2, "noscript loading stale", 0, 0, 0, "connection",
     "Returns the client ID for the current connection", NULL},
    {"client|getname", client_getname_command, 2, "noscript loading stale", 0, 0, 0, "connection",
     "Get the current connection name", NULL},
    {"client|setname", client_setname_command, 3, "noscript loading stale", 0, 0, 0, "connection",
     "Set the current connection name", NULL},
    {"client|list", client_list_command, -2, "admin noscript loading stale", 0, 0, 0, "connection",
     "Get the list of client connections", NULL},
    {"client|info", client_info_command, 2, "noscript loading stale", 0, 0, 0, "connection",
     "Returns information about the current client connection.", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* ---- CONFIG ---- */

/* The parameters CONFIG GET knows: what redis-benchmark and common clients ask for. */
static void config_value(const char *name, char *buf, size_t cap) {
    if (!strcmp(name, "port"))
        snprintf(buf, cap, "%d", server_stats.port);
    else if (!strcmp(name, "bind"))
        snprintf(buf, cap, "%s", server_stats.host);
    else if (!strcmp(name, "maxclients"))
        snprintf(buf, cap, "%lu", server_stats.maxclients);
    else
        buf[0] = '\0';
}

static const char *const config_table[][2] = {
    {"save", ""},
    {"appendonly", "no"},
    {"databases", "16"},
    {"port", NULL},
    {"bind", NULL},
    {"maxclients", NULL},
    {"maxmemory", "0"},
    {"maxmemory-policy", "noeviction"},
    {"timeout", "0"},
    {"tcp-keepalive", "300"},
    {"proto-max-bulk-len", "536870912"},
    {"client-query-buffer-limit", "1073741824"},
    {"client-output-buffer-limit", "normal 67108864 0 0 slave 268435456 67108864 60 pubsub "
                                   "33554432 8388608 60"},
    {"appendfsync", "everysec"},
    {"io-threads", "1"},
};

static bool is_glob(struct slice s) {
    for (size_t i = 0; i < s.len; i++)
        if (s.p[i] == '*' || s.p[i] == '?' || s.p[i] == '[')
            return true;
    return false;
}

/* configGetCommand: a name without glob characters is looked up case-insensitively and
 * replied under the name as the client wrote it (CONFIG GET SAVE answers SAVE); a pattern
 * answers the parameters' own names. */
static void config_get_command(struct client *c, int argc, struct slice *argv) {
    size_t n = sizeof config_table / sizeof config_table[0];
    bool match[sizeof config_table / sizeof config_table[0]] = {false};
    struct slice as_asked[sizeof config_table / sizeof config_table[0]] = {{0}};
    long long count = 0;
    for (size_t i = 0; i < n; i++) {
        for (int j = 2; j < argc && !match[i]; j++) {
            if (glob_match(argv[j].p, argv[j].len, config_table[i][0], strlen(config_table[i][0]),
                           true)) {
                match[i] = true;
                if (!is_glob(argv[j]))
                    as_asked[i] = argv[j];
                count++;
            }
        }
    }
    reply_map(c->out, count);
    for (size_t i = 0; i < n; i++) {
        if (!match[i])
            continue;
        char value[64];
        const char *v = config_table[i][1];
        if (!v) {
            config_value(config_table[i][0], value, sizeof value);
            v = value;
        }
        if (as_asked[i].p)
            reply_bulk(c->out, as_asked[i].p, as_asked[i].len);
        else
            reply_cstr(c, config_table[i][0]);
        reply_cstr(c, v);
    }
}

static void config_set_command(struct client *c, int argc, struct slice *argv) {
    (void)argv;
    if (argc % 2 == 1) {
        reply_error(c->out, "wrong number of arguments for 'config|set' command");
        return;
    }
    reply_ok(c->out); /* accepted and ignored: nothing here is tunable at run time */
}

static void config_resetstat_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    server_stats.total_commands = 0;
    server_stats.total_connections = 0;
    server_stats.expired_keys = 0;
    reply_ok(c->out);
}

static void config_help_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    static const char *const lines[] = {
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        NULL};
    reply_help(c, "CONFIG", lines);
}

static const struct command config_subcommands[] = {
    {"config|help", config_help_command, 2, "loading stale", 0, 0, 0, "server",
     "Show helpful text about the different subcommands", NULL},
    {"config|get", config_get_command, -3, "admin noscript loading stale", 0, 0, 0, "server",
     "Get the values of configuration parameters", NULL},
    {"config|set", config_set_command, -4, "admin noscript loading stale", 0, 0, 0, "server",
     "Set configuration parameters to the given values", NULL},
    {"config|resetstat", config_resetstat_command, 2, "admin noscript loading stale", 0, 0, 0,
     "server", "Reset the stats returned by INFO", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* ---- COMMAND ---- */

static void reply_flags(struct client *c, const char *flags) {
    size_t n = 0;
    for (const char *p = flags; *p;) {
        while (*p == ' ')
            p++;
        if (*p)
            n++;
        while (*p && *p != ' ')
            p++;
    }
    reply_array(c->out, (long long)n);
    for (const char *p = flags; *p;) {
        while (*p == ' ')
            p++;
        const char *start = p;
        while (*p && *p != ' ')
            p++;
        if (p > start) {
            char buf[64];
            size_t len = (size_t)(p - start) < sizeof buf - 1 ? (size_t)(p - start) : 0;
            memcpy(buf, start, len);
            buf[len] = '\0';
            reply_simple(c->out, buf);
        }
    }
}

/* COMMAND INFO's entry: name, arity, flags, first/last key, step, ACL categories, tips, key
 * specs, subcommands. */
static void reply_command_info(struct client *c, const struct command *cmd) {
    reply_array(c->out, 10);
    reply_cstr(c, cmd->name);
    reply_int(c->out, cmd->arity);
    reply_flags(c, cmd->flags);
    reply_int(c->out, cmd->first_key);
    reply_int(c->out, cmd->last_key);
    reply_int(c->out, cmd->key_step);
    reply_array(c->out, 1);
    char category[64];
    snprintf(category, sizeof category, "@%s", cmd->group);
    reply_simple(c->out, category);
    REPLY_LITERAL(c->out, "*0\r\n*0\r\n");
    size_t subs = 0;
    for (const struct command *s = cmd->subcommands; s && s->name; s++)
        subs++;
    reply_array(c->out, (long long)subs);
    for (const struct command *s = cmd->subcommands; s && s->name; s++)
        reply_command_info(c, s);
}

/* COMMAND DOCS's entry (RESP2: a flat array of field/value pairs). */
static void reply_command_docs(struct client *c, const struct command *cmd) {
    size_t subs = 0;
    for (const struct command *s = cmd->subcommands; s && s->name; s++)
        subs++;
    reply_map(c->out, subs ? 4 : 3);
    reply_cstr(c, "summary");
    reply_cstr(c, cmd->summary);
    reply_cstr(c, "since");
    reply_cstr(c, "1.0.0");
    reply_cstr(c, "group");
    reply_cstr(c, cmd->group);
    if (subs) {
        reply_cstr(c, "subcommands");
        reply_map(c->out, (long long)subs);
        for (const struct command *s = cmd->subcommands; s->name; s++) {
            reply_cstr(c, s->name);
            reply_command_docs(c, s);
        }
    }
}

static void command_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    reply_array(c->out, (long long)command_count());
    for (size_t i = 0; i < command_count(); i++)
        reply_command_info(c, command_at(i));
}

static void command_count_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    reply_int(c->out, (long long)command_count());
}

static void command_list_command(struct client *c, int argc, struct slice *argv) {
    (void)argv;
    if (argc > 2) {
        reply_error(c->out, ERR_SYNTAX);
        return;
    }
    reply_array(c->out, (long long)command_count());
    for (size_t i = 0; i < command_count(); i++)
        reply_cstr(c, command_at(i)->name);
}

static void command_info_command(struct client *c, int argc, struct slice *argv) {
    if (argc == 2) {
        command_command(c, argc, argv);
        return;
    }
    reply_array(c->out, argc - 2);
    for (int i = 2; i < argc; i++) {
        const struct command *cmd = command_find(argv[i]);
        if (cmd)
            reply_command_info(c, cmd);
        else
            reply_null(c->out);
    }
}

static void command_docs_command(struct client *c, int argc, struct slice *argv) {
    if (argc == 2) {
        reply_map(c->out, (long long)command_count());
        for (size_t i = 0; i < command_count(); i++) {
            reply_cstr(c, command_at(i)->name);
            reply_command_docs(c, command_at(i));
        }
        return;
    }
    long long found = 0;
    for (int i = 2; i < argc; i++)
        found += command_find(argv[i]) != NULL;
    reply_map(c->out, found);
    for (int i = 2; i < argc; i++) {
        const struct command *cmd = command_find(argv[i]);
        if (cmd) {
            reply_cstr(c, cmd->name);
            reply_command_docs(c, cmd);
        }
    }
}

static void command_help_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    static const char *const lines[] = {
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        NULL};
    reply_help(c, "COMMAND", lines);
}

static const struct command command_subcommands[] = {
    {"command|help", command_help_command, 2, "loading stale", 0, 0, 0, "server",
     "Show helpful text about the different subcommands", NULL},
    {"command|count", command_count_command, 2, "loading stale", 0, 0, 0, "server",
     "Get total number of Redis commands", NULL},
    {"command|list", command_list_command, -2, "loading stale", 0, 0, 0, "server",
     "Get an array of Redis command names", NULL},
    {"command|info", command_info_command, -2, "loading stale", 0, 0, 0, "server",
     "Get array of specific Redis command details, or all when no argument is given", NULL},
    {"command|docs", command_docs_command, -2, "loading stale", 0, 0, 0, "server",
     "Get array of specific Redis command documentation", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* ---- INFO ---- */

static void info_line(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void info_line(struct outbuf *o, const char *fmt, ...) {
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        reply_raw(o, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void human_bytes(char *buf, size_t cap, size_t bytes) {
    double b = (double)bytes;
    if (b < 1024)
        snprintf(buf, cap, "%zuB", bytes);
    else if (b < 1024.0 * 1024)
        snprintf(buf, cap, "%.2fK", b / 1024);
    else if (b < 1024.0 * 1024 * 1024)
        snprintf(buf, cap, "%.2fM", b / (1024 * 1024));
    else
        snprintf(buf, cap, "%.2fG", b / (1024.0 * 1024 * 1024));
}

static size_t rss_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    unsigned long pages = 0, resident = 0;
    if (fscanf(f, "%lu %lu", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (size_t)sysconf(_SC_PAGESIZE);
}

static size_t peak_memory;

static void info_section(struct outbuf *o, const char *name) {
    long long uptime = (monotonic_ms() - server_stats.started_ms) / 1000;
    if (!strcmp(name, "server")) {
        struct utsname u;
        uname(&u);
        info_line(o, "# Server\r\n");
        info_line(o, "redis_version:%s\r\n", REDIS_VERSION);
        info_line(o, "redis_git_sha1:00000000\r\nredis_git_dirty:0\r\n");
        info_line(o, "redis_mode:standalone\r\n");
        info_line(o, "os:%s %s %s\r\n", u.sysname, u.release, u.machine);
        info_line(o, "arch_bits:64\r\nmultiplexing_api:epoll\r\n");
        info_line(o, "process_id:%d\r\n", (int)getpid());
        info_line(o, "tcp_port:%d\r\n", server_stats.port);
        info_line(o, "uptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\n", uptime, uptime / 86400);
        info_line(o, "executable:redis-c\r\nconfig_file:\r\n");
    } else if (!strcmp(name, "clients")) {
        info_line(o, "# Clients\r\n");
        info_line(o, "connected_clients:%zu\r\n", server_stats.connected_clients);
        info_line(o, "maxclients:%lu\r\n", server_stats.maxclients);
        info_line(o, "blocked_clients:0\r\ntracking_clients:0\r\n");
    } else if (!strcmp(name, "memory")) {
        struct mallinfo2 mi = mallinfo2();
        size_t used = mi.uordblks + mi.hblkhd;
        if (used > peak_memory)
            peak_memory = used;
        char h[32], ph[32];
        human_bytes(h, sizeof h, used);
        human_bytes(ph, sizeof ph, peak_memory);
        info_line(o, "# Memory\r\n");
        info_line(o, "used_memory:%zu\r\nused_memory_human:%s\r\n", used, h);
        info_line(o, "used_memory_rss:%zu\r\n", rss_bytes());
        info_line(o, "used_memory_peak:%zu\r\nused_memory_peak_human:%s\r\n", peak_memory, ph);
        info_line(o, "maxmemory:0\r\nmaxmemory_policy:noeviction\r\n");
        info_line(o, "mem_allocator:libc\r\n");
    } else if (!strcmp(name, "persistence")) {
        info_line(o, "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:0\r\n");
        info_line(o, "aof_enabled:0\r\n");
    } else if (!strcmp(name, "stats")) {
        info_line(o, "# Stats\r\n");
        info_line(o, "total_connections_received:%lld\r\n", server_stats.total_connections);
        info_line(o, "total_commands_processed:%lld\r\n", server_stats.total_commands);
        info_line(o, "rejected_connections:%lld\r\n", server_stats.rejected_connections);
        info_line(o, "expired_keys:%lld\r\n", server_stats.expired_keys);
    } else if (!strcmp(name, "replication")) {
        info_line(o, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n");
    } else if (!strcmp(name, "keyspace")) {
        info_line(o, "# Keyspace\r\n");
        for (int i = 0; i < DB_COUNT; i++) {
            size_t keys = db_size(&databases[i]);
            if (keys)
                info_line(o, "db%d:keys=%zu,expires=%zu,avg_ttl=0\r\n", i, keys,
                          dict_size(&databases[i].expires));
        }
    }
}

static const char *const default_sections[] = {"server", "clients",     "memory",  "persistence",
                                               "stats",  "replication", "keyspace"};

static void info_command(struct client *c, int argc, struct slice *argv) {
    bool want[sizeof default_sections / sizeof default_sections[0]] = {false};
    size_t nsections = sizeof default_sections / sizeof default_sections[0];
    if (argc == 1) {
        for (size_t i = 0; i < nsections; i++)
            want[i] = true;
    }
    for (int j = 1; j < argc; j++) {
        bool all = slice_is(argv[j], "all") || slice_is(argv[j], "default") ||
                   slice_is(argv[j], "everything");
        for (size_t i = 0; i < nsections; i++)
            if (all || slice_is(argv[j], default_sections[i]))
                want[i] = true;
    }
    struct outbuf text = {0};
    bool first = true;
    for (size_t i = 0; i < nsections; i++) {
        if (!want[i])
            continue;
        if (!first)
            REPLY_LITERAL(&text, "\r\n");
        first = false;
        info_section(&text, default_sections[i]);
    }
    reply_verbatim(c->out, text.buf ? text.buf : "", text.len);
    free(text.buf);
}

static void time_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    reply_array(c->out, 2);
    reply_bulk_ll(c->out, (long long)ts.tv_sec);
    reply_bulk_ll(c->out, (long long)(ts.tv_nsec / 1000));
}

/* Persistence is off in this lab (as the reference is started): SAVE has nothing to do. */
static void save_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    reply_ok(c->out);
}

static void lastsave_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    reply_int(c->out, (long long)time(NULL) - (monotonic_ms() - server_stats.started_ms) / 1000);
}

/* No replicas here: WAIT numreplicas timeout has none to wait for. */
static void wait_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long n;
    if (arg_ll(c, argv[1], &n) && arg_ll(c, argv[2], &n))
        REPLY_LITERAL(c->out, ":0\r\n");
}

const struct command server_commands[] = {
    {"wait", wait_command, 3, "noscript", 0, 0, 0, "generic",
     "Wait for the synchronous replication of all the write commands sent in the context of "
     "the current connection",
     NULL},
    {"ping", ping_command, -1, "fast", 0, 0, 0, "connection", "Ping the server", NULL},
    {"echo", echo_command, 2, "fast", 0, 0, 0, "connection", "Echo the given string", NULL},
    {"hello", hello_command, -1, "noscript loading stale fast no_auth", 0, 0, 0, "connection",
     "Handshake with Redis", NULL},
    {"auth", auth_command, -2, "noscript loading stale fast no_auth", 0, 0, 0, "connection",
     "Authenticate to the server", NULL},
    {"client", NULL, -2, "", 0, 0, 0, "connection", "A container for client connection commands",
     client_subcommands},
    {"config", NULL, -2, "", 0, 0, 0, "server", "A container for server configuration commands",
     config_subcommands},
    {"command", command_command, -1, "loading stale", 0, 0, 0, "server",
     "Get array of Redis command details", command_subcommands},
    {"info", info_command, -1, "loading stale", 0, 0, 0, "server",
     "Get information and statistics about the server", NULL},
    {"time", time_command, 1, "loading stale fast", 0, 0, 0, "server",
     "Return the current server time", NULL},
    {"save", save_command, 1, "admin noscript", 0, 0, 0, "server",
     "Synchronously save the dataset to disk", NULL},
    {"lastsave", lastsave_command, 1, "loading stale fast", 0, 0, 0, "server",
     "Get the UNIX time stamp of the last successful save to disk", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};
