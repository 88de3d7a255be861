// The command line (SPEC §5): every bad one is a UsageError (exit status 2).
#include "options.hpp"

#include "errors.hpp"
#include "report.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace capbench {
namespace {

Options parse(std::vector<const char *> args) {
    args.insert(args.begin(), "capnp-cpp");
    return parse_options(static_cast<int>(args.size()), args.data());
}

TEST(Options, ParsesEveryWord) {
    const Options o = parse({"catrank", "pipe", "reuse", "packed", "1000"});
    EXPECT_EQ(CaseId::catrank, o.case_id);
    EXPECT_EQ(Mode::pipe, o.mode);
    EXPECT_TRUE(o.reuse);
    EXPECT_TRUE(o.packed);
    EXPECT_EQ(1000u, o.iterations);
    EXPECT_EQ(50u, o.warmup());
    const Options p = parse({"eval", "server", "no-reuse", "none", "1"});
    EXPECT_EQ(CaseId::eval, p.case_id);
    EXPECT_EQ(Mode::server, p.mode);
    EXPECT_FALSE(p.reuse);
    EXPECT_FALSE(p.packed);
    EXPECT_EQ(0u, p.warmup());
    EXPECT_EQ(1000000000u, parse({"eval", "bytes", "reuse", "none", "1000000000"}).iterations);
}

TEST(Options, BadCommandLinesAreUsageErrors) {
    const std::vector<std::vector<const char *>> bad = {
        {},
        {"carsales", "object", "reuse", "none"},
        {"carsales", "object", "reuse", "none", "10", "extra"},
        {"cars", "object", "reuse", "none", "10"},
        {"carsales", "objects", "reuse", "none", "10"},
        {"carsales", "object", "yes", "none", "10"},
        {"carsales", "bytes", "reuse", "zip", "10"},
        {"carsales", "object", "reuse", "packed", "10"}, // object serialises nothing
        {"carsales", "object", "reuse", "none", "0"},
        {"carsales", "object", "reuse", "none", "-5"},
        {"carsales", "object", "reuse", "none", "+5"},
        {"carsales", "object", "reuse", "none", "1000000001"},
        {"carsales", "object", "reuse", "none", "99999999999999999999999"},
        {"carsales", "object", "reuse", "none", "10x"},
        {"carsales", "object", "reuse", "none", " 10"},
        {"carsales", "object", "reuse", "none", ""},
        {"Carsales", "object", "reuse", "none", "10"},
    };
    for (const auto &args : bad)
        EXPECT_THROW(parse(args), UsageError) << args.size();
}

TEST(Options, ErrorNamesTheArgument) {
    try {
        parse({"carsales", "objects", "reuse", "none", "10"});
        FAIL();
    } catch (const UsageError &e) {
        EXPECT_NE(std::string(e.what()).find("MODE"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("objects"), std::string::npos) << e.what();
    }
}

TEST(Report, IsOneLineOfJsonWithEveryMember) {
    Options o = parse({"carsales", "pipe", "reuse", "none", "100"});
    Report r;
    r.checked = 105;
    r.request_bytes = 7;
    std::string json = report_json(o, r);
    EXPECT_EQ('\n', json.back());
    EXPECT_EQ(json.find('\n'), json.size() - 1);
    for (const char *member :
         {"\"program\": \"capnp-cpp\"", "\"library\": \"libcapnp 0.9.2\"", "\"case\": \"carsales\"",
          "\"mode\": \"pipe\"", "\"reuse\": \"reuse\"", "\"compression\": \"none\"",
          "\"iterations\": 100", "\"warmup\": 5", "\"setup_s\": ", "\"warmup_s\": ",
          "\"elapsed_s\": ", "\"cpu_s\": ", "\"request_bytes\": 7", "\"response_bytes\": 0",
          "\"checked\": 105"})
        EXPECT_NE(json.find(member), std::string::npos) << member;
    EXPECT_EQ(json.find("server_cpu_s"), std::string::npos);
    r.server_cpu_s = 0.5;
    EXPECT_NE(report_json(o, r).find("\"server_cpu_s\": 0.500000}"), std::string::npos);
}

} // namespace
} // namespace capbench
