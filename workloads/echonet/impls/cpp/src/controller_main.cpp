// echonet-cpp-controller: the ECHONET Lite controller program (SPEC §8).
//
//   echonet-cpp-controller [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]
//                          [--retries N] COMMAND ARGS...
//
// One request (or one discovery, or the seed's bench loop), then one JSON object on stdout:
// exit 0 on success, 1 with {"error": ...} when a request went unanswered or a reply was
// wrong, 2 with a message on stderr for a bad command line.
#include "controller.hpp"
#include "options.hpp"
#include "transport.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using echonet::Bytes;
using echonet::Eoj;
using echonet::Esv;
using echonet::Property;
using echonet::UsageError;

constexpr const char *kUsage =
    "usage: echonet-cpp-controller [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]\n"
    "                              [--retries N] COMMAND ARGS...\n"
    "commands:\n"
    "  get HOST EOJ EPCS              one Get (EOJ: 0ef001; EPCS: 80,82)\n"
    "  setc HOST EOJ SETS             one SetC (SETS: 80=30,b3=19)\n"
    "  seti HOST EOJ SETS             one SetI; waits one timeout for a SetI_SNA\n"
    "  setget HOST EOJ SETS EPCS      one SetGet\n"
    "  inf-req HOST EOJ EPCS          one INF_REQ\n"
    "  discover [--expect N] [--wait-ms MS]\n"
    "                                 Get of 0xD6 multicast to 224.0.23.0\n"
    "  bench HOST --mode faithful|batched --iterations N [--warmup N]\n"
    "                                 the seed's loop over the node profile's 12 properties\n"
    "options: --bind (default 0.0.0.0), --ifaddr (default --bind), --port (default 3610),\n"
    "         --timeout-ms (default 500), --retries (default 3)\n";

// The largest UDP payload over IPv4.
constexpr std::size_t kMaxUdpPayload = 65507;

// The 12 implementation-required properties of the node profile, in the seed's order.
constexpr std::array<std::uint8_t, 12> kBenchEpcs = {0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E,
                                                     0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7};

// ---- the command line ----------------------------------------------------------------------

// A SETS or EPCS list: the properties and the bytes their EDTs point into.
struct PropertyArgs {
    std::vector<std::vector<std::uint8_t>> data;
    std::vector<Property> properties;
};

struct Args {
    echonet::NetworkOptions net;
    echonet::ControllerSettings settings;
    std::string_view command;
    std::vector<std::string_view> operands;
    // discover
    std::size_t expect = 0;
    std::chrono::milliseconds wait{1000};
    // bench
    std::optional<std::string_view> mode;
    std::optional<std::uint64_t> iterations;
    std::uint64_t warmup = 0;
    std::vector<std::string_view> command_options; // to check they belong to the command
};

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

in_addr host_operand(std::string_view text) {
    if (auto addr = echonet::parse_ipv4(text))
        return *addr;
    throw UsageError("bad HOST " + quoted(text) + " (an IPv4 address)");
}

Eoj eoj_operand(std::string_view text) {
    if (auto eoj = echonet::parse_eoj(text))
        return *eoj;
    throw UsageError("bad EOJ " + quoted(text) + " (six hex digits, e.g. 0ef001)");
}

std::vector<std::string_view> split(std::string_view text) {
    std::vector<std::string_view> parts;
    if (text.empty())
        return parts;
    for (;;) {
        const auto comma = text.find(',');
        parts.push_back(text.substr(0, comma));
        if (comma == std::string_view::npos)
            return parts;
        text.remove_prefix(comma + 1);
    }
}

std::uint8_t epc_item(std::string_view item, std::string_view list) {
    const auto epc = item.size() == 2 ? echonet::parse_hex(item) : std::nullopt;
    if (!epc)
        throw UsageError("bad EPC " + quoted(item) + " in " + quoted(list) + " (two hex digits)");
    return (*epc)[0];
}

// EPCS: "80,82" -> properties with PDC 0. `may_be_empty` for SetGet's parts.
PropertyArgs epcs_operand(std::string_view text, bool may_be_empty = false) {
    PropertyArgs out;
    for (std::string_view item : split(text))
        out.properties.push_back({epc_item(item, text), {}});
    if (out.properties.size() > 255 || (out.properties.empty() && !may_be_empty))
        throw UsageError("bad EPCS " + quoted(text) + " (1 to 255 EPCs, e.g. 80,82)");
    return out;
}

