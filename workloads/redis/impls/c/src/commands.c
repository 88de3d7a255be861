#include "commands.h"
#include "numeric.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * Name lookup: an open-addressing table of the lower-cased names, built once. A request's
 * name is lower-cased into a small buffer and hashed; names longer than any command are
 * unknown without a lookup.
 */
#define NAME_MAX_LEN 32
#define TABLE_SLOTS 512 /* a power of two, well over twice the command count */

static const struct command *table[TABLE_SLOTS];
static const struct command *ordered[TABLE_SLOTS];
static size_t ncommands;

static const struct command *group_tables[] = {
    string_commands, key_commands,  list_commands,   hash_commands,
    set_commands,    zset_commands, server_commands, transaction_commands,
};

void commands_init(void) {
    for (size_t g = 0; g < sizeof group_tables / sizeof group_tables[0]; g++) {
        for (const struct command *cmd = group_tables[g]; cmd->name; cmd++) {
            size_t len = strlen(cmd->name);
            size_t i = hash_bytes(cmd->name, len) & (TABLE_SLOTS - 1);
            while (table[i])
                i = (i + 1) & (TABLE_SLOTS - 1);
            table[i] = cmd;
            ordered[ncommands++] = cmd;
        }
    }
}

size_t command_count(void) {
    return ncommands;
}

const struct command *command_at(size_t i) {
    return ordered[i];
}

