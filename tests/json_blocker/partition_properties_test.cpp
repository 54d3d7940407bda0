// Properties of partition() over random documents and rule sets:
// deterministic, unique ids, disjoint ordered source ranges, every kept scalar
// in exactly one block, and the blocks put back together give the document
// minus its dropped paths, with its quantized numbers rounded.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "block_test_util.h"
#include "kvframe/json_blocker/partition.h"

namespace kvframe::json_blocker {
namespace {

using Json = nlohmann::json;

// Writes a random document, remembering where each scalar token starts and
// whether it lies under a dropped key ("ts").
class RandomDocument {
 public:
  explicit RandomDocument(std::uint64_t seed) : rng_(seed) {}

  std::string text;
  std::vector<std::pair<std::size_t, bool>> scalars;  // offset, dropped

  void generate() {
    text.clear();
    scalars.clear();
    next_id_ = 0;
    if (pick(4) == 0) {
      array(0, false);
    } else {
      object(0, false);
    }
  }

 private:
  std::size_t pick(std::size_t n) { return rng_() % n; }
  void space() {
    static const char* kSpaces[] = {"", "", "", " ", "\n  ", "\t"};
    text += kSpaces[pick(6)];
  }
  void value(int depth, bool dropped) {
    const std::size_t kind = depth > 4 ? 4 + pick(6) : pick(10);
    if (kind < 2) {
      object(depth, dropped);
    } else if (kind < 4) {
      array(depth, dropped);
    } else {
      scalars.emplace_back(text.size(), dropped);
      static const char* kScalars[] = {"0",     "-12",   "3.25",       "1e3",   "true", "false",
                                       "null",  "\"\"",  "\"plain\"",  "\"es\\\"c\\u00e9\\n\"",
                                       "\"日本\"", "123456789", "\"a long string value for budgets\""};
      text += kScalars[pick(13)];
    }
  }
  void object(int depth, bool dropped) {
    static const char* kKeys[] = {"hp", "pos", "ts", "name", "a b", "x.y", "items", "k~/", "é"};
    text += '{';
    std::set<std::size_t> used;
    const std::size_t n = pick(7);
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t k = pick(9);
      if (!used.insert(k).second) continue;
      if (used.size() > 1) text += ',';
      space();
      text += '"' + std::string(kKeys[k]) + '"';
      space();
      text += ':';
      space();
      value(depth + 1, dropped || k == 2);
    }
    space();
    text += '}';
  }
  void array(int depth, bool dropped) {
    text += '[';
    const std::size_t n = pick(8);
    const bool entities = pick(2) == 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i) text += ',';
      space();
      if (entities) {
        text += "{\"id\":\"e" + std::to_string(next_id_++) + "\",\"v\":";
        value(depth + 2, dropped);
        text += '}';
      } else {
        value(depth + 1, dropped);
      }
    }
    text += ']';
  }

  std::mt19937_64 rng_;
  int next_id_ = 0;
};

Json without_dropped(Json j) {
  if (j.is_object()) {
    j.erase("ts");
    for (auto& [key, child] : j.items()) child = without_dropped(child);
  } else if (j.is_array()) {
    for (auto& child : j) child = without_dropped(child);
  }
  return j;
}

// What a rule set's blocks hold of `document`: the rule sets below quantize
// only by rounding every number to an integer.
Json as_quantized(Json j, const Rules& rules) {
  if (rules.quantize.empty()) return j;
  if (j.is_number_float()) return std::nearbyint(j.get<double>());  // ties to even, as the rules do
  if (!j.is_structured()) return j;  // nlohmann iterates a scalar as a range of itself
  for (auto& child : j) child = as_quantized(child, rules);
  return j;
}

// Puts blocks back where their pointers say.
Json reassemble(const Partition& p) {
  Json out;
  for (const Block& b : p.blocks()) {
    const Json part = Json::parse(b.json());
    const std::string pointer(b.pointer);
    if (b.kind == BlockKind::kValue) {
      out[Json::json_pointer(pointer)] = part;
    } else if (b.kind == BlockKind::kMemberRun) {
      for (auto& [key, child] : part.items()) {
        out[Json::json_pointer(pointer) / key] = child;
      }
    } else {
      const std::string id(b.id);
      std::size_t first = std::stoul(id.substr(id.rfind('[') + 1));
      for (const auto& child : part) out[Json::json_pointer(pointer) / first++] = child;
    }
  }
  return out;
}

std::vector<Rules> rule_sets() {
  std::vector<Rules> sets;
  Rules base;
  base.drop = {"**.ts"};
  sets.push_back(base);
  for (int depth : {0, 1, 3, 5}) {
    Rules r = base;
    r.min_split_bytes = 0;
    r.max_depth = depth;
    sets.push_back(r);
  }
  Rules tiny = base;
  tiny.max_block_bytes = 32;
  tiny.merge_scalar_bytes = 12;
  tiny.scalar_array_chunk = 3;
  tiny.pin = {"**.pos", "items[*]"};
  sets.push_back(tiny);
  Rules cut = base;
  cut.arrays = {{"items", ArrayCut::kRows, 0}, {"**.pos", ArrayCut::kChunk, 2}, {"**", ArrayCut::kElements, 0}};
  sets.push_back(cut);
  Rules rounded = tiny;
  Quantize integers;
  integers.path = "**";
  integers.round_digits = 0;
  rounded.quantize = {integers};
  rounded.arrays = {{"**", ArrayCut::kChunk, 3}};
  sets.push_back(rounded);
  return sets;
}

TEST(PartitionProperties, HoldOnRandomDocuments) {
  const auto sets = rule_sets();
  RandomDocument doc(20261121);
  int checked = 0;
  for (int round = 0; round < 400; ++round) {
    doc.generate();
    const Json expected = without_dropped(Json::parse(doc.text));
    for (const Rules& rules : sets) {
      Partitioner partitioner(rules);
      auto result = partitioner.partition(doc.text);
      ASSERT_TRUE(result.ok()) << result.error().to_string() << "\n" << doc.text;
      const Partition& p = result.value();
      SCOPED_TRACE(doc.text);

      auto again = partitioner.partition(doc.text);
      ASSERT_EQ(testing::texts(again.value()), testing::texts(p));
      ASSERT_EQ(testing::ids(again.value()), testing::ids(p));

      std::set<std::string> unique;
      std::size_t last_end = 0;
      for (const Block& b : p.blocks()) {
        EXPECT_TRUE(unique.insert(std::string(b.id)).second) << "duplicate id " << b.id;
        EXPECT_GE(b.source.begin, last_end) << b.id;
        EXPECT_LT(b.source.begin, b.source.end) << b.id;
        EXPECT_LE(b.source.end, doc.text.size());
        last_end = b.source.end;
      }
      for (auto [offset, dropped] : doc.scalars) {
        if (!dropped) {
          EXPECT_GE(p.block_at(offset), 0) << "scalar at " << offset << " in no block";
        }
      }
      if (!expected.empty()) {
        EXPECT_EQ(reassemble(p), as_quantized(expected, rules));
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 400 * static_cast<int>(sets.size()));
}

}  // namespace
}  // namespace kvframe::json_blocker
