/*
 * The command table and dispatch: every command by name, with redis's arity and key
 * positions, grouped by type in commands_<type>.c; lookups are case-insensitive.
 */
#ifndef REDIS_C_COMMANDS_H
#define REDIS_C_COMMANDS_H

#include "client.h"

typedef void command_fn(struct client *c, int argc, struct slice *argv);

struct command {
    const char *name; /* lower case; a subcommand's is "container|sub", as redis's fullname */
    command_fn *fn;
    int arity;         /* > 0: exactly that many words; < 0: at least -arity */
    const char *flags; /* COMMAND INFO flags, space-separated */
    int first_key, last_key, key_step;
    const char *group;                 /* COMMAND DOCS group, and the ACL category */
    const char *summary;               /* COMMAND DOCS summary */
    const struct command *subcommands; /* containers (CONFIG, CLIENT, COMMAND): a table */
};

/* Each group's table ends with an entry whose name is NULL. */
extern const struct command string_commands[];
extern const struct command key_commands[];
extern const struct command list_commands[];
extern const struct command hash_commands[];
extern const struct command set_commands[];
extern const struct command zset_commands[];
extern const struct command server_commands[];
extern const struct command transaction_commands[];

void commands_init(void);

/* Runs one request: name lookup, arity check, then the command (which writes its reply to
 * c->out). */
void command_execute(struct client *c, int argc, struct slice *argv);

/* For COMMAND: every top-level command, in table order. */
size_t command_count(void);
const struct command *command_at(size_t i);
const struct command *command_find(struct slice name);

/* ---- transactions (commands_transactions.c) ---- */

/* Whether this command is queued rather than run (the client is inside MULTI). */
bool multi_queues(const struct client *c, const struct command *cmd);
void multi_queue(struct client *c, const struct command *cmd, int argc, struct slice *argv);
/* A command refused while queueing: EXEC will discard the transaction. */
void multi_flag_error(struct client *c);
/* Drops a client's transaction state (DISCARD, EXEC, disconnect). */
void multi_free(struct client *c);

/* ---- helpers shared by the command groups ---- */

#define ERR_WRONGTYPE "-WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NOT_INT "value is not an integer or out of range"
#define ERR_NOT_FLOAT "value is not a valid float"
#define ERR_SYNTAX "syntax error"
#define ERR_OVERFLOW "increment or decrement would overflow"
#define ERR_NO_KEY "no such key"
#define ERR_INDEX "index out of range"

/* Parses an integer argument, replying the standard error if it is not one. */
bool arg_ll(struct client *c, struct slice arg, long long *v);
/* An integer >= 0; anything else is "value is out of range, must be positive" (redis's
 * getPositiveLongFromObjectOrReply, whose message covers non-numbers too). */
bool arg_positive_ll(struct client *c, struct slice arg, long long *v);
bool arg_double(struct client *c, struct slice arg, double *v);

/* Looks the key up; replies WRONGTYPE and returns false when it holds another type. */
bool lookup_typed(struct client *c, struct slice key, enum value_type type, struct keyref *k);

/* Whether the client's replies so far exceed the output-buffer limit (it will be closed):
 * loops that can produce unbounded output stop early. */
bool client_output_over_limit(const struct client *c);

/* Deletes the key if its collection became empty. */
void delete_if_empty(struct keyref *k, size_t remaining);

#endif