// SETS: "80=30,b3=19" -> properties with their EDTs.
PropertyArgs sets_operand(std::string_view text, bool may_be_empty = false) {
    PropertyArgs out;
    const auto items = split(text);
    out.data.reserve(items.size()); // the EDT views below point into these vectors
    for (std::string_view item : items) {
        const auto eq = item.find('=');
        auto edt =
            eq == std::string_view::npos ? std::nullopt : echonet::parse_hex(item.substr(eq + 1));
        if (!edt || edt->size() > 255)
            throw UsageError("bad SETS item " + quoted(item) + " (EPC=HEXDATA, e.g. 80=30)");
        const std::uint8_t epc = epc_item(item.substr(0, eq), text);
        out.data.push_back(std::move(*edt));
        out.properties.push_back({epc, out.data.back()});
    }
    if (out.properties.size() > 255 || (out.properties.empty() && !may_be_empty))
        throw UsageError("bad SETS " + quoted(text) + " (1 to 255 items, e.g. 80=30,b3=19)");
    return out;
}

// nullopt: --help.
std::optional<Args> parse_args(int argc, char **argv) {
    Args a;
    echonet::ArgReader reader(argc, argv);
    while (const auto arg = reader.next()) {
        const auto [name, value] = *arg;
        if (name.empty() && a.command.empty()) {
            a.command = value;
        } else if (name.empty()) {
            a.operands.push_back(value);
        } else if (name == "--help") {
            return std::nullopt;
        } else if (a.net.take(name, value)) {
            continue; // --bind, --ifaddr, --port
        } else if (name == "--timeout-ms") {
            a.settings.timeout =
                std::chrono::milliseconds(echonet::number_option(name, value, 1, 3600000));
        } else if (name == "--retries") {
            a.settings.retries =
                static_cast<unsigned>(echonet::number_option(name, value, 0, 1000000));
        } else if (name == "--expect") {
            a.expect = echonet::number_option(name, value, 1, 65536);
            a.command_options.push_back(name);
        } else if (name == "--wait-ms") {
            a.wait = std::chrono::milliseconds(echonet::number_option(name, value, 0, 3600000));
            a.command_options.push_back(name);
        } else if (name == "--mode") {
            if (value != "faithful" && value != "batched")
                throw UsageError("bad --mode " + quoted(value) + " (faithful or batched)");
            a.mode = value;
            a.command_options.push_back(name);
        } else if (name == "--iterations") {
            a.iterations = echonet::number_option(name, value, 1, 1000000000);
            a.command_options.push_back(name);
        } else if (name == "--warmup") {
            a.warmup = echonet::number_option(name, value, 0, 1000000000);
            a.command_options.push_back(name);
        } else {
            throw UsageError("unknown option " + std::string(name));
        }
    }
    if (a.command.empty())
        throw UsageError("no command");
    static constexpr std::array<std::pair<std::string_view, std::size_t>, 7> operand_counts = {{
        {"get", 3},
        {"setc", 3},
        {"seti", 3},
        {"setget", 4},
        {"inf-req", 3},
        {"discover", 0},
        {"bench", 1},
    }};
    const auto known = std::ranges::find(operand_counts, a.command,
                                         &std::pair<std::string_view, std::size_t>::first);
    if (known == operand_counts.end())
        throw UsageError("unknown command " + quoted(a.command));
    if (a.operands.size() != known->second)
        throw UsageError(std::string(a.command) + " takes " + std::to_string(known->second) +
                         " operand(s), got " + std::to_string(a.operands.size()));
    for (std::string_view option : a.command_options) {
        const bool fits = option == "--expect" || option == "--wait-ms"
                              ? a.command == "discover"
                              : a.command == "bench"; // --mode, --iterations, --warmup
        if (!fits)
            throw UsageError(std::string(option) + " does not apply to " + std::string(a.command));
    }
    if (a.command == "bench" && (!a.mode || !a.iterations))
        throw UsageError("bench needs --mode and --iterations");
    return a;
}

// ---- JSON output ---------------------------------------------------------------------------

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
            out += esc;
        } else {
            out += c;
        }
    }
    return out + '"';
}

std::string hex(Bytes bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const std::uint8_t b : bytes) {
        out += digits[b >> 4];
        out += digits[b & 0x0F];
    }
    return out;
}

std::string hex(Eoj eoj) {
    const std::uint8_t b[] = {eoj.group, eoj.cls, eoj.instance};
    return hex(b);
}

std::string hex_tid(std::uint16_t tid) {
    const std::uint8_t b[] = {static_cast<std::uint8_t>(tid >> 8), static_cast<std::uint8_t>(tid)};
    return hex(b);
}

