// Commands run in-process against a Store, checked against redis 7.0.15's reply bytes.
#include "commands.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace redis {
namespace {

class Commands : public ::testing::Test {
  protected:
    std::string run(std::initializer_list<std::string_view> argv) {
        ByteBuffer out;
        Reply reply(out);
        Context ctx{store_, session_, reply, stats_, rng_, now_, scratch_};
        const std::vector<std::string_view> args(argv);
        execute(ctx, args);
        return std::string(out.view());
    }

    Store store_;
    Session session_;
    ServerStats stats_;
    Rng rng_{1};
    std::int64_t now_ = 1'700'000'000'000;
    std::string scratch_;
};

TEST_F(Commands, StringsAndErrors) {
    EXPECT_EQ(run({"SET", "a", "1"}), "+OK\r\n");
    EXPECT_EQ(run({"GET", "a"}), "$1\r\n1\r\n");
    EXPECT_EQ(run({"INCR", "a"}), ":2\r\n");
    EXPECT_EQ(run({"get", "nokey"}), "$-1\r\n");
    EXPECT_EQ(run({"GET"}), "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT_EQ(run({"FOO", "a", "b"}),
              "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n");
    EXPECT_EQ(run({"SET", "s", "abc"}), "+OK\r\n");
    EXPECT_EQ(run({"INCR", "s"}), "-ERR value is not an integer or out of range\r\n");
    EXPECT_EQ(run({"SET", "m", "9223372036854775807"}), "+OK\r\n");
    EXPECT_EQ(run({"INCR", "m"}), "-ERR increment or decrement would overflow\r\n");
    EXPECT_EQ(run({"LPUSH", "s", "x"}),
              "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    EXPECT_EQ(run({"SET", "a", "1", "EX", "0"}), "-ERR invalid expire time in 'set' command\r\n");
    EXPECT_EQ(run({"INCRBYFLOAT", "f", "10.5"}), "$4\r\n10.5\r\n");
    EXPECT_EQ(run({"INCRBYFLOAT", "f", "-0.5"}), "$2\r\n10\r\n");
}

// Names are looked up packed into 16 bytes with their length, lower-cased a word at a time:
// case, names of 1 to 13 bytes, a trailing NUL and a too-long name.
TEST_F(Commands, NameLookup) {
    EXPECT_EQ(run({"pInG"}), "+PONG\r\n");
    EXPECT_EQ(run({"SET", "k", "1"}), "+OK\r\n");
    EXPECT_EQ(run({"ZRANGEBYSCORE", "z", "0", "1"}), "*0\r\n");
    EXPECT_EQ(run({"HINCRBYFLOAT", "h", "f", "1"}), "$1\r\n1\r\n");
    EXPECT_EQ(run({std::string_view("get\0", 4), "k"}),
              "-ERR unknown command 'get', with args beginning with: 'k' \r\n");
    EXPECT_EQ(run({"ZRANGEBYSCOREXYZ"}),
              "-ERR unknown command 'ZRANGEBYSCOREXYZ', with args beginning with: \r\n");
    EXPECT_EQ(run({"CONFIG", "GeT", "nothing"}), "*0\r\n");
}

TEST_F(Commands, ExpiryIsLazy) {
    EXPECT_EQ(run({"SET", "k", "v", "PX", "100"}), "+OK\r\n");
    EXPECT_EQ(run({"PTTL", "k"}), ":100\r\n");
    EXPECT_EQ(run({"TTL", "k"}), ":0\r\n");
    now_ += 100;
    EXPECT_EQ(run({"GET", "k"}), "$-1\r\n");
    EXPECT_EQ(run({"TTL", "k"}), ":-2\r\n");
    EXPECT_EQ(run({"DBSIZE"}), ":0\r\n");
}

TEST_F(Commands, EmptyCollectionsDeleteTheirKey) {
    EXPECT_EQ(run({"RPUSH", "l", "a", "b"}), ":2\r\n");
    EXPECT_EQ(run({"LPOP", "l", "5"}), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    EXPECT_EQ(run({"EXISTS", "l"}), ":0\r\n");
    EXPECT_EQ(run({"HSET", "h", "f", "v"}), ":1\r\n");
    EXPECT_EQ(run({"HDEL", "h", "f"}), ":1\r\n");
    EXPECT_EQ(run({"TYPE", "h"}), "+none\r\n");
    EXPECT_EQ(run({"ZADD", "z", "0.1", "a"}), ":1\r\n");
    EXPECT_EQ(run({"ZPOPMIN", "z"}), "*2\r\n$1\r\na\r\n$19\r\n0.10000000000000001\r\n");
    EXPECT_EQ(run({"DBSIZE"}), ":0\r\n");
}

TEST_F(Commands, RangesWithNegativeIndexes) {
    run({"RPUSH", "l", "0", "1", "2", "3", "4"});
    EXPECT_EQ(run({"LRANGE", "l", "-2", "-1"}), "*2\r\n$1\r\n3\r\n$1\r\n4\r\n");
    EXPECT_EQ(run({"LRANGE", "l", "3", "1"}), "*0\r\n");
    run({"ZADD", "z", "1", "a", "2", "b", "3", "c"});
    EXPECT_EQ(run({"ZRANGE", "z", "-1", "-1", "WITHSCORES"}), "*2\r\n$1\r\nc\r\n$1\r\n3\r\n");
    EXPECT_EQ(run({"ZRANGE", "z", "(1", "+inf", "BYSCORE", "LIMIT", "1", "1"}),
              "*1\r\n$1\r\nc\r\n");
}

TEST_F(Commands, SelectAndConfig) {
    EXPECT_EQ(run({"SELECT", "16"}), "-ERR DB index is out of range\r\n");
    EXPECT_EQ(run({"SELECT", "15"}), "+OK\r\n");
    EXPECT_EQ(session_.db, 15);
    EXPECT_EQ(run({"CONFIG", "GET", "save"}), "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
    EXPECT_EQ(run({"CONFIG", "GET", "appendonly"}), "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
    EXPECT_EQ(run({"CONFIG", "GET"}),
              "-ERR wrong number of arguments for 'config|get' command\r\n");
    EXPECT_EQ(run({"CONFIG", "FOO"}), "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n");
}

// Found by difffuzz.py (cases.py fuzz-exec-arity-aborts): a refused EXEC discards the
// transaction, as redis's rejectCommand does, in MULTI or not.
TEST_F(Commands, ExecWithArgumentsAborts) {
    const std::string abort = "-EXECABORT Transaction discarded because of: wrong number of "
                              "arguments for 'exec' command\r\n";
    EXPECT_EQ(run({"EXEC", "x"}), abort);
    EXPECT_EQ(run({"MULTI"}), "+OK\r\n");
    EXPECT_EQ(run({"SET", "a", "1"}), "+QUEUED\r\n");
    EXPECT_EQ(run({"EXEC", "x"}), abort);
    EXPECT_EQ(run({"EXEC"}), "-ERR EXEC without MULTI\r\n");
    EXPECT_EQ(run({"GET", "a"}), "$-1\r\n");
}

// Found by UBSan (make check-deep, cases.py fuzz-expiretime-max): seconds were rounded as
// (ms + 500) / 1000, a signed overflow for an expiry near 2^63-1 ms. redis 7.0.15's replies.
TEST_F(Commands, ExpireTimeRoundsWithoutOverflow) {
    EXPECT_EQ(run({"SET", "a", "1", "PXAT", "9223372036854775807"}), "+OK\r\n");
    EXPECT_EQ(run({"EXPIRETIME", "a"}), ":9223372036854776\r\n");
    EXPECT_EQ(run({"PEXPIRETIME", "a"}), ":9223372036854775807\r\n");
    EXPECT_EQ(run({"TTL", "a"}), ":9223370336854776\r\n");
    EXPECT_EQ(run({"PEXPIREAT", "a", "9223372036854775500"}), ":1\r\n");
    EXPECT_EQ(run({"EXPIRETIME", "a"}), ":9223372036854776\r\n");
    EXPECT_EQ(run({"PEXPIREAT", "a", "9223372036854775499"}), ":1\r\n");
    EXPECT_EQ(run({"EXPIRETIME", "a"}), ":9223372036854775\r\n");
}

} // namespace
} // namespace redis
