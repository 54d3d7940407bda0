// Delta frames (RFC 7386 merge patch, RFC 6902 JSON Patch) and FrameStream.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "block_test_util.h"
#include "kvframe/json_blocker/frame_stream.h"

namespace kvframe::json_blocker {
namespace {

using OrderedJson = nlohmann::ordered_json;

const char* kFrame = R"({"state":{"chips":{"p1":{"bet":10,"remain":990},"p2":{"bet":10,"remain":990}},"pot":20},"log":[{"id":"e1","t":"deal"}]})";

Rules holdem_rules() {
  Rules rules = testing::eager_rules();
  rules.pin = {"state.chips.*"};
  return rules;
}

TEST(Patch, MergePatchChangesMembersAndKeepsKeyOrder) {
  auto out = apply_patch(kFrame, R"({"state":{"chips":{"p2":{"bet":50,"remain":950}}},"new":1})",
                         PatchFormat::kMergePatch);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(out.value(), R"({"state":{"chips":{"p1":{"bet":10,"remain":990},"p2":{"bet":50,"remain":950}},"pot":20},"log":[{"id":"e1","t":"deal"}],"new":1})");
}

TEST(Patch, MergePatchNullDeletes) {
  auto out = apply_patch(kFrame, R"({"state":{"pot":null},"log":null})", PatchFormat::kMergePatch);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.value(), R"({"state":{"chips":{"p1":{"bet":10,"remain":990},"p2":{"bet":10,"remain":990}}}})");
}

TEST(Patch, JsonPatchAllOperations) {
  auto out = apply_patch(kFrame, R"([
      {"op":"replace","path":"/state/chips/p2/bet","value":50},
      {"op":"add","path":"/log/-","value":{"id":"e2","t":"bet"}},
      {"op":"remove","path":"/state/pot"},
      {"op":"copy","from":"/state/chips/p1","path":"/state/chips/p3"},
      {"op":"move","from":"/state/chips/p3","path":"/state/chips/p4"},
      {"op":"test","path":"/log/0/id","value":"e1"}])",
                         PatchFormat::kJsonPatch);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  const OrderedJson j = OrderedJson::parse(out.value());
  EXPECT_EQ(j["state"]["chips"]["p2"]["bet"], 50);
  EXPECT_EQ(j["log"].size(), 2u);
  EXPECT_FALSE(j["state"].contains("pot"));
  EXPECT_FALSE(j["state"]["chips"].contains("p3"));
  EXPECT_EQ(j["state"]["chips"]["p4"]["remain"], 990);
}

TEST(Patch, MissingPathIsTypedAndPointsAtTheOperation) {
  const std::string patch = R"([{"op":"replace","path":"/state/pot","value":1}, {"op":"remove","path":"/state/nope"}])";
  auto out = apply_patch(kFrame, patch, PatchFormat::kJsonPatch);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kPatchPathMissing);
  EXPECT_EQ(out.error().offset, patch.find("{\"op\":\"remove\""));
  EXPECT_NE(out.error().message.find("nope"), std::string::npos) << out.error().message;
}

TEST(Patch, FailedTestIsTyped) {
  auto out = apply_patch(kFrame, R"([{"op":"test","path":"/state/pot","value":99}])", PatchFormat::kJsonPatch);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kPatchTestFailed);
}

TEST(Patch, InvalidPatchesAreTyped) {
  for (auto [patch, format] : std::vector<std::pair<std::string, PatchFormat>>{
           {R"({"op":"add"})", PatchFormat::kJsonPatch},                 // not an array
           {R"([{"path":"/a"}])", PatchFormat::kJsonPatch},              // no op
           {R"([{"op":"jump","path":"/a"}])", PatchFormat::kJsonPatch},  // unknown op
           {R"({"a": )", PatchFormat::kMergePatch},                      // malformed
           {"{\"a\":\"\xff\"}", PatchFormat::kMergePatch},               // invalid UTF-8
           {R"({"a":1,"a":2})", PatchFormat::kMergePatch}}) {            // duplicate key
    auto out = apply_patch(kFrame, patch, format);
    ASSERT_FALSE(out.ok()) << patch;
    EXPECT_EQ(out.error().code, ErrorCode::kPatchInvalid) << patch << " -> " << out.error().to_string();
  }
}