std::string properties_json(const echonet::PropertyList &properties) {
    std::string out = "[";
    for (const Property p : properties) {
        if (out.size() > 1)
            out += ", ";
        const std::uint8_t epc[] = {p.epc};
        out += "{\"epc\": \"" + hex(epc) + "\", \"edt\": \"" + hex(p.edt) + "\"}";
    }
    return out + "]";
}

void print(const std::string &json) {
    std::fputs(json.c_str(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

int fail(const std::string &message) {
    print("{\"error\": " + json_string(message) + "}");
    return 1;
}

std::string reply_json(const echonet::Reply &r, std::uint64_t ignored) {
    const echonet::Frame &f = r.frame;
    const std::uint8_t esv[] = {static_cast<std::uint8_t>(f.esv)};
    std::string out = "{\"host\": \"" + echonet::to_string(r.host) + "\", \"tid\": \"" +
                      hex_tid(f.tid) + "\", \"seoj\": \"" + hex(f.seoj) + "\", \"deoj\": \"" +
                      hex(f.deoj) + "\", \"esv\": \"" + hex(esv) + "\", ";
    if (echonet::has_two_parts(f.esv))
        out += "\"set\": " + properties_json(f.properties) +
               ", \"get\": " + properties_json(f.get_part);
    else
        out += "\"properties\": " + properties_json(f.properties);
    return out + ", \"attempts\": " + std::to_string(r.attempts) +
           ", \"ignored\": " + std::to_string(ignored) + "}";
}

std::string no_reply_message(in_addr host, unsigned attempts) {
    return "no reply from " + echonet::to_string(host) + " after " + std::to_string(attempts) +
           (attempts == 1 ? " attempt" : " attempts");
}

// ---- the commands --------------------------------------------------------------------------

// get, setc, seti, setget, inf-req: the request, encoded before any socket is opened so a bad
// operand is a usage error.
struct RequestPlan {
    in_addr host{};
    Esv esv{};
    std::vector<std::uint8_t> frame;
};

RequestPlan plan_request(const Args &a) {
    RequestPlan plan;
    plan.host = host_operand(a.operands[0]);
    const Eoj deoj = eoj_operand(a.operands[1]);
    PropertyArgs first, second;
    if (a.command == "get" || a.command == "inf-req") {
        plan.esv = a.command == "get" ? Esv::get : Esv::inf_req;
        first = epcs_operand(a.operands[2]);
    } else if (a.command == "setget") {
        plan.esv = Esv::setget;
        first = sets_operand(a.operands[2], true);
        second = epcs_operand(a.operands[3], true);
        if (first.properties.empty() && second.properties.empty())
            throw UsageError("setget needs at least one SET or EPC");
    } else {
        plan.esv = a.command == "seti" ? Esv::seti : Esv::setc;
        first = sets_operand(a.operands[2]);
    }
    plan.frame.resize(echonet::kMaxDatagram);
    const std::size_t size =
        echonet::build_request(plan.frame, deoj, plan.esv, first.properties, second.properties);
    if (size == 0 || size > kMaxUdpPayload)
        throw UsageError("request too large for one datagram");
    plan.frame.resize(size);
    return plan;
}

int run_request(echonet::Controller &ctl, const Args &a, RequestPlan &plan) {
    // SetI succeeds silently: one send, one timeout for a possible SetI_SNA.
    const bool seti = plan.esv == Esv::seti;
    const unsigned attempts = seti ? 1 : 1 + a.settings.retries;
    if (const auto reply = ctl.exchange(plan.host, plan.frame, attempts)) {
        print(reply_json(*reply, ctl.ignored()));
        return 0;
    }
    if (!seti)
        return fail(no_reply_message(plan.host, attempts));
    print("{\"host\": \"" + echonet::to_string(plan.host) + "\", \"tid\": \"" +
          hex_tid(ctl.last_tid()) + "\", \"seoj\": null, \"deoj\": null, \"esv\": null, " +
          "\"properties\": [], \"attempts\": 1, \"ignored\": " + std::to_string(ctl.ignored()) +
          "}");
    return 0;
}

int run_discover(echonet::Controller &ctl, const Args &a) {
    const echonet::Discovery d = ctl.discover(a.expect, a.wait);
    if (a.expect > 0 && d.nodes.size() < a.expect)
        return fail(std::to_string(d.nodes.size()) + " of " + std::to_string(a.expect) +
                    " nodes answered after " + std::to_string(d.attempts) + " multicasts");
    std::string nodes = "[";
    for (const echonet::DiscoveredNode &n : d.nodes) {
        if (nodes.size() > 1)
            nodes += ", ";
        std::string instances = "[";
        for (const Eoj e : n.instances)
            instances += (instances.size() > 1 ? ", \"" : "\"") + hex(e) + "\"";
        nodes += "{\"host\": \"" + echonet::to_string(n.host) + "\", \"eoj\": \"" + hex(n.eoj) +
                 "\", \"instances\": " + instances + "]}";
    }
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.6f", d.elapsed_s);
    print("{\"nodes\": " + nodes + "], \"elapsed_s\": " + elapsed + ", \"attempts\": " +
          std::to_string(d.attempts) + ", \"ignored\": " + std::to_string(ctl.ignored()) + "}");
    return 0;
}

// A bench reply must be a Get_Res carrying exactly the EPCs asked, in order.
bool expected_reply(const echonet::Frame &reply, Bytes epcs) {
    if (reply.esv != Esv::get_res || reply.properties.size() != epcs.size())
        return false;
    std::size_t i = 0;
    for (const Property p : reply.properties)
        if (p.epc != epcs[i++])
            return false;
    return true;
}

int run_bench(echonet::Controller &ctl, const Args &a, in_addr host) {
    const bool faithful = *a.mode == "faithful";
    // The requests are encoded once; each exchange only stamps its TID into them.
    struct BenchRequest {
        std::vector<std::uint8_t> frame;
        Bytes epcs;
    };
    std::vector<BenchRequest> requests;
    const auto add = [&](Bytes epcs) {
        std::vector<Property> properties;
        for (const std::uint8_t epc : epcs)
            properties.push_back({epc, {}});
        std::vector<std::uint8_t> frame(echonet::kHeaderSize + 2 * epcs.size());
        frame.resize(echonet::build_request(frame, echonet::kNodeProfile, Esv::get, properties));
        requests.push_back({std::move(frame), epcs});
    };
    if (faithful)
        for (std::size_t i = 0; i < kBenchEpcs.size(); ++i)
            add(Bytes(kBenchEpcs).subspan(i, 1));
    else
        add(kBenchEpcs);

    std::string error;
    const auto run = [&](std::uint64_t iterations) {
        for (std::uint64_t i = 0; i < iterations; ++i) {
            for (BenchRequest &r : requests) {
                const auto reply = ctl.exchange(host, r.frame);
                if (!reply) {
                    error = no_reply_message(host, 1 + a.settings.retries);
                    return false;
                }
                if (!expected_reply(reply->frame, r.epcs)) {
                    error = "wrong reply from " + echonet::to_string(host) + ": " +
                            reply_json(*reply, ctl.ignored());
                    return false;
                }
            }
        }
        return true;
    };
    if (!run(a.warmup))
        return fail(error);
    const std::uint64_t resent_before = ctl.resent(), ignored_before = ctl.ignored();
    const auto start = echonet::Clock::now();
    if (!run(*a.iterations))
        return fail(error);
    const double elapsed = std::chrono::duration<double>(echonet::Clock::now() - start).count();

    char numbers[64];
    std::snprintf(numbers, sizeof numbers, "%.6f", elapsed);
    print("{\"mode\": \"" + std::string(*a.mode) +
          "\", \"iterations\": " + std::to_string(*a.iterations) + ", \"requests\": " +
          std::to_string(*a.iterations * requests.size()) + ", \"elapsed_s\": " + numbers +
          ", \"retries\": " + std::to_string(ctl.resent() - resent_before) +
          ", \"ignored\": " + std::to_string(ctl.ignored() - ignored_before) + "}");
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    std::optional<Args> args;
    RequestPlan plan;
    in_addr bench_host{};
    try {
        args = parse_args(argc, argv);
        if (args && args->command == "bench")
            bench_host = host_operand(args->operands[0]);
        else if (args && args->command != "discover")
            plan = plan_request(*args);
    } catch (const UsageError &e) {
        std::fprintf(stderr, "echonet-cpp-controller: %s (see --help)\n", e.what());
        return 2;
    }
    if (!args) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    const Args &a = *args;
    echonet::SocketError error;
    std::optional<echonet::SocketWarning> warning; // a controller never joins the group
    auto socket = echonet::UdpSocket::open(a.net.socket_config(), error, warning);
    if (!socket) {
        std::fprintf(stderr, "echonet-cpp-controller: %s\n", error.message().c_str());
        return fail(error.message());
    }
    echonet::Controller ctl(std::move(*socket), a.settings);
    if (a.command == "discover")
        return run_discover(ctl, a);
    if (a.command == "bench")
        return run_bench(ctl, a, bench_host);
    return run_request(ctl, a, plan);
}