/* Lower-cases a name into buf (NAME_MAX_LEN bytes); false if it is too long to be one. */
static bool lower_name(struct slice name, char *buf) {
    if (name.len >= NAME_MAX_LEN)
        return false;
    for (size_t i = 0; i < name.len; i++) {
        char c = name.p[i];
        buf[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return true;
}

/*
 * Most requests repeat a few names spelled the same way, so a small direct-mapped cache of raw
 * (not lower-cased) names skips the case folding and hashing: one 16-byte compare per hit.
 */
#define NAME_CACHE_SLOTS 64

struct name_cache_entry {
    size_t len;
    char raw[16];
    const struct command *cmd;
};

static struct name_cache_entry name_cache[NAME_CACHE_SLOTS];

static const struct command *command_find_slow(struct slice name);

const struct command *command_find(struct slice name) {
    if (name.len == 0 || name.len > 16)
        return command_find_slow(name);
    char raw[16] = {0};
    copy_bytes(raw, name.p, name.len);
    size_t slot = (name.len * 31 + (unsigned char)raw[0] * 7 + (unsigned char)raw[name.len - 1]) &
                  (NAME_CACHE_SLOTS - 1);
    struct name_cache_entry *ce = &name_cache[slot];
    if (ce->len == name.len && memcmp(ce->raw, raw, sizeof raw) == 0)
        return ce->cmd;
    const struct command *cmd = command_find_slow(name);
    if (cmd) {
        ce->len = name.len;
        memcpy(ce->raw, raw, sizeof raw);
        ce->cmd = cmd;
    }
    return cmd;
}

static const struct command *command_find_slow(struct slice name) {
    char lower[NAME_MAX_LEN];
    if (!lower_name(name, lower))
        return NULL;
    size_t i = hash_bytes(lower, name.len) & (TABLE_SLOTS - 1);
    for (const struct command *cmd; (cmd = table[i]) != NULL; i = (i + 1) & (TABLE_SLOTS - 1)) {
        if (strlen(cmd->name) == name.len && memcmp(cmd->name, lower, name.len) == 0)
            return cmd;
    }
    return NULL;
}

static const struct command *subcommand_find(const struct command *container, struct slice sub) {
    char lower[NAME_MAX_LEN];
    if (!lower_name(sub, lower))
        return NULL;
    size_t prefix = strlen(container->name) + 1; /* "config|" */
    for (const struct command *cmd = container->subcommands; cmd->name; cmd++) {
        if (strlen(cmd->name) - prefix == sub.len &&
            memcmp(cmd->name + prefix, lower, sub.len) == 0)
            return cmd;
    }
    return NULL;
}

/* Bytes of an argument before its first NUL: redis formats these errors with %s. */
static size_t c_len(struct slice s, size_t max) {
    const char *nul = memchr(s.p, '\0', s.len);
    size_t n = nul ? (size_t)(nul - s.p) : s.len;
    return n < max ? n : max;
}

/* Appends an error whose text holds request bytes: CR and LF become spaces so the reply
 * stays one line (as redis's rejectCommandFormat). */
static void reply_request_error(struct outbuf *o, const char *msg, size_t len) {
    REPLY_LITERAL(o, "-ERR ");
    char *p = outbuf_room(o, len + 2);
    for (size_t i = 0; i < len; i++)
        p[i] = msg[i] == '\r' || msg[i] == '\n' ? ' ' : msg[i];
    p[len] = '\r';
    p[len + 1] = '\n';
    o->len += len + 2;
}

/* "unknown command 'NAME', with args beginning with: 'a' 'b' ": names and arguments cut at
 * 128 bytes (the arguments together), as redis. */
static void reply_unknown_command(struct client *c, int argc, struct slice *argv) {
    char msg[512];
    size_t n = 0;
    static const char head[] = "unknown command '";
    static const char mid[] = "', with args beginning with: ";
    memcpy(msg, head, sizeof head - 1);
    n += sizeof head - 1;
    size_t name = c_len(argv[0], 128);
    memcpy(msg + n, argv[0].p, name);
    n += name;
    memcpy(msg + n, mid, sizeof mid - 1);
    n += sizeof mid - 1;
    size_t args = 0;
    for (int i = 1; i < argc && args < 128; i++) {
        size_t len = c_len(argv[i], 128 - args);
        msg[n++] = '\'';
        memcpy(msg + n, argv[i].p, len);
        n += len;
        msg[n++] = '\'';
        msg[n++] = ' ';
        args += len + 3;
    }
    reply_request_error(c->out, msg, n);
}

static void reply_unknown_subcommand(struct client *c, const struct command *container,
                                     struct slice sub) {
    char msg[512];
    size_t n = (size_t)snprintf(msg, sizeof msg, "unknown subcommand '%.*s'. Try ",
                                (int)c_len(sub, 128), sub.p);
    for (const char *p = container->name; *p; p++)
        msg[n++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    memcpy(msg + n, " HELP.", 6);
    n += 6;
    reply_request_error(c->out, msg, n);
}

void command_execute(struct client *c, int argc, struct slice *argv) {
    if (slice_is(argv[0], "quit")) {
        reply_ok(c->out);
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
        return;
    }
    const struct command *cmd = command_find(argv[0]);
    if (!cmd) {
        multi_flag_error(c);
        reply_unknown_command(c, argc, argv);
        return;
    }
    if (cmd->subcommands && argc >= 2) {
        const struct command *sub = subcommand_find(cmd, argv[1]);
        if (!sub) {
            multi_flag_error(c);
            reply_unknown_subcommand(c, cmd, argv[1]);
            return;
        }
        cmd = sub;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity) {
        if (strcmp(cmd->name, "exec") == 0) {
            /* A refused EXEC ends the transaction, saying why (redis's execCommandAbort). */
            multi_free(c);
            reply_error(c->out, "-EXECABORT Transaction discarded because of: wrong number of "
                                "arguments for 'exec' command");
            return;
        }
        multi_flag_error(c);
        reply_errorf(c->out, "wrong number of arguments for '%s' command", cmd->name);
        return;
    }
    if (UNLIKELY(c->multi != NULL) && multi_queues(c, cmd)) {
        multi_queue(c, cmd, argc, argv);
        return;
    }
    cmd->fn(c, argc, argv);
}

/* ---- helpers shared by the command groups ---- */

bool arg_ll(struct client *c, struct slice arg, long long *v) {
    if (parse_ll(arg.p, arg.len, v))
        return true;
    reply_error(c->out, ERR_NOT_INT);
    return false;
}

bool arg_positive_ll(struct client *c, struct slice arg, long long *v) {
    if (parse_ll(arg.p, arg.len, v) && *v >= 0)
        return true;
    reply_error(c->out, "value is out of range, must be positive");
    return false;
}

bool arg_double(struct client *c, struct slice arg, double *v) {
    if (parse_double(arg.p, arg.len, v))
        return true;
    reply_error(c->out, ERR_NOT_FLOAT);
    return false;
}

bool lookup_typed(struct client *c, struct slice key, enum value_type type, struct keyref *k) {
    *k = db_lookup(c->db, key);
    struct dentry *e = keyref_entry(k);
    if (e && entry_type(e) != type) {
        reply_error(c->out, ERR_WRONGTYPE);
        return false;
    }
    return true;
}

void delete_if_empty(struct keyref *k, size_t remaining) {
    if (remaining == 0)
        db_delete(k);
}
