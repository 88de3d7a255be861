/*
 * MULTI / EXEC / DISCARD: commands after MULTI are checked (name, arity) and queued, each
 * answered +QUEUED; EXEC runs them back to back and replies with all their replies in one
 * array (nothing else can run in between on a single-threaded server). A command refused
 * while queueing makes EXEC discard the whole transaction, as redis. WATCH is not provided.
 */
#include "commands.h"

#include <stdlib.h>

struct queued_command {
    const struct command *cmd;
    int argc;
    struct slice *argv; /* the arguments, copied: request buffers do not outlive a batch */
};

struct multi_state {
    bool dirty;
    size_t count, cap;
    struct queued_command *cmds;
};

void multi_free(struct client *c) {
    struct multi_state *m = c->multi;
    if (!m)
        return;
    for (size_t i = 0; i < m->count; i++)
        free(m->cmds[i].argv);
    free(m->cmds);
    free(m);
    c->multi = NULL;
}

void multi_flag_error(struct client *c) {
    if (c->multi)
        c->multi->dirty = true;
}

bool multi_queues(const struct client *c, const struct command *cmd) {
    if (!c->multi)
        return false;
    const char *n = cmd->name;
    return strcmp(n, "exec") != 0 && strcmp(n, "discard") != 0 && strcmp(n, "multi") != 0;
}

void multi_queue(struct client *c, const struct command *cmd, int argc, struct slice *argv) {
    struct multi_state *m = c->multi;
    size_t bytes = (size_t)argc * sizeof(struct slice);
    for (int i = 0; i < argc; i++)
        bytes += argv[i].len;
    struct slice *copy = malloc(bytes ? bytes : 1);
    if (copy && m->count == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 8;
        struct queued_command *bigger = realloc(m->cmds, cap * sizeof *bigger);
        if (bigger) {
            m->cmds = bigger;
            m->cap = cap;
        }
    }
    if (!copy || m->count == m->cap) {
        free(copy);
        m->dirty = true;
        reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    char *data = (char *)(copy + argc);
    for (int i = 0; i < argc; i++) {
        memcpy(data, argv[i].p, argv[i].len);
        copy[i] = (struct slice){data, argv[i].len};
        data += argv[i].len;
    }
    m->cmds[m->count++] = (struct queued_command){cmd, argc, copy};
    REPLY_LITERAL(c->out, "+QUEUED\r\n");
}

static void multi_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    if (c->multi) {
        reply_error(c->out, "MULTI calls can not be nested");
        return;
    }
    c->multi = calloc(1, sizeof *c->multi);
    if (!c->multi) {
        reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    reply_ok(c->out);
}

static void exec_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    struct multi_state *m = c->multi;
    if (!m) {
        reply_error(c->out, "EXEC without MULTI");
        return;
    }
    if (m->dirty) {
        reply_error(c->out, "-EXECABORT Transaction discarded because of previous errors.");
        multi_free(c);
        return;
    }
    /* Detached first: a queued MULTI-like state change must not see this one. */
    c->multi = NULL;
    reply_array(c->out, (long long)m->count);
    for (size_t i = 0; i < m->count; i++)
        m->cmds[i].cmd->fn(c, m->cmds[i].argc, m->cmds[i].argv);
    c->multi = m;
    multi_free(c);
}

static void discard_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    if (!c->multi) {
        reply_error(c->out, "DISCARD without MULTI");
        return;
    }
    multi_free(c);
    reply_ok(c->out);
}

const struct command transaction_commands[] = {
    {"multi", multi_command, 1, "noscript loading stale fast", 0, 0, 0, "transactions",
     "Mark the start of a transaction block", NULL},
    {"exec", exec_command, 1, "noscript loading stale", 0, 0, 0, "transactions",
     "Execute all commands issued after MULTI", NULL},
    {"discard", discard_command, 1, "noscript loading stale fast", 0, 0, 0, "transactions",
     "Discard all commands issued after MULTI", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};
