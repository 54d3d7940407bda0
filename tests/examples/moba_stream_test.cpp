// The MOBA generator on its own: determinism, sizes, patches, and that its
// list of changes is true.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "common/deterministic_rng.h"
#include "moba/moba_stream.h"

namespace kvframe::examples::moba {
namespace {

using Json = nlohmann::ordered_json;
using Kind = PathChange::Kind;

std::vector<Frame> generate(const StreamParams& params, int frames) {
  StreamGenerator generator(params);
  std::vector<Frame> out;
  for (int i = 0; i < frames; ++i) out.push_back(generator.next());
  return out;
}

// Splits an RFC 6901 pointer into unescaped tokens.
std::vector<std::string> tokens(const std::string& pointer) {
  std::vector<std::string> out;
  for (std::size_t at = 1; at <= pointer.size();) {
    std::size_t end = pointer.find('/', at);
    if (end == std::string::npos) end = pointer.size();
    std::string token = pointer.substr(at, end - at);
    for (std::size_t i = 0; (i = token.find('~', i)) != std::string::npos; ++i) {
      token.replace(i, 2, token[i + 1] == '1' ? "/" : "~");
    }
    out.push_back(token);
    at = end + 1;
  }
  return out;
}

// The value in `other` that `pointer` names in `frame`: array elements that
// carry an "id" are followed by id (indices shift when units die), others by
// index. Null when `other` has no counterpart.
const Json* counterpart(const Json& frame, const Json& other, const std::string& pointer) {
  const Json* here = &frame;
  const Json* there = &other;
  for (const std::string& token : tokens(pointer)) {
    if (here->is_object()) {
      if (!there->is_object() || !there->contains(token)) return nullptr;
      here = &(*here)[token];
      there = &(*there)[token];
      continue;
    }
    here = &(*here)[std::stoul(token)];
    if (!there->is_array()) return nullptr;
    const Json* match = nullptr;
    if (here->is_object() && here->contains("id")) {
      for (const Json& element : *there) {
        if (element.is_object() && element.value("id", Json()) == (*here)["id"]) match = &element;
      }
    } else if (std::stoul(token) < there->size()) {
      match = &(*there)[std::stoul(token)];
    }
    if (match == nullptr) return nullptr;
    there = match;
  }
  return there;
}

TEST(DeterministicRng, SameSeedSameDrawsWithinBounds) {
  DeterministicRng a(42), b(42);
  for (int i = 0; i < 1000; ++i) {
    const int x = a.between(-3, 7);
    EXPECT_EQ(x, b.between(-3, 7));
    EXPECT_GE(x, -3);
    EXPECT_LE(x, 7);
    const double u = a.unit();
    EXPECT_EQ(u, b.unit());
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

TEST(MobaStream, SameSeedGivesSameBytes) {
  StreamParams params;
  params.seed = 7;
  const auto first = generate(params, 30), second = generate(params, 30);
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].json, second[i].json) << "frame " << i;
    EXPECT_EQ(first[i].merge_patch, second[i].merge_patch) << "frame " << i;
    EXPECT_EQ(first[i].json_patch, second[i].json_patch) << "frame " << i;
    ASSERT_EQ(first[i].changes.size(), second[i].changes.size()) << "frame " << i;
    for (std::size_t c = 0; c < first[i].changes.size(); ++c) {
      EXPECT_EQ(first[i].changes[c].pointer, second[i].changes[c].pointer);
    }
  }
}

TEST(MobaStream, DifferentSeedGivesDifferentFrames) {
  StreamParams a, b;
  a.seed = 1;
  b.seed = 2;
  const auto one = generate(a, 5), two = generate(b, 5);
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_NE(one[i].json, two[i].json) << "frame " << i;
}

TEST(MobaStream, DefaultFramesAreRealisticallyLarge) {
  for (const Frame& frame : generate(StreamParams{}, 20)) {
    EXPECT_GE(frame.json.size(), 150u * 1000) << "frame " << frame.number;
    EXPECT_LE(frame.json.size(), 300u * 1000) << "frame " << frame.number;
  }
}

TEST(MobaStream, ParamsForBytesHitsTheTarget) {
  for (std::size_t target : {std::size_t{256} << 10, std::size_t{1} << 20}) {
    StreamGenerator generator(params_for_bytes(target, 3));
    const double size = static_cast<double>(generator.next().json.size());
    EXPECT_GT(size, 0.75 * double(target)) << target;
    EXPECT_LT(size, 1.25 * double(target)) << target;
  }
}

TEST(MobaStream, PatchesTurnThePreviousFrameIntoTheCurrent) {
  const auto frames = generate(StreamParams{}, 40);
  EXPECT_TRUE(frames[0].merge_patch.empty());
  EXPECT_TRUE(frames[0].json_patch.empty());
  for (std::size_t i = 1; i < frames.size(); ++i) {
    const Json previous = Json::parse(frames[i - 1].json);
    const Json current = Json::parse(frames[i].json);
    Json merged = previous;
    merged.merge_patch(Json::parse(frames[i].merge_patch));
    EXPECT_EQ(merged, current) << "merge patch, frame " << i;
    const Json patched = previous.patch(Json::parse(frames[i].json_patch));
    EXPECT_EQ(patched, current) << "JSON patch, frame " << i;
    // FrameStream re-partitions the patched text: it must be the same bytes.
    EXPECT_EQ(patched.dump(), frames[i].json) << "JSON patch, frame " << i;
  }
}

TEST(MobaStream, ListedChangesAreRealAndSkipHiddenFields) {
  StreamParams params;
  params.change_rate = 0.05;  // more kills and spawns per frame
  const auto frames = generate(params, 120);
  std::set<std::string> seen;  // "<kind> <top-level member>"
  Json current = Json::parse(frames[0].json);
  for (std::size_t i = 1; i < frames.size(); ++i) {
    const Json previous = std::move(current);
    current = Json::parse(frames[i].json);
    EXPECT_NE(previous["debug"], current["debug"]);  // hidden fields do change...
    for (const PathChange& change : frames[i].changes) {
      SCOPED_TRACE("frame " + std::to_string(i) + " " + change.pointer);
      EXPECT_NE(change.pointer.rfind("/debug", 0), 0u);  // ...but are not listed
      EXPECT_NE(change.pointer, "/match/server_time_ms");
      seen.insert(std::string(change_kind_name(change.kind)) + " " + tokens(change.pointer)[0]);
      switch (change.kind) {
        case Kind::kModified: {
          const Json* before = counterpart(current, previous, change.pointer);
          ASSERT_NE(before, nullptr);
          EXPECT_NE(*before, current.at(Json::json_pointer(change.pointer)));
          break;
        }
        case Kind::kAdded:
          EXPECT_EQ(counterpart(current, previous, change.pointer), nullptr);
          break;
        case Kind::kRemoved:
          EXPECT_EQ(counterpart(previous, current, change.pointer), nullptr);
          break;
      }
    }
  }
  for (const char* expected : {"modified match", "modified heroes", "modified units",
                               "modified towers", "added units", "removed units", "added events",
                               "removed events"}) {
    EXPECT_EQ(seen.count(expected), 1u) << expected;
  }
}

TEST(MobaStream, ChangesAboutChangeRateOfEntitiesPerFrame) {
  StreamParams params;
  params.change_rate = 0.03;
  const auto frames = generate(params, 60);
  double changed_entities = 0;
  for (std::size_t i = 1; i < frames.size(); ++i) {
    std::set<std::string> entities;  // "/units/12", ... modified in this frame
    for (const PathChange& change : frames[i].changes) {
      const auto path = tokens(change.pointer);
      const bool entity = path[0] == "heroes" || path[0] == "units" || path[0] == "towers";
      if (change.kind == Kind::kModified && entity) entities.insert(path[0] + "/" + path[1]);
    }
    changed_entities += double(entities.size());
  }
  const double expected = params.change_rate * (params.heroes + params.units + params.towers);
  const double mean = changed_entities / double(frames.size() - 1);
  // Some picks end in a removal (a kill) rather than a modification, and kills
  // touch the killer and whoever was targeting the dead unit.
  EXPECT_GT(mean, 0.6 * expected);
  EXPECT_LT(mean, 1.6 * expected);
}

}  // namespace
}  // namespace kvframe::examples::moba
