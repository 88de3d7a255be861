// Command dispatch: the table of every command (name, arity, handler) and what a handler
// gets to work with.
#pragma once

#include "protocol.hpp"
#include "store.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redis {

using Args = std::span<const std::string_view>;

// Per-connection state that commands read or change.
struct Session {
    std::uint64_t id = 0;
    int db = 0;
    std::string name; // CLIENT SETNAME
    int protocol = 2; // RESP version: 3 after HELLO 3
    // MULTI: commands queued for EXEC (copies: the request buffer is reused meanwhile), and
    // whether one of them was refused (EXEC then aborts).
    bool in_multi = false;
    bool multi_failed = false;
    std::vector<std::vector<std::string>> queued;
    bool close_after_reply = false; // QUIT
};

// Server-wide counters for INFO and CLIENT, kept by the event loop.
struct ServerStats {
    std::int64_t start_ms = 0;
    int port = 0;
    std::uint64_t connected_clients = 0;
    std::uint64_t total_connections = 0;
    std::uint64_t total_commands = 0;
    std::uint64_t expired_keys = 0;
    std::uint64_t rejected_connections = 0;
};

struct Context {
    Store &store;
    Session &session;
    Reply &reply;
    ServerStats &stats;
    Rng &rng;
    std::int64_t now_ms;  // Unix milliseconds, read once per batch of requests
    std::string &scratch; // reusable temporary for building values

    Db &db() {
        return store.db(session.db);
    }
};

using Handler = void (*)(Context &ctx, Args args);

struct Command {
    std::string_view name; // lower case, e.g. "get" (subcommands: "config|get")
    int arity;             // redis's convention: N exactly, -N at least N (name included)
    Handler handler;
    std::string_view flags; // for COMMAND INFO: "write denyoom fast"
    int first_key;
    int last_key;
    int key_step;
    std::string_view categories; // for COMMAND INFO: "@write @string @fast"
    // Container commands (CONFIG, CLIENT, COMMAND) dispatch on their second argument.
    std::span<const Command> subcommands = {};
};

// Runs one request (args[0] is the command name). Replies the unknown-command and arity
// errors itself.
void execute(Context &ctx, Args args);

// The command table (for COMMAND, COMMAND COUNT, COMMAND INFO).
std::span<const Command> all_commands();
const Command *find_command(std::string_view name);

// Handlers, grouped by the file that implements them.
namespace cmd {
// strings (cmd_strings.cpp)
void get(Context &, Args);
void set(Context &, Args);
void setnx(Context &, Args);
void setex(Context &, Args);
void psetex(Context &, Args);
void getset(Context &, Args);
void getdel(Context &, Args);
void getex(Context &, Args);
void mget(Context &, Args);
void mset(Context &, Args);
void msetnx(Context &, Args);
void incr(Context &, Args);
void decr(Context &, Args);
void incrby(Context &, Args);
void decrby(Context &, Args);
void incrbyfloat(Context &, Args);
void append(Context &, Args);
void strlen(Context &, Args);
void getrange(Context &, Args);
void setrange(Context &, Args);
// keys (cmd_keys.cpp)
void del(Context &, Args);
void exists(Context &, Args);
void type(Context &, Args);
void expire(Context &, Args);
void pexpire(Context &, Args);
void expireat(Context &, Args);
void pexpireat(Context &, Args);
void ttl(Context &, Args);
void pttl(Context &, Args);
void expiretime(Context &, Args);
void pexpiretime(Context &, Args);
void persist(Context &, Args);
void keys(Context &, Args);
void scan(Context &, Args);
void dbsize(Context &, Args);
void flushdb(Context &, Args);
void flushall(Context &, Args);
void select(Context &, Args);
void randomkey(Context &, Args);
void rename(Context &, Args);
void renamenx(Context &, Args);
// lists (cmd_lists.cpp)
void lpush(Context &, Args);
void rpush(Context &, Args);
void lpushx(Context &, Args);
void rpushx(Context &, Args);
void lpop(Context &, Args);
void rpop(Context &, Args);
void llen(Context &, Args);
void lindex(Context &, Args);
void lset(Context &, Args);
void lrange(Context &, Args);
void ltrim(Context &, Args);
void lrem(Context &, Args);
// hashes (cmd_hashes.cpp)
void hset(Context &, Args);
void hsetnx(Context &, Args);
void hmset(Context &, Args);
void hget(Context &, Args);
void hmget(Context &, Args);
void hgetall(Context &, Args);
void hdel(Context &, Args);
void hlen(Context &, Args);
void hexists(Context &, Args);
void hincrby(Context &, Args);
void hincrbyfloat(Context &, Args);
void hkeys(Context &, Args);
void hvals(Context &, Args);
void hstrlen(Context &, Args);
// sets (cmd_sets.cpp)
void sadd(Context &, Args);
void srem(Context &, Args);
void smembers(Context &, Args);
void sismember(Context &, Args);
void smismember(Context &, Args);
void scard(Context &, Args);
void spop(Context &, Args);
void srandmember(Context &, Args);
// sorted sets (cmd_zsets.cpp)
void zadd(Context &, Args);
void zincrby(Context &, Args);
void zrange(Context &, Args);
void zrevrange(Context &, Args);
void zrangebyscore(Context &, Args);
void zscore(Context &, Args);
void zmscore(Context &, Args);
void zcard(Context &, Args);
void zrem(Context &, Args);
void zrank(Context &, Args);
void zrevrank(Context &, Args);
void zpopmin(Context &, Args);
void zpopmax(Context &, Args);
void zcount(Context &, Args);
// server and connection (cmd_server.cpp)
void ping(Context &, Args);
void echo(Context &, Args);
void quit(Context &, Args);
void info(Context &, Args);
void command(Context &, Args);
void hello(Context &, Args);
void client(Context &, Args);
void config(Context &, Args);
void time(Context &, Args);
// transactions (cmd_server.cpp)
void multi(Context &, Args);
void exec(Context &, Args);
void discard(Context &, Args);
} // namespace cmd

} // namespace redis
