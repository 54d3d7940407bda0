// Fuzz entry point over json_blocker: partition, rules, patches, diff and a
// FrameStream session (input layout in fuzz_entry.h). Every outcome is checked
// against invariants.h; violations trap.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_entry.h"
#include "invariants.h"
#include "kvframe/json_blocker/json_blocker.h"
#include "reference.h"

namespace kvframe::fuzz {
namespace {

namespace jb = json_blocker;

// Small budgets and some pins and drops, so short inputs still split into many
// blocks of every kind; the patterns match the seed corpus's game-like keys.
constexpr std::string_view kTightRules = R"({
  "max_depth": 4, "min_split_bytes": 8, "max_block_bytes": 64,
  "merge_scalar_bytes": 16, "scalar_array_chunk": 3, "key_fields": ["id", "name"],
  "pin": ["**.pos", "units[*].hp", "state.*"],
  "drop": ["debug_*", "**.timestamp", "units[1]"],
  "limits": {"max_nesting": 16, "max_document_bytes": 2048}
})";

const jb::Rules& tight_rules() {
  static const jb::Rules rules = [] {
    auto parsed = jb::parse_rules(kTightRules);
    FUZZ_CHECK(parsed.ok(), "the fuzz target's own rules are invalid");
    return std::move(parsed).value();
  }();
  return rules;
}

// Splits at kPartSeparator into at most `max_parts` parts, always `min_parts`
// or more: missing parts are empty (views into the input, never null ones).
std::vector<std::string_view> split_parts(std::string_view rest, std::size_t min_parts,
                                          std::size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const std::size_t at = rest.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(rest.substr(0, at));
    rest.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(rest);
  while (parts.size() < min_parts) parts.push_back(rest.substr(rest.size()));
  return parts;
}

std::vector<std::uint64_t> hashes(const jb::Partition& partition) {
  std::vector<std::uint64_t> out;
  for (const jb::Block& block : partition.blocks()) out.push_back(block.hash);
  return out;
}

void fuzz_rules_then_frame(std::string_view rules_text, std::string_view frame) {
  auto rules = jb::parse_rules(rules_text);
  if (!rules) {
    FUZZ_CHECK(rules.error().code == ErrorCode::kInvalidRules,
               "a bad rules document gave " + rules.error().to_string());
    return;
  }
  check_partition(frame, rules.value());
}

// Patches are applied by nlohmann; what json_blocker owes is the checking
// around it: invalid documents and patches refused, results that are JSON and
// that survive another round trip unchanged (or every later frame would show
// spurious changes).
void fuzz_patch(std::string_view document, std::string_view patch, jb::PatchFormat format) {
  const jb::Limits limits;
  const FrameVerdict document_verdict = judge_frame(document, limits);
  const bool patch_must_fail = judge_frame(patch, limits).must_reject();
  auto patched = jb::apply_patch(document, patch, format, limits);
  if (!patched) {
    const ErrorCode code = patched.error().code;
    FUZZ_CHECK(code != ErrorCode::kIo && code != ErrorCode::kInvalidRules &&
                   code != ErrorCode::kNoPreviousFrame,
               "apply_patch failed with an impossible error: " + patched.error().to_string());
    FUZZ_CHECK(
        !document_verdict.must_accept() || !patch_must_fail || code == ErrorCode::kPatchInvalid,
        "an invalid patch gave " + patched.error().to_string());
    return;
  }
  FUZZ_CHECK(!document_verdict.must_reject(), "apply_patch accepted an invalid document");
  FUZZ_CHECK(!patch_must_fail, "apply_patch accepted an invalid patch");
  FUZZ_CHECK(is_json(*patched), "a patched document is not JSON: " + *patched);
  // A JSON Patch may replace the root with a scalar or nest past the limits.
  if (!judge_frame(*patched, limits).accept) return;
  auto round_trip = jb::apply_patch(*patched, "[]", jb::PatchFormat::kJsonPatch, limits);
  FUZZ_CHECK(round_trip && *round_trip == *patched,
             "a patched document changes when patched with nothing: " + *patched);
  if (format == jb::PatchFormat::kMergePatch) {  // RFC 7386 merge patches are idempotent
    auto twice = jb::apply_patch(*patched, patch, format, limits);
    FUZZ_CHECK(twice && *twice == *patched, "a merge patch applied twice differs from once");
  }
}

