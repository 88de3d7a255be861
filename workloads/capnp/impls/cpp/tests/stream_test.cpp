// Messages on a pipe (SPEC §4, §6): the server over hand-made byte strings, good and hostile.
// Every hostile one must end in an exception (main's exit status 1), never a crash, a hang or
// a large allocation.
#include "carsales.hpp"
#include "catrank.hpp"
#include "eval.hpp"
#include "modes.hpp"
#include "stream.hpp"

#include "support.hpp"

#include <capnp/schema.h>
#include <kj/exception.h>

#include <gtest/gtest.h>

#include <fcntl.h>

namespace capbench {
namespace {

using test::Bytes;
using test::Words;

Options server_options(CaseId id, bool packed) {
    Options o;
    o.case_id = id;
    o.mode = Mode::server;
    o.packed = packed;
    o.iterations = 1;
    return o;
}

// Runs the server over `input`; returns the requests served, its output in `output`.
std::uint64_t serve(CaseId id, bool packed, const Bytes &input, Bytes *output = nullptr) {
    test::MemFile in(input), out;
    Progress progress;
    const std::uint64_t served =
        run_server(server_options(id, packed), progress, in.fd(), out.fd());
    if (output)
        *output = out.contents();
    return served;
}

// The server's failure on `input`, as the library described it.
std::string failure(CaseId id, bool packed, const Bytes &input) {
    try {
        serve(id, packed, input);
    } catch (const kj::Exception &e) {
        return e.getDescription().cStr();
    }
    return "(no failure)";
}

bool mentions(const std::string &failure, const char *text) {
    return failure.find(text) != std::string::npos;
}

Bytes eval_request(std::uint32_t count, bool packed) {
    Rng rng;
    Bytes all;
    for (std::uint32_t i = 0; i < count; ++i) {
        capnp::MallocMessageBuilder message;
        Eval::build(rng, message.initRoot<Expression>());
        const Bytes one = packed ? test::serialize_packed(message) : test::serialize(message);
        all.insert(all.end(), one.begin(), one.end());
    }
    return all;
}

TEST(Stream, ReaderOptionsAreTheSpecsLimits) {
    const capnp::ReaderOptions options = reader_options();
    EXPECT_EQ(8u * 1024 * 1024, options.traversalLimitInWords);
    EXPECT_EQ(64, options.nestingLimit);
}

TEST(Stream, ServerAnswersEveryRequestThenStopsAtTheEnd) {
    for (const bool packed : {false, true}) {
        Bytes output;
        EXPECT_EQ(3u, serve(CaseId::eval, packed, eval_request(3, packed), &output));
        // The responses read back in order, with the values the client expects.
        test::MemFile responses(output);
        MessageIn in(responses.fd(), packed, nullptr);
        Rng rng;
        for (int i = 0; i < 3; ++i) {
            capnp::MallocMessageBuilder scratch;
            const std::int32_t expected = Eval::build(rng, scratch.initRoot<Expression>());
            ASSERT_FALSE(in.at_end());
            in.read([&](capnp::MessageReader &reader) {
                EXPECT_EQ(expected, reader.getRoot<EvaluationResult>().getValue());
            });
        }
        EXPECT_TRUE(in.at_end());
        EXPECT_EQ(output.size(), in.bytes_read());
    }
}

TEST(Stream, EmptyInputServesNothing) {
    EXPECT_EQ(0u, serve(CaseId::carsales, false, {}));
    EXPECT_EQ(0u, serve(CaseId::carsales, true, {}));
}

TEST(Stream, WriterCountsBytesAsWritten) {
    for (const bool packed : {false, true}) {
        test::MemFile file;
        MessageOut out(file.fd(), packed);
        capnp::MallocMessageBuilder message;
        Rng rng;
        Carsales::build(rng, message.initRoot<ParkingLot>());
        out.write(message);
        const Bytes expected = packed ? test::serialize_packed(message) : test::serialize(message);
        EXPECT_EQ(expected.size(), out.bytes_written());
        EXPECT_EQ(expected, file.contents());
    }
}

// Fills `message`, whose first segment holds `words` words, with a message of `words` words in
// one segment: the root pointer and a list of `words - 1` eight-byte elements.
void build_words(capnp::MallocMessageBuilder &message, std::size_t words) {
    message.initRoot<capnp::AnyPointer>().initAs<capnp::List<std::uint64_t>>(
        static_cast<unsigned>(words - 1));
    ASSERT_EQ(1u, message.getSegmentsForOutput().size());
}

TEST(Stream, MessageWordsAreTheSegmentsSummed) {
    capnp::MallocMessageBuilder message(16, capnp::AllocationStrategy::FIXED_SIZE);
    Rng rng;
    Carsales::build(rng, message.initRoot<ParkingLot>());
    const auto segments = message.getSegmentsForOutput();
    ASSERT_GT(segments.size(), 2u);
    // What a reader sums from the segment table: the serialised size less the table.
    const std::size_t table = segments.size() / 2 + 1;
    EXPECT_EQ(capnp::computeSerializedSizeInWords(segments) - table, message_words(segments));
}

TEST(Stream, MessageBeyondTheCapIsRefusedWithNothingWritten) {
    ASSERT_EQ(std::size_t{8} * 1024 * 1024, kMaxMessageWords);
    for (const bool packed : {false, true}) {
        capnp::MallocMessageBuilder message(kMaxMessageWords + 1);
        build_words(message, kMaxMessageWords + 1);
        ASSERT_EQ(kMaxMessageWords + 1, message_words(message.getSegmentsForOutput()));
        test::MemFile file;
        MessageOut out(file.fd(), packed);
        try {
            out.write(message);
            ADD_FAILURE() << "written: " << packed;
        } catch (const kj::Exception &e) {
            EXPECT_PRED2(mentions, e.getDescription().cStr(), "8 Mi-word cap");
        }
        EXPECT_EQ(0u, out.bytes_written());
        EXPECT_TRUE(file.contents().empty());
    }
    // At the cap exactly, the message is written, and a reader accepts its size.
    capnp::MallocMessageBuilder message(kMaxMessageWords);
    build_words(message, kMaxMessageWords);
    test::MemFile file;
    MessageOut out(file.fd(), false);
    out.write(message);
    EXPECT_EQ(8 * (kMaxMessageWords + 1), out.bytes_written());
    test::MemFile back(file.contents());
    MessageIn in(back.fd(), false, nullptr);
    bool read = false;
    in.read([&](capnp::MessageReader &) { read = true; });
    EXPECT_TRUE(read);
    EXPECT_TRUE(in.at_end());
}

TEST(Stream, CatrankResponseAmplifiedBeyondTheCapIsRefused) {
    // 1,242,372 zero-sized results (found by fuzzing, fuzz/regressions/request/
    // catrank-response-amplified): a 4-word request, charged a word a result by the traversal
    // limit. The response gives each its 3-word struct and two 1-word empty texts (5 words, as
    // catrank's own bound counts) but the texts land in other segments than the list, each
    // with a landing pad: 7 words a result, 8,696,608 in all, which no reader accepts.
    const std::uint32_t n = 1242372;
    const Words request = test::framed({test::struct_pointer(0, 0, 1),
                                        test::list_pointer(0, test::kInlineComposite, 0),
                                        test::struct_pointer(static_cast<std::int32_t>(n), 0, 0)});
    for (const bool packed : {false, true}) {
        const Bytes input = packed ? test::pack(test::bytes_of(request)) : test::bytes_of(request);
        Bytes output = {1};
        try {
            serve(CaseId::catrank, packed, input, &output);
            ADD_FAILURE() << "served: " << packed;
        } catch (const kj::Exception &e) {
            EXPECT_PRED2(mentions, e.getDescription().cStr(), "8 Mi-word cap");
        }
        EXPECT_EQ(Bytes{1}, output) << "nothing was to be written";
    }
    // Fewer results: the same layout within the cap is answered.
    const Words fewer = test::framed({test::struct_pointer(0, 0, 1),
                                      test::list_pointer(0, test::kInlineComposite, 0),
                                      test::struct_pointer(1000000, 0, 0)});
    EXPECT_EQ(1u, serve(CaseId::catrank, false, test::bytes_of(fewer)));
}

TEST(Stream, BytesRoundTripBothWays) {
    for (const bool packed : {false, true}) {
        MessageBytes bytes(packed);
        Scratch scratch;
        Rng rng;
        capnp::MallocMessageBuilder message;
        const std::uint64_t amount = Carsales::build(rng, message.initRoot<ParkingLot>());
        const Bytes expected = packed ? test::serialize_packed(message) : test::serialize(message);
        EXPECT_EQ(expected.size(), bytes.write(message));
        bytes.read(scratch.words(), [&](capnp::MessageReader &reader) {
            std::uint64_t sum = 0;
            for (auto car : reader.getRoot<ParkingLot>().getCars())
                sum += car_value(car);
            EXPECT_EQ(amount, sum);
        });
    }
}

TEST(Stream, TruncatedMessageIsAnError) {
    for (const bool packed : {false, true}) {
        Bytes whole = eval_request(1, packed);
        for (const std::size_t keep :
             {std::size_t{3}, std::size_t{8}, whole.size() / 2, whole.size() - 1}) {
            const Bytes cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(keep));
            EXPECT_NE("(no failure)", failure(CaseId::eval, packed, cut)) << keep;
        }
    }
}

TEST(Stream, TruncatedMultiSegmentMessageIsAnError) {
    // libcapnp reads segments after the first lazily; the input ending in one of them must be
    // an exception like any other, not an abort from inside the library.
    for (const bool packed : {false, true}) {
        capnp::MallocMessageBuilder message(16, capnp::AllocationStrategy::FIXED_SIZE);
        Rng rng;
        Carsales::build(rng, message.initRoot<ParkingLot>());
        ASSERT_GT(message.getSegmentsForOutput().size(), 2u);
        const Bytes whole = packed ? test::serialize_packed(message) : test::serialize(message);
        EXPECT_EQ(1u, serve(CaseId::carsales, packed, whole));
        const Bytes cut(whole.begin(),
                        whole.begin() + static_cast<std::ptrdiff_t>(whole.size() / 2));
        EXPECT_PRED2(mentions, failure(CaseId::carsales, packed, cut), "Premature");
    }
    // Three segments, the middle one empty, the input ending in the third.
    const Words table = {2 | std::uint64_t{1} << 32, std::uint64_t{100} << 32};
    Bytes hostile = test::bytes_of(table);
    hostile.resize(hostile.size() + 8 + 40);
    EXPECT_PRED2(mentions, failure(CaseId::carsales, false, hostile), "Premature");
}

TEST(Stream, AbsurdSegmentCountsAreRefused) {
    // 2^32 - 1 segments: the count field is the count minus one, so this wraps to zero
    // segments, which holds no root pointer.
    EXPECT_NE("(no failure)",
              failure(CaseId::carsales, false, test::bytes_of({0x00000000'fffffffeull, 0})));
    EXPECT_NE("(no failure)",
              failure(CaseId::carsales, false, test::bytes_of({0x00000000'ffffffffull, 0, 0, 0})));
    EXPECT_PRED2(mentions,
                 failure(CaseId::carsales, false, test::bytes_of({0x00000001'00000257ull, 0})),
                 "too many segments");
}

TEST(Stream, SegmentTableBeyondTheCapIsRefusedBeforeReading) {
    // One segment of 8 Mi + 1 words, and nothing behind the table: refused from the table.
    const Words table = {std::uint64_t{8 * 1024 * 1024 + 1} << 32};
    EXPECT_PRED2(mentions, failure(CaseId::carsales, false, test::bytes_of(table)),
                 "Message is too large");
    EXPECT_PRED2(mentions, failure(CaseId::carsales, true, test::pack(test::bytes_of(table))),
                 "Message is too large");
    // Two segments whose sum passes the cap.
    const Words two = {1 | std::uint64_t{5 * 1024 * 1024} << 32, 5 * 1024 * 1024};
    EXPECT_PRED2(mentions, failure(CaseId::carsales, false, test::bytes_of(two)),
                 "Message is too large");
}

TEST(Stream, PointerOutOfBoundsIsAnError) {
    const Words message = test::framed({test::struct_pointer(100, 1, 0)});
    EXPECT_NE("(no failure)", failure(CaseId::carsales, false, test::bytes_of(message)));
    const Words list = test::framed(
        {test::struct_pointer(0, 0, 1), test::list_pointer(5, test::kInlineComposite, 30)});
    EXPECT_NE("(no failure)", failure(CaseId::catrank, false, test::bytes_of(list)));
}

TEST(Stream, ListClaimingTwoToThe29ElementsIsAnError) {
    // An inline-composite list of 2^29 - 1 words, in a message of four.
    const Words message =
        test::framed({test::struct_pointer(0, 0, 1),
                      test::list_pointer(0, test::kInlineComposite, (1u << 29) - 1),
                      test::struct_pointer(1 << 27, 1, 2), 0});
    EXPECT_NE("(no failure)", failure(CaseId::catrank, false, test::bytes_of(message)));
    // 2^28 zero-sized cars fit in no space at all: the traversal limit charges a word each
    // (libcapnp's defence against amplified lists).
    const Words empty_cars = test::framed({test::struct_pointer(0, 0, 1),
                                           test::list_pointer(0, test::kInlineComposite, 0),
                                           test::struct_pointer(1 << 28, 0, 0)});
    EXPECT_PRED2(mentions, failure(CaseId::carsales, false, test::bytes_of(empty_cars)),
                 "traversal limit");
}

TEST(Stream, WheelListOverrunningItsWordsIsAnErrorNotAnAbort) {
    // One car whose wheel list (inline composite, one word) has a tag claiming 2^20 one-word
    // wheels. The list is read inside Worth::of, which was noexcept: the library's exception
    // ended the process in std::terminate instead of reaching main (found by fuzzing,
    // fuzz/regressions/request/carsales-wheels-overrun).
    const Words message = test::framed({
        test::struct_pointer(0, 0, 1),                    // ParkingLot
        test::list_pointer(0, test::kInlineComposite, 3), // cars: one car of three pointers
        test::struct_pointer(1, 0, 3),                    // the tag: 1 element
        0,                                                // make
        0,                                                // model
        test::list_pointer(0, test::kInlineComposite, 1), // wheels: one word
        test::struct_pointer(1 << 20, 1, 0),              // the tag: 2^20 one-word wheels
        0,
    });
    EXPECT_PRED2(mentions, failure(CaseId::carsales, false, test::bytes_of(message)),
                 "overrun its word count");
}

TEST(Stream, PointerLoopHitsTheNestingLimit) {
    // An expression whose left side is itself.
    const auto data = Expression::_capnpPrivate::dataWordSize;
    const auto pointers = Expression::_capnpPrivate::pointerCount;
    Words segment = {test::struct_pointer(0, data, pointers)};
    segment.resize(1 + data + pointers, 0);
    const std::uint32_t offset =
        capnp::Schema::from<Expression::Left>().getProto().getStruct().getDiscriminantOffset();
    segment[1 + offset / 4] |= std::uint64_t{1} << (16 * (offset % 4)); // left: expression
    segment[1 + data] = test::struct_pointer(-static_cast<std::int32_t>(data) - 1, data,
                                             pointers); // left.expression -> the struct itself
    EXPECT_PRED2(mentions, failure(CaseId::eval, false, test::bytes_of(test::framed(segment))),
                 "nested");
}

TEST(Stream, ExpressionNestedTenThousandDeepIsRefused) {
    capnp::MallocMessageBuilder message;
    auto e = message.initRoot<Expression>();
    for (int i = 0; i < 10000; ++i) {
        e.getRight().setValue(1);
        e = e.getLeft().initExpression();
    }
    e.getLeft().setValue(1);
    e.getRight().setValue(1);
    EXPECT_PRED2(mentions, failure(CaseId::eval, false, test::serialize(message)), "nested");
    // Within the limit it is served: 60 levels.
    capnp::MallocMessageBuilder shallow;
    auto s = shallow.initRoot<Expression>();
    for (int i = 0; i < 60; ++i) {
        s.getRight().setValue(1);
        s = s.getLeft().initExpression();
    }
    EXPECT_EQ(1u, serve(CaseId::eval, false, test::serialize(shallow)));
}

TEST(Stream, AmplifiedTextHitsTheTraversalLimit) {
    // 1,000 results whose urls all point at one 10,000-word text: 13,000 words on the wire,
    // 10 million read.
    const std::uint32_t n = 1000, text = 10000;
    Words segment = {test::struct_pointer(0, 0, 1),
                     test::list_pointer(0, test::kInlineComposite, n * 3),
                     test::struct_pointer(static_cast<std::int32_t>(n), 1, 2)};
    const std::size_t text_at = segment.size() + n * 3;
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::size_t url_at = segment.size() + 1;
        segment.push_back(0); // score
        segment.push_back(test::list_pointer(static_cast<std::int32_t>(text_at - url_at - 1),
                                             test::kBytes, text * 8));
        segment.push_back(0); // snippet: null
    }
    segment.resize(text_at + text, 0x6161616161616161ull);
    segment.back() = 0x0061616161616161ull; // NUL-terminated
    EXPECT_PRED2(mentions, failure(CaseId::catrank, false, test::bytes_of(test::framed(segment))),
                 "traversal limit");
}

TEST(Stream, PackedRunPastTheMessageEndIsAnError) {
    // One segment of one word (a null root): packed as tag 0x10, 0x01, then a zero word whose
    // run claims five more zero words than the message holds.
    const Bytes valid = {0x10, 0x01, 0x00, 0x00};
    EXPECT_EQ(valid, test::pack(test::bytes_of(test::framed({0}))));
    EXPECT_EQ(1u, serve(CaseId::carsales, true, valid));
    const Bytes hostile = {0x10, 0x01, 0x00, 0x05};
    EXPECT_PRED2(mentions, failure(CaseId::carsales, true, hostile), "segment boundary");
}

TEST(Stream, UnknownEvalOperationIsAnError) {
    capnp::MallocMessageBuilder message;
    auto e = message.initRoot<Expression>();
    e.setOp(static_cast<Operation>(9));
    e.getLeft().setValue(1);
    e.getRight().setValue(1);
    EXPECT_PRED2(mentions, failure(CaseId::eval, false, test::serialize(message)),
                 "unknown operation");
}

} // namespace
} // namespace capbench
