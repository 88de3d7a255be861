#include "collections.hpp"
#include "flat_table.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace redis {
namespace {

// Owns the members of a FlatTable<MemberTraits> for the test.
struct Table {
    FlatTable<MemberTraits> t;
    ~Table() {
        t.for_each([](Member *m) { Member::destroy(m); });
    }
    bool insert(const std::string &s) {
        const auto h = hash_bytes(s);
        if (t.find(s, h) != FlatTable<MemberTraits>::npos) {
            return false;
        }
        t.insert_new(h, Member::create(s));
        return true;
    }
    bool erase(const std::string &s) {
        const auto slot = t.find(s);
        if (slot == FlatTable<MemberTraits>::npos) {
            return false;
        }
        Member::destroy(t.erase(slot));
        return true;
    }
};

TEST(FlatTable, MatchesStdSetUnderRandomOperations) {
    Table table;
    std::set<std::string> model;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 200000; ++i) {
        const std::string key = "k" + std::to_string(rng() % 5000);
        if (rng() % 3 == 0) {
            EXPECT_EQ(table.erase(key), model.erase(key) == 1);
        } else {
            EXPECT_EQ(table.insert(key), model.insert(key).second);
        }
        ASSERT_EQ(table.t.size(), model.size());
    }
    for (const auto &k : model) {
        EXPECT_NE(table.t.find(k), FlatTable<MemberTraits>::npos);
    }
    // Load stays at most 3/4, and the table shrinks as it empties.
    EXPECT_LE(table.t.size() * 4, table.t.capacity() * 3);
    for (const auto &k : model) {
        table.erase(k);
    }
    EXPECT_EQ(table.t.capacity(), 0U);
}

TEST(FlatTable, ScanReturnsEveryElementAcrossResizes) {
    Table table;
    for (int i = 0; i < 1000; ++i) {
        table.insert("a" + std::to_string(i));
    }
    std::map<std::string, int> seen;
    std::uint64_t cursor = 0;
    int steps = 0;
    do {
        cursor = table.t.scan(cursor, 10, [&](const Member *m) { ++seen[std::string(m->str())]; });
        // Grow the table in the middle of the scan, then shrink it again.
        if (++steps == 20) {
            for (int i = 0; i < 5000; ++i) {
                table.insert("b" + std::to_string(i));
            }
        }
        if (steps == 60) {
            for (int i = 0; i < 5000; ++i) {
                table.erase("b" + std::to_string(i));
            }
        }
    } while (cursor != 0);
    for (int i = 0; i < 1000; ++i) {
        EXPECT_GE(seen["a" + std::to_string(i)], 1) << i;
    }
}

TEST(FlatTable, RandomSlotIsOccupied) {
    Table table;
    for (int i = 0; i < 10; ++i) {
        table.insert(std::to_string(i));
    }
    std::set<std::string> picked;
    for (std::uint64_t r = 0; r < 1000; ++r) {
        const auto slot = table.t.random_slot(r * 0x9E3779B97F4A7C15ULL);
        ASSERT_TRUE(table.t.occupied(slot));
        picked.insert(std::string(table.t.at(slot)->str()));
    }
    EXPECT_EQ(picked.size(), 10U);
}

TEST(Set, IntegerSetsListInNumericOrder) {
    Set s;
    for (const char *m : {"10", "-5", "3", "1"}) {
        s.add(m);
    }
    std::vector<std::string> order;
    s.for_each([&](std::string_view m) { order.emplace_back(m); });
    EXPECT_EQ(order, (std::vector<std::string>{"-5", "1", "3", "10"}));
    EXPECT_TRUE(s.contains("3"));
    EXPECT_FALSE(s.contains("03"));
    s.add("x"); // no longer all integers
    EXPECT_EQ(s.size(), 5U);
    EXPECT_TRUE(s.contains("10"));
}

TEST(Hash, SmallHashesKeepInsertionOrder) {
    Hash h;
    h.set("b", "1");
    h.set("a", "2");
    h.set("b", "3");
    std::vector<std::string> order;
    h.for_each([&](std::string_view f, std::string_view v) {
        order.emplace_back(std::string(f) + "=" + std::string(v));
    });
    EXPECT_EQ(order, (std::vector<std::string>{"b=3", "a=2"}));
}

} // namespace
} // namespace redis
