#include "kvframe/protocol/protocol.h"

#include <string>

#include <flatbuffers/flexbuffers.h>
#include <gtest/gtest.h>

namespace kvframe::protocol {
namespace {

flexbuffers::Reference root_of(const std::vector<uint8_t>& buffer) {
  return flexbuffers::GetRoot(buffer.data(), buffer.size());
}

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ActionFlexbuffer, EveryJsonTypeKeepsItsKind) {
  auto built = action_flexbuffer(R"({"verb":"raise","amount":40,"odds":0.25,"all_in":false,"note":null,
                                     "target":{"id":"p3","seat":2},"cards":["Ah",{"suit":"s"},[1,-2]],
                                     "huge":18446744073709551615,"neg":-9223372036854775808})");
  ASSERT_TRUE(built.ok()) << built.error();
  ASSERT_TRUE(flexbuffers::VerifyBuffer(built->data(), built->size()));
  const flexbuffers::Map action = root_of(*built).AsMap();
  EXPECT_EQ(action.size(), 9u);
  EXPECT_TRUE(action["verb"].IsString());
  EXPECT_EQ(action["verb"].AsString().str(), "raise");
  EXPECT_TRUE(action["amount"].IsInt());
  EXPECT_EQ(action["amount"].AsInt64(), 40);
  EXPECT_TRUE(action["odds"].IsFloat());
  EXPECT_DOUBLE_EQ(action["odds"].AsDouble(), 0.25);
  EXPECT_TRUE(action["all_in"].IsBool());
  EXPECT_FALSE(action["all_in"].AsBool());
  EXPECT_TRUE(action["note"].IsNull());
  EXPECT_EQ(action["target"].AsMap()["id"].AsString().str(), "p3");
  EXPECT_EQ(action["target"].AsMap()["seat"].AsInt64(), 2);
  const flexbuffers::Vector cards = action["cards"].AsVector();
  ASSERT_EQ(cards.size(), 3u);
  EXPECT_EQ(cards[0].AsString().str(), "Ah");
  EXPECT_EQ(cards[1].AsMap()["suit"].AsString().str(), "s");
  EXPECT_EQ(cards[2].AsVector()[1].AsInt64(), -2);
  EXPECT_TRUE(action["huge"].IsFloat());  // beyond int64: a double
  EXPECT_EQ(action["neg"].AsInt64(), std::numeric_limits<int64_t>::min());
}

TEST(ActionFlexbuffer, AnyJsonValueAtTheRoot) {
  auto built = action_flexbuffer(" [true, \"x\\u00e9\\u0000y\"] ");
  ASSERT_TRUE(built.ok()) << built.error();
  const flexbuffers::Vector v = root_of(*built).AsVector();
  EXPECT_TRUE(v[0].AsBool());
  EXPECT_EQ(v[1].AsString().str(), std::string("x\xC3\xA9\0y", 5));  // strings are sized: U+0000 is fine
}

TEST(ActionFlexbuffer, RefusesWhatReadersCouldNotUse) {
  for (const char* bad : {"", "{", "{\"a\":1} x", "{\"a\":}", "nan", "{\"a\":1,\"a\":2}", "{\"a\\u0000b\":1}"}) {
    auto built = action_flexbuffer(bad);
    EXPECT_FALSE(built.ok()) << bad;
    if (!built.ok()) {
      EXPECT_FALSE(built.error().empty());
    }
  }
  EXPECT_NE(action_flexbuffer("{\"a\":1,\"a\":2}").error().find("twice"), std::string::npos);
}

TEST(ActionFlexbuffer, DepthLimitIsWhatTheVerifierTakes) {
  auto deepest = action_flexbuffer(nested(kMaxActionDepth));
  ASSERT_TRUE(deepest.ok()) << deepest.error();
  EXPECT_TRUE(flexbuffers::VerifyBuffer(deepest->data(), deepest->size()));
  auto deeper = action_flexbuffer(nested(kMaxActionDepth + 1));
  ASSERT_FALSE(deeper.ok());
  EXPECT_NE(deeper.error().find("deeper"), std::string::npos);
  EXPECT_FALSE(action_flexbuffer(nested(100000)).ok());  // no recursion: no stack to overflow
}

std::string result_message(uint64_t request_id, const std::vector<uint8_t>& action) {
  flatbuffers::FlatBufferBuilder b;
  auto bytes = b.CreateVector(action);
  fb::ResultBuilder result(b);
  result.add_action(bytes);
  result.add_stop(fb::StopReason::Complete);
  finish_message(b, request_id, result.Finish());
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

TEST(Decode, ResultWithAnAction) {
  auto built = action_flexbuffer(R"({"amount":5})");
  ASSERT_TRUE(built.ok());
  const std::string bytes = result_message(7, *built);
  std::vector<uint64_t> storage;
  auto decoded = decode(aligned(bytes, storage));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  const fb::Result* result = (*decoded)->body_as_Result();
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->stop(), fb::StopReason::Complete);
  EXPECT_EQ(result->action_flexbuffer_root().AsMap()["amount"].AsInt64(), 5);
}

// A corrupt nested action fails the whole message (flatc's verifier checks
// FlexBuffers fields), but the envelope is sound: the error names the request.
TEST(Decode, CorruptActionIsMalformedAndNamesTheRequest) {
  const std::string bytes = result_message(42, {0xde, 0xad, 0xbe, 0xef, 0x07, 0xff, 0x08});
  std::vector<uint64_t> storage;
  auto decoded = decode(aligned(bytes, storage));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().code, fb::ErrorCode::Malformed);
  EXPECT_EQ(decoded.error().request_id, 42u);
}

TEST(Decode, UnreadableEnvelopeNamesNoRequest) {
  const std::string bytes = result_message(42, {0xde, 0xad});
  std::vector<uint64_t> storage;
  auto decoded = decode(aligned(bytes.substr(0, 12), storage));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().request_id, 0u);
}

}  // namespace
}  // namespace kvframe::protocol
