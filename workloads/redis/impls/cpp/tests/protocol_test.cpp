#include "protocol.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace redis {
namespace {

struct Parsed {
    RequestParser::Status status;
    std::vector<std::string> args;
    std::size_t consumed = 0;
    std::string error;
};

// Parses the first request of `input`, handing it to the parser the way a connection does:
// one growing prefix per call, starting with `first_chunk` bytes (0: all at once).
Parsed parse(const std::string &input, std::size_t first_chunk = 0) {
    RequestParser parser;
    Parsed out{RequestParser::Status::incomplete, {}, 0, {}};
    std::size_t have = first_chunk == 0 ? input.size() : first_chunk;
    std::string prefix;
    for (;;) {
        // A fresh copy each time: the buffer may move between calls.
        prefix = input.substr(0, have);
        out.status = parser.parse(prefix);
        if (out.status != RequestParser::Status::incomplete || have >= input.size()) {
            break;
        }
        ++have;
    }
    if (out.status == RequestParser::Status::complete) {
        for (const auto a : parser.args()) {
            out.args.emplace_back(a);
        }
        out.consumed = parser.consumed();
    } else if (out.status == RequestParser::Status::error) {
        out.error = std::string(parser.error());
    }
    return out;
}

using Status = RequestParser::Status;

TEST(RequestParser, Multibulk) {
    const auto p = parse("*2\r\n$3\r\nGET\r\n$1\r\na\r\nrest");
    ASSERT_EQ(p.status, Status::complete);
    EXPECT_EQ(p.args, (std::vector<std::string>{"GET", "a"}));
    EXPECT_EQ(p.consumed, 20U);
}

TEST(RequestParser, BinarySafeArguments) {
    const std::string req("*2\r\n$3\r\nSET\r\n$5\r\na\0\r\nb\r\n", 24);
    const auto p = parse(req);
    ASSERT_EQ(p.status, Status::complete);
    EXPECT_EQ(p.args[1], std::string("a\0\r\nb", 5));
}

TEST(RequestParser, SameResultAtEverySplit) {
    const std::string req = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$10\r\n0123456789\r\n";
    for (std::size_t first = 1; first <= req.size(); ++first) {
        const auto p = parse(req, first);
        ASSERT_EQ(p.status, Status::complete) << "first chunk " << first;
        EXPECT_EQ(p.args, (std::vector<std::string>{"SET", "key", "0123456789"}));
        EXPECT_EQ(p.consumed, req.size());
    }
}

TEST(RequestParser, PartialRequestIsIncomplete) {
    RequestParser parser;
    EXPECT_EQ(parser.parse("*2\r\n$3\r\nGET\r\n$1\r\n"), Status::incomplete);
    RequestParser inl;
    EXPECT_EQ(inl.parse("PING"), Status::incomplete);
    EXPECT_EQ(inl.parse("PING\r"), Status::incomplete);
}

TEST(RequestParser, BytesNeededForLargeBulk) {
    RequestParser parser;
    EXPECT_EQ(parser.parse("*1\r\n$100000\r\nabc"), Status::incomplete);
    EXPECT_EQ(parser.bytes_needed(), 13U + 100000U + 2U);
}

TEST(RequestParser, EmptyRequestsHaveNoArguments) {
    for (const char *req : {"*0\r\n", "*-1\r\n", "*-7\r\n", "\r\n", "\n", "  \t \r\n"}) {
        const auto p = parse(req);
        ASSERT_EQ(p.status, Status::complete) << req;
        EXPECT_TRUE(p.args.empty()) << req;
        EXPECT_EQ(p.consumed, std::string(req).size()) << req;
    }
}

TEST(RequestParser, LineEndsAreNotChecked) {
    // As redis: the byte after '\r' and the two bytes after bulk data are skipped unchecked.
    const auto p = parse("*1\rX$4\rXPINGxy");
    ASSERT_EQ(p.status, Status::complete);
    EXPECT_EQ(p.args, (std::vector<std::string>{"PING"}));
}

TEST(RequestParser, ProtocolErrors) {
    const struct {
        std::string input;
        std::string error;
    } cases[] = {
        {"*abc\r\n", "ERR Protocol error: invalid multibulk length"},
        {"*+1\r\n", "ERR Protocol error: invalid multibulk length"},
        {"*01\r\n", "ERR Protocol error: invalid multibulk length"},
        {"*2147483648\r\n", "ERR Protocol error: invalid multibulk length"},
        {"*1\r\n+PING\r\n", "ERR Protocol error: expected '$', got '+'"},
        {"*1\r\n\r\n", "ERR Protocol error: expected '$', got '\r'"},
        {"*2\r\n$4\r\nPING\r\n$-1\r\n", "ERR Protocol error: invalid bulk length"},
        {"*1\r\n$536870913\r\n", "ERR Protocol error: invalid bulk length"},
        {"*1\r\n$04\r\n", "ERR Protocol error: invalid bulk length"},
        {"\"unbalanced\r\n", "ERR Protocol error: unbalanced quotes in request"},
        {"ECHO 'a\r\n", "ERR Protocol error: unbalanced quotes in request"},
        {"ECHO \"a\"b\r\n", "ERR Protocol error: unbalanced quotes in request"},
        {std::string(65537, 'x'), "ERR Protocol error: too big inline request"},
        {"*" + std::string(65536, '1'), "ERR Protocol error: too big mbulk count string"},
        {"*1\r\n$" + std::string(65536, '1'), "ERR Protocol error: too big bulk count string"},
    };
    for (const auto &c : cases) {
        const auto p = parse(c.input);
        ASSERT_EQ(p.status, Status::error) << c.input.substr(0, 40);
        EXPECT_EQ(p.error, c.error) << c.input.substr(0, 40);
    }
}

TEST(RequestParser, LimitsAreExact) {
    // 64 KiB without a newline still waits; one byte more is an error.
    EXPECT_EQ(parse(std::string(65536, 'x')).status, Status::incomplete);
    EXPECT_EQ(parse("*1\r\n$536870912\r\n").status, Status::incomplete);
}

TEST(RequestParser, NulInHeaderLineNeverCompletes) {
    // redis searches header lines with strchr, which stops at a NUL.
    EXPECT_EQ(parse(std::string("*1\0\r\n", 5)).status, Status::incomplete);
    EXPECT_EQ(parse(std::string("PING\0\r\n", 7)).status, Status::incomplete);
}

std::vector<std::string> split(const std::string &line, bool *ok = nullptr) {
    std::string storage;
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    const bool good = split_inline_args(line, storage, spans);
    if (ok != nullptr) {
        *ok = good;
    }
    std::vector<std::string> out;
    for (const auto &[off, len] : spans) {
        out.push_back(storage.substr(off, len));
    }
    return out;
}

TEST(InlineSplit, QuotingAndEscapes) {
    EXPECT_EQ(split("SET a b"), (std::vector<std::string>{"SET", "a", "b"}));
    EXPECT_EQ(split("  a\t b  "), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(split("\"hello world\""), (std::vector<std::string>{"hello world"}));
    EXPECT_EQ(split("\"a\\x41\\n\\t\\\"\""), (std::vector<std::string>{"aA\n\t\""}));
    EXPECT_EQ(split("\"\\x4\""), (std::vector<std::string>{"x4"}));
    EXPECT_EQ(split("'it\\'s'"), (std::vector<std::string>{"it's"}));
    EXPECT_EQ(split("'a\\nb'"), (std::vector<std::string>{"a\\nb"}));
    EXPECT_EQ(split("ab\"cd\""), (std::vector<std::string>{"abcd"}));
    EXPECT_EQ(split("\"\""), (std::vector<std::string>{""}));
    EXPECT_TRUE(split("").empty());
    bool ok = true;
    split("\"abc", &ok);
    EXPECT_FALSE(ok);
    split("'a'b", &ok);
    EXPECT_FALSE(ok);
}

std::string encode(void (*fn)(Reply &)) {
    ByteBuffer buf;
    Reply r(buf);
    fn(r);
    return std::string(buf.view());
}

TEST(Reply, Encodings) {
    EXPECT_EQ(encode([](Reply &r) { r.ok(); }), "+OK\r\n");
    EXPECT_EQ(encode([](Reply &r) { r.integer(-42); }), ":-42\r\n");
    EXPECT_EQ(encode([](Reply &r) { r.bulk("ab"); }), "$2\r\nab\r\n");
    EXPECT_EQ(encode([](Reply &r) { r.bulk(""); }), "$0\r\n\r\n");
    EXPECT_EQ(encode([](Reply &r) { r.null_bulk(); }), "$-1\r\n");
    EXPECT_EQ(encode([](Reply &r) { r.array(12); }), "*12\r\n");
    EXPECT_EQ(encode([](Reply &r) { r.bulk_double(0.1); }), "$19\r\n0.10000000000000001\r\n");
    EXPECT_EQ(encode([](Reply &r) { r.error("ERR a\r\nb"); }), "-ERR a  b\r\n");
}

// put_bulk and copy_bytes branch on the length (0-3, 4-7, 8-16, longer; one, two or more
// digits): every length across those edges, alone and as LRANGE's bulks() writes them.
TEST(Reply, BulkOfEveryShortLength) {
    std::vector<std::string> items;
    std::string expected;
    for (std::size_t n = 0; n <= 130; ++n) {
        std::string s;
        for (std::size_t i = 0; i < n; ++i) {
            s.push_back(static_cast<char>('a' + (i * 7 + n) % 26));
        }
        const std::string want = "$" + std::to_string(n) + "\r\n" + s + "\r\n";
        ByteBuffer buf;
        Reply r(buf);
        r.bulk(s);
        EXPECT_EQ(std::string(buf.view()), want) << n;
        items.push_back(s);
        expected += want;
    }
    ByteBuffer buf;
    Reply r(buf);
    r.bulks(items.begin(), items.end());
    EXPECT_EQ(std::string(buf.view()), expected);
}

} // namespace
} // namespace redis
