// The key property of json_blocker on a realistic stream: frame after frame,
// the blocks its diff reports changed, added or removed are exactly the blocks
// holding the values the generator changed — whether frames arrive whole, as
// merge patches or as JSON patches.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "kvframe/json_blocker/json_blocker.h"
#include "moba/block_check.h"
#include "moba/moba_stream.h"
#include "moba/value_locator.h"

namespace kvframe::examples::moba {
namespace {

namespace jb = kvframe::json_blocker;

jb::Rules shipped_rules() {
  auto rules = jb::load_rules(KVFRAME_MOBA_RULES_FILE);
  EXPECT_TRUE(rules.ok()) << rules.error().to_string();
  return rules.ok() ? rules.value() : jb::Rules{};
}

enum class Feed { kWhole, kMergePatch, kJsonPatch };

const char* feed_name(Feed feed) {
  switch (feed) {
    case Feed::kWhole: return "Whole";
    case Feed::kMergePatch: return "MergePatch";
    case Feed::kJsonPatch: return "JsonPatch";
  }
  return "Unknown";
}

// Names the parameter in test names and failure messages.
void PrintTo(Feed feed, std::ostream* out) { *out << feed_name(feed); }

jb::Result<jb::FrameDiff> push(jb::FrameStream& stream, const Frame& frame, Feed feed) {
  if (frame.number == 0 || feed == Feed::kWhole) return stream.push_whole(frame.json);
  if (feed == Feed::kMergePatch) return stream.push_patch(frame.merge_patch, jb::PatchFormat::kMergePatch);
  return stream.push_patch(frame.json_patch, jb::PatchFormat::kJsonPatch);
}

class DirtyBlocks : public ::testing::TestWithParam<Feed> {};

TEST_P(DirtyBlocks, AreExactlyTheBlocksHoldingChanges) {
  StreamGenerator generator(StreamParams{});
  jb::FrameStream stream(shipped_rules());
  std::string previous_text;
  std::size_t changed = 0, added = 0, removed = 0;
  for (int n = 0; n < 200; ++n) {
    const Frame frame = generator.next();
    auto diff = push(stream, frame, GetParam());
    ASSERT_TRUE(diff.ok()) << "frame " << n << ": " << diff.error().to_string();
    ASSERT_EQ(stream.text(), frame.json) << "frame " << n;
    if (n > 0) {
      const BlockCheck check = check_blocks(frame.changes, previous_text, stream.previous(),
                                            stream.text(), stream.current(), diff.value());
      EXPECT_EQ(check.mismatches(), 0u)
          << "frame " << n << ": first unreported "
          << (check.unreported.empty() ? "-" : check.unreported[0]) << ", first unexplained "
          << (check.unexplained.empty() ? "-" : check.unexplained[0]) << ", first unlocated "
          << (check.unlocated.empty() ? "-" : check.unlocated[0]);
      EXPECT_EQ(diff->moved, 0u) << "frame " << n;  // the generator never reorders
      changed += diff->changed;
      added += diff->added;
      removed += diff->removed;
    }
    previous_text = stream.text();
  }
  // The stream exercised every kind of change.
  EXPECT_GT(changed, 0u);
  EXPECT_GT(added, 0u);
  EXPECT_GT(removed, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllFeeds, DirtyBlocks,
                         ::testing::Values(Feed::kWhole, Feed::kMergePatch, Feed::kJsonPatch),
                         [](const auto& param) { return std::string(feed_name(param.param)); });

TEST(ShippedRules, HideTheHiddenFields) {
  const Frame frame = StreamGenerator(StreamParams{}).next();
  auto partition = jb::partition(frame.json, shipped_rules());
  ASSERT_TRUE(partition.ok()) << partition.error().to_string();
  for (const jb::Block& block : partition->blocks()) {
    EXPECT_NE(block.id.substr(0, 5), "debug");
    EXPECT_EQ(block.text.find("server_time_ms"), std::string_view::npos) << block.id;
  }
}

// check_blocks must notice each kind of disagreement, or the tests above prove nothing.
TEST(CheckBlocks, FlagsEveryKindOfDisagreement) {
  StreamGenerator generator(StreamParams{});
  const Frame first = generator.next(), second = generator.next();
  jb::FrameStream stream(shipped_rules());
  ASSERT_TRUE(stream.push_whole(first.json).ok());
  auto diff = stream.push_whole(second.json);
  ASSERT_TRUE(diff.ok());
  auto check = [&](const std::vector<PathChange>& changes) {
    return check_blocks(changes, first.json, stream.previous(), second.json, stream.current(),
                        diff.value());
  };
  ASSERT_EQ(check(second.changes).mismatches(), 0u);

  // Without the changes to match's scalars (tick changes every frame), their
  // block is reported dirty for no listed reason.
  std::vector<PathChange> missing;
  for (const PathChange& change : second.changes) {
    const bool match_scalar = change.pointer.rfind("/match/", 0) == 0 &&
                              change.pointer.find('/', 7) == std::string::npos;
    if (!match_scalar) missing.push_back(change);
  }
  ASSERT_LT(missing.size(), second.changes.size());
  EXPECT_EQ(check(missing).unexplained, std::vector<std::string>{"match.{id..next_wave_tick}"});

  std::vector<PathChange> extra = second.changes;
  extra.push_back({PathChange::Kind::kModified, "/shop/catalog/0/cost"});
  EXPECT_EQ(check(extra).unreported.size(), 1u);

  std::vector<PathChange> bogus = second.changes;
  bogus.push_back({PathChange::Kind::kRemoved, "/no/such/value"});
  EXPECT_EQ(check(bogus).unlocated, std::vector<std::string>{"/no/such/value"});
}

TEST(ValueLocator, FindsWhereValuesStart) {
  const std::string json = R"({"a": [10, {"b": "x"}], "c~/d": true})";
  ValueLocator locator(json);
  EXPECT_EQ(locator.offset_of("/a"), json.find('['));
  EXPECT_EQ(locator.offset_of("/a/1/b"), json.find("\"x\""));
  EXPECT_EQ(locator.offset_of("/c~0~1d"), json.find("true"));
  EXPECT_EQ(locator.offset_of("/a/5"), std::nullopt);
  EXPECT_EQ(locator.offset_of("/missing"), std::nullopt);
  EXPECT_EQ(ValueLocator("{not json").offset_of("/a"), std::nullopt);
}

}  // namespace
}  // namespace kvframe::examples::moba
