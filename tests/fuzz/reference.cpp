#include "reference.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvframe::fuzz {

namespace {

// Deeper than any max_nesting parse_rules allows (1024), so the reference's own
// depth limit never rejects a document the rules would accept.
constexpr std::size_t kReferenceDepth = 2048;

simdjson::dom::parser make_parser() {
  simdjson::dom::parser parser;
  if (parser.allocate(1 << 16, kReferenceDepth) != simdjson::SUCCESS) __builtin_trap();
  return parser;
}

// Separate parsers, so a frame's tree stays valid while its blocks are parsed.
simdjson::dom::parser& frame_parser() {
  static simdjson::dom::parser parser = make_parser();
  return parser;
}
simdjson::dom::parser& text_parser() {
  static simdjson::dom::parser parser = make_parser();
  return parser;
}

// simdjson's DOM reports an integer beyond 64 bits as NUMBER_ERROR although it
// is valid JSON; nlohmann (which stores it as a double) settles those.
bool valid_despite_number_error(simdjson::error_code error, std::string_view text) {
  return error == simdjson::NUMBER_ERROR && nlohmann::json::accept(text);
}

struct TreeFacts {
  std::size_t nesting = 0;  // containers on the deepest root-to-leaf path
  bool duplicate_key = false;
};

void inspect(simdjson::dom::element element, std::size_t depth, TreeFacts& facts) {
  simdjson::dom::object object;
  simdjson::dom::array array;
  if (element.get(object) == simdjson::SUCCESS) {
    facts.nesting = std::max(facts.nesting, depth + 1);
    std::vector<std::string_view> keys;  // unescaped, as duplicates are meant
    for (simdjson::dom::key_value_pair field : object) {
      keys.push_back(field.key);
      inspect(field.value, depth + 1, facts);
    }
    std::sort(keys.begin(), keys.end());
    facts.duplicate_key |= std::adjacent_find(keys.begin(), keys.end()) != keys.end();
  } else if (element.get(array) == simdjson::SUCCESS) {
    facts.nesting = std::max(facts.nesting, depth + 1);
    for (simdjson::dom::element child : array) inspect(child, depth + 1, facts);
  }
}

}  // namespace

FrameVerdict judge_frame(std::string_view input, const json_blocker::Limits& limits) {
  FrameVerdict verdict;
  if (input.size() > limits.max_document_bytes) {
    verdict.expected_error = ErrorCode::kTooLarge;
    return verdict;
  }
  auto parsed = frame_parser().parse(input.data(), input.size());
  if (parsed.error() != simdjson::SUCCESS) {
    verdict.decided = !valid_despite_number_error(parsed.error(), input);
    return verdict;  // malformed in one of many ways: no single expected error
  }
  const simdjson::dom::element root = parsed.value_unsafe();
  if (!root.is_object() && !root.is_array()) {
    verdict.expected_error = ErrorCode::kMalformedJson;
    return verdict;
  }
  TreeFacts facts;
  inspect(root, 0, facts);
  const bool too_deep = facts.nesting > static_cast<std::size_t>(limits.max_nesting);
  if (too_deep || facts.duplicate_key) {
    // With both wrong, either may be found first.
    if (too_deep != facts.duplicate_key) {
      verdict.expected_error = too_deep ? ErrorCode::kTooDeep : ErrorCode::kDuplicateKey;
    }
    return verdict;
  }
  verdict.accept = true;
  verdict.root = root;
  return verdict;
}

bool is_json(std::string_view text) {
  const simdjson::error_code error = text_parser().parse(text.data(), text.size()).error();
  return error == simdjson::SUCCESS || valid_despite_number_error(error, text);
}

std::string minified(std::string_view json) {
  std::string out(json.size() + simdjson::SIMDJSON_PADDING, '\0');
  std::size_t size = 0;
  if (simdjson::minify(json.data(), json.size(), out.data(), size) != simdjson::SUCCESS) return {};
  out.resize(size);
  return out;
}

}  // namespace kvframe::fuzz
