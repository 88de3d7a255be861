#include "list.hpp"
#include "protocol.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <string_view>

namespace redis {
namespace {

std::vector<std::string> contents(const List &l) {
    std::vector<std::string> out;
    for (auto it = l.at(0); it != l.at(l.size()); ++it) {
        out.emplace_back(*it);
    }
    return out;
}

// Elements of 0 to 7 bytes sit in their slots, longer ones in their own blocks (including
// lengths with a two-byte varint).
std::string element(std::mt19937_64 &rng) {
    static constexpr std::size_t kLengths[] = {0, 1, 3, 7, 8, 15, 16, 127, 128, 300};
    const std::size_t n = kLengths[rng() % std::size(kLengths)];
    std::string s(n, '\0');
    for (char &c : s) {
        c = static_cast<char>('a' + rng() % 3); // few distinct values, so LREM finds matches
    }
    return s;
}

// Random pushes, pops, sets, trims and removals at both ends, through growing, wrapping and
// shrinking rings, checked against std::deque<std::string>.
TEST(List, MatchesDequeUnderRandomOperations) {
    std::mt19937_64 rng(14);
    for (int round = 0; round < 20; ++round) {
        List list;
        std::deque<std::string> model;
        for (int step = 0; step < 3000; ++step) {
            const auto op = rng() % 100;
            if (op < 35 || model.empty()) {
                const std::string s = element(rng);
                if (rng() % 2 == 0) {
                    list.push_front(s);
                    model.push_front(s);
                } else {
                    list.push_back(s);
                    model.push_back(s);
                }
            } else if (op < 65) {
                if (rng() % 2 == 0) {
                    ASSERT_EQ(list.front(), model.front());
                    list.pop_front();
                    model.pop_front();
                } else {
                    ASSERT_EQ(list.back(), model.back());
                    list.pop_back();
                    model.pop_back();
                }
            } else if (op < 85) {
                const std::size_t i = rng() % model.size();
                const std::string s = element(rng);
                list.set(i, s);
                model[i] = s;
            } else if (op < 93) {
                const std::string target = element(rng);
                const std::size_t limit = rng() % 4 == 0 ? ~std::size_t{0} : rng() % 3;
                const bool from_tail = rng() % 2 == 0;
                std::size_t expected = 0;
                if (!from_tail) {
                    for (auto it = model.begin(); it != model.end() && expected < limit;) {
                        if (*it == target) {
                            it = model.erase(it);
                            ++expected;
                        } else {
                            ++it;
                        }
                    }
                } else {
                    for (auto i = model.size(); i-- > 0 && expected < limit;) {
                        if (model[i] == target) {
                            model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
                            ++expected;
                        }
                    }
                }
                ASSERT_EQ(list.remove(target, limit, from_tail), expected);
            } else if (op < 95) {
                const std::size_t start = rng() % model.size();
                const std::size_t count = 1 + rng() % (model.size() - start);
                list.keep(start, count);
                model.erase(model.begin() + static_cast<std::ptrdiff_t>(start + count),
                            model.end());
                model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(start));
            } else {
                for (int i = 0; i < 200; ++i) { // grow past a few doublings
                    const std::string s = element(rng);
                    list.push_back(s);
                    model.push_back(s);
                }
            }
            ASSERT_EQ(list.size(), model.size());
            if (!model.empty()) {
                const std::size_t i = rng() % model.size();
                ASSERT_EQ(list[i], model[i]);
            }
        }
        ASSERT_EQ(contents(list), std::vector<std::string>(model.begin(), model.end()));
    }
}

// LRANGE's encoder takes in-slot elements as one word: the bytes must be the same as for the
// general path, at every length and across buffer chunks.
TEST(List, RepliesMatchPlainBulks) {
    List list;
    std::vector<std::string> plain;
    for (std::size_t i = 0; i < 3000; ++i) {
        std::string s(i % 20, static_cast<char>('A' + i % 26));
        if (i % 2 == 0) {
            list.push_back(s);
            plain.push_back(s);
        } else {
            list.push_front(s);
            plain.insert(plain.begin(), s);
        }
    }
    ByteBuffer a;
    ByteBuffer b;
    Reply(a).bulks(list.at(0), list.at(list.size()));
    Reply(b).bulks(plain.begin(), plain.end());
    EXPECT_EQ(std::string_view(a.data(), a.size()), std::string_view(b.data(), b.size()));
}

} // namespace
} // namespace redis