void fuzz_diff(std::string_view previous_text, std::string_view current_text) {
  jb::Partitioner partitioner(tight_rules());
  auto previous = partitioner.partition(previous_text);
  auto current = partitioner.partition(current_text);
  if (!previous || !current) return;
  const jb::FrameDiff forward = jb::diff(*previous, *current);
  const jb::FrameDiff backward = jb::diff(*current, *previous);
  check_diff(*previous, *current, forward);
  check_diff(*current, *previous, backward);
  FUZZ_CHECK(forward.added == backward.removed && forward.removed == backward.added &&
                 forward.changed == backward.changed,
             "diff(a, b) and diff(b, a) disagree on what was added, removed or changed");
}

// A session: a failed frame must leave the stream as it was, an accepted one
// must look exactly like a fresh partition of the stream's text.
void fuzz_stream(const std::vector<std::string_view>& frames) {
  jb::FrameStream stream(tight_rules());
  jb::Partitioner fresh(tight_rules());
  for (std::string_view frame : frames) {
    if (frame.empty()) continue;
    const int kind = static_cast<std::uint8_t>(frame[0] - '0') % 3;
    frame.remove_prefix(1);
    const std::string text_before = stream.text();
    const std::uint64_t frames_before = stream.frames();
    const std::vector<std::uint64_t> hashes_before = hashes(stream.current());
    auto result = kind == 0   ? stream.push_whole(frame)
                  : kind == 1 ? stream.push_patch(frame, jb::PatchFormat::kMergePatch)
                              : stream.push_patch(frame, jb::PatchFormat::kJsonPatch);
    if (!result) {
      FUZZ_CHECK(stream.text() == text_before && stream.frames() == frames_before &&
                     hashes(stream.current()) == hashes_before,
                 "a rejected frame changed the stream: " + result.error().to_string());
      FUZZ_CHECK(
          kind == 0 || frames_before > 0 || result.error().code == ErrorCode::kNoPreviousFrame,
          "a patch before any frame gave " + result.error().to_string());
      continue;
    }
    FUZZ_CHECK(stream.frames() == frames_before + 1, "an accepted frame was not counted");
    FUZZ_CHECK(kind != 0 || stream.text() == frame, "a whole frame is not the stream's text");
    check_blocks(stream.text(), stream.current(), tight_rules());
    check_diff(stream.previous(), stream.current(), result.value());
    auto again = fresh.partition(stream.text());
    FUZZ_CHECK(again && hashes(*again) == hashes(stream.current()),
               "the stream's partition differs from a fresh partition of its text");
  }
}

}  // namespace
}  // namespace kvframe::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvframe::fuzz;
  namespace jb = kvframe::json_blocker;
  if (size == 0) return 0;
  constexpr int kModes = 7;
  const int mode = static_cast<std::uint8_t>(data[0] - '0') % kModes;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (mode) {
    case 0: check_partition(rest, jb::Rules{}); break;
    case 1: check_partition(rest, tight_rules()); break;
    case 2: {
      const auto parts = split_parts(rest, 2, 2);
      fuzz_rules_then_frame(parts[0], parts[1]);
      break;
    }
    case 3:
    case 4: {
      const auto parts = split_parts(rest, 2, 2);
      fuzz_patch(parts[0], parts[1],
                 mode == 3 ? jb::PatchFormat::kMergePatch : jb::PatchFormat::kJsonPatch);
      break;
    }
    case 5: {
      const auto parts = split_parts(rest, 2, 2);
      fuzz_diff(parts[0], parts[1]);
      break;
    }
    default: fuzz_stream(split_parts(rest, 1, 16)); break;
  }
  return 0;
}