TEST(FrameStream, WholeThenPatchesDiffLikeWholeFrames) {
  FrameStream stream(holdem_rules());
  auto first = stream.push_whole(kFrame);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->added, stream.current().size());
  EXPECT_EQ(stream.frames(), 1u);

  auto merged = stream.push_patch(R"({"state":{"chips":{"p2":{"bet":50,"remain":950}}}})",
                                  PatchFormat::kMergePatch);
  ASSERT_TRUE(merged.ok()) << merged.error().to_string();
  EXPECT_EQ(merged->changed, 1u);
  EXPECT_EQ(merged->unchanged, stream.current().size() - 1);

  auto patched = stream.push_patch(R"([{"op":"add","path":"/log/-","value":{"id":"e2","t":"bet"}}])",
                                   PatchFormat::kJsonPatch);
  ASSERT_TRUE(patched.ok()) << patched.error().to_string();
  EXPECT_EQ(patched->added, 1u);
  EXPECT_EQ(patched->changed, 0u);
  EXPECT_EQ(stream.frames(), 3u);

  // The patched text partitions exactly like the same frame sent whole.
  auto whole = testing::must_partition(stream.text(), holdem_rules());
  EXPECT_EQ(testing::texts(whole), testing::texts(stream.current()));
}

TEST(FrameStream, PatchBeforeAnyFrameIsAnError) {
  FrameStream stream;
  auto out = stream.push_patch(R"({"a":1})", PatchFormat::kMergePatch);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::kNoPreviousFrame);
}

TEST(FrameStream, AFailedFrameLosesNothing) {
  FrameStream stream(holdem_rules());
  ASSERT_TRUE(stream.push_whole(kFrame).ok());
  const std::vector<std::string> before = testing::texts(stream.current());

  EXPECT_FALSE(stream.push_whole(R"({"state": )").ok());
  EXPECT_FALSE(stream.push_patch(R"([{"op":"remove","path":"/nope"}])", PatchFormat::kJsonPatch).ok());
  // Half-applied JSON Patch: the first op succeeds, the second fails.
  EXPECT_FALSE(stream
                   .push_patch(R"([{"op":"remove","path":"/state/pot"},{"op":"remove","path":"/x"}])",
                               PatchFormat::kJsonPatch)
                   .ok());
  // A scalar merge patch (it would replace the whole frame by a number) is refused.
  EXPECT_FALSE(stream.push_patch(R"(5)", PatchFormat::kMergePatch).ok());

  EXPECT_EQ(testing::texts(stream.current()), before);
  EXPECT_EQ(stream.frames(), 1u);
  auto next = stream.push_patch(R"({"state":{"pot":30}})", PatchFormat::kMergePatch);
  ASSERT_TRUE(next.ok()) << next.error().to_string();
  EXPECT_EQ(next->changed, 1u);
  EXPECT_EQ(OrderedJson::parse(stream.text())["state"]["pot"], 30);
  EXPECT_TRUE(OrderedJson::parse(stream.text())["state"].contains("chips"));
}

TEST(FrameStream, RecordsTimings) {
  FrameStream stream;
  ASSERT_TRUE(stream.push_whole(kFrame).ok());
  ASSERT_TRUE(stream.push_patch(R"({"a":1})", PatchFormat::kMergePatch).ok());
  EXPECT_GE(stream.last_timings().patch_ms, 0.0);
  EXPECT_GT(stream.last_timings().partition_ms + stream.last_timings().patch_ms, 0.0);
}

}  // namespace
}  // namespace kvframe::json_blocker
