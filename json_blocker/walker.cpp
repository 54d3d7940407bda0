#include "walker.h"

#include <algorithm>
#include <cstring>

#include "duplicate_keys.h"
#include "input_errors.h"

namespace kvframe::json_blocker::detail {

namespace od = simdjson::ondemand;

namespace {

constexpr std::uint32_t kNoNode = UINT32_MAX;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

bool is_container(od::json_type type) {
  return type == od::json_type::object || type == od::json_type::array;
}

// A "rows" cut keeps every element whole and apart; an "elements" cut only
// keeps scalars from merging (containers never merge), so big elements may
// still split.
bool pinned_by_cut(ArrayCut cut, od::json_type element_type) {
  switch (cut) {
    case ArrayCut::kRows: return true;
    case ArrayCut::kElements: return !is_container(element_type);
    case ArrayCut::kChunk: return false;
  }
  return false;
}

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

struct Walker::Frame {
  std::uint32_t depth = 0;         // path depth of the value
  std::uint32_t parent = kNoNode;  // the parent's node, if recorded
  std::uint32_t src_member = 0;    // where the member (key) or element starts
  std::uint32_t canon_member = 0;
  bool emit = false;               // canonical text is written (recording, not dropped)
  bool record = false;             // the value gets a node
  bool force_record = false;       // inside a re-walk: every descendant gets a node
  bool pinned = false;
  std::int32_t cut = -1;         // arrays: the rules.arrays entry this array follows
  std::int32_t parent_cut = -1;  // the cut of the array holding this element
  std::int32_t quantize = -1;    // the rules.quantize entry for numbers at or below here
  Segment segment;
};

Walker::Walker(const Rules& rules) : rules_(rules) {
  auto add = [this](const std::string& text) { patterns_.push_back(Pattern::parse(text).value()); };
  for (const auto& text : rules.drop) add(text);
  pins_begin_ = patterns_.size();
  for (const auto& text : rules.pin) add(text);
  cuts_begin_ = patterns_.size();
  for (const auto& rule : rules.arrays) add(rule.path);
  quantize_begin_ = patterns_.size();
  for (const auto& rule : rules.quantize) {
    add(rule.path);
    quantizers_.emplace_back(rule);
  }
  const std::size_t levels = static_cast<std::size_t>(rules.limits.max_nesting) + 2;
  states_.resize(levels * patterns_.size());
  keys_.resize(levels);
  pin_below_.resize(levels);
}

bool Walker::fail(ErrorCode code, std::size_t offset, std::string message) {
  if (status_.ok()) status_ = Error{code, offset, std::move(message)};
  return false;
}

bool Walker::fail_simdjson(simdjson::error_code error, std::size_t offset) {
  switch (error) {
    case simdjson::UTF8_ERROR:
      return fail(ErrorCode::kInvalidUtf8, first_invalid_utf8(base_, size_),
                  "invalid UTF-8 byte sequence; gamecore text must be UTF-8 (check how the "
                  "engine encodes strings)");
    case simdjson::UNCLOSED_STRING:
      return fail(ErrorCode::kMalformedJson, unclosed_string_start(base_, size_),
                  "a string starts here and is never closed (the frame may be truncated)");
    case simdjson::DEPTH_ERROR:
      return fail(ErrorCode::kTooDeep, offset, "nesting is deeper than the parser allows");
    case simdjson::EMPTY:
      return fail(ErrorCode::kMalformedJson, 0, "the frame is empty: expected a JSON object");
    default:
      return fail(ErrorCode::kMalformedJson, offset,
                  std::string("invalid JSON near here (") + simdjson::error_message(error) +
                      "); check the serializer's output around this byte");
  }
}

Status Walker::walk(od::parser& parser, const char* data, std::size_t size, std::size_t capacity, bool record,
                    bool prevalidated) {
  status_ = {};
  nodes_.clear();
  unescaped_.clear();
  out_ = 0;
  growth_ = 0;
  // simdjson::minify may store a SIMD block past what it writes.
  if (record && canon_.size() < size + 64) canon_.resize(size + 64);
  prevalidated_ = prevalidated;
  base_ = data;
  size_ = size;
  doc_end_ = size;
  capacity_ = capacity;

  od::document doc;
  if (auto e = parser.iterate(data, size, capacity).get(doc)) {
    fail_simdjson(e, 0);
    return status_;
  }
  doc_ = &doc;
  for (std::size_t k = 0; k < patterns_.size(); ++k) states_[k] = patterns_[k].start();

  od::json_type type;
  if (auto e = doc.type().get(type)) {
    fail_simdjson(e, 0);
    return status_;
  }
  if (type != od::json_type::object && type != od::json_type::array) {
    fail(ErrorCode::kMalformedJson, 0,
         "a frame must be a JSON object or array at the top level, not a single value");
    return status_;
  }
  od::value root;
  if (auto e = doc.get_value().get(root)) {
    fail_simdjson(e, 0);
    return status_;
  }
  Frame frame;
  frame.emit = frame.record = record;
  bool first_kept = true;
  if (!walk_value(root, frame, root.raw_json_token(), {}, first_kept)) return status_;
  if (const char* rest = nullptr; !doc.current_location().get(rest)) {
    fail(ErrorCode::kMalformedJson, offset_of(rest),
         "unexpected content after the end of the JSON document (two frames sent as one?)");
    return status_;
  }
  return {};
}

std::string_view Walker::keep(std::string_view unescaped) {
  return unescaped_.emplace_back(unescaped);
}

std::uint32_t Walker::here() {
  const char* p = nullptr;
  return doc_->current_location().get(p) ? static_cast<std::uint32_t>(doc_end_) : offset_of(p);
}

std::uint32_t Walker::container_end() {
  const char* p = base_ + here();
  while (p > base_ && is_space(p[-1])) --p;
  return offset_of(p);
}

bool Walker::step_patterns(Frame& frame) {
  const std::size_t n = patterns_.size();
  if (frame.depth == 0) return true;
  const std::uint64_t* parent = states_.data() + (frame.depth - 1) * n;  // see patterns_dead
  std::uint64_t* mine = states_.data() + frame.depth * n;
  bool dropped = false;
  for (std::size_t k = 0; k < n; ++k) {
    mine[k] = patterns_[k].step(parent[k], frame.segment);
    if (!patterns_[k].accepts(mine[k])) continue;
    if (k < pins_begin_) {
      dropped = true;
    } else if (k < cuts_begin_) {
      frame.pinned = true;
    } else if (k < quantize_begin_) {
      if (frame.cut < 0) frame.cut = static_cast<std::int32_t>(k - cuts_begin_);
    } else {
      // frame.quantize holds what an ancestor matched; the first listed rule
      // matching here or above applies.
      const auto rule = static_cast<std::int32_t>(k - quantize_begin_);
      if (frame.quantize < 0 || rule < frame.quantize) frame.quantize = rule;
    }
  }
  return !dropped;
}

Walker::Frame Walker::child_frame(const Frame& parent, std::uint32_t node) const {
  Frame child;
  child.depth = parent.depth + 1;
  child.parent = node;
  child.emit = parent.emit;
  child.force_record = parent.force_record;
  child.parent_cut = parent.cut;
  child.quantize = parent.quantize;
  // A cut array always splits: recording its elements now saves a re-walk.
  child.record = parent.record && (parent.force_record || parent.cut >= 0 ||
                                   parent.depth < static_cast<std::uint32_t>(rules_.max_depth));
  return child;
}

bool Walker::walk_value(od::value value, Frame& frame, std::string_view token,
                        std::string_view raw_key, bool& first_kept) {
  const std::uint32_t at = offset_of(token.data());
  od::json_type type;
  if (auto e = value.type().get(type)) return fail_simdjson(e, at);
  od::object object;
  od::array array;
  if (type == od::json_type::object) {
    if (auto e = value.get_object().get(object)) return fail_simdjson(e, at);
    const bool needs_key = frame.record || !patterns_.empty();
    if (frame.emit && frame.segment.is_element && needs_key && !element_key(object, frame.segment, at))
      return false;
  } else if (type == od::json_type::array) {
    if (auto e = value.get_array().get(array)) return fail_simdjson(e, at);
  }
  if (frame.emit && !patterns_.empty() && !step_patterns(frame)) frame.emit = frame.record = false;
  // Array rules leave objects alone, and a dropped array has nothing to expose.
  if (type != od::json_type::array || !frame.emit) frame.cut = -1;
  if (frame.parent_cut >= 0) {
    frame.pinned |= pinned_by_cut(rules_.arrays[static_cast<std::size_t>(frame.parent_cut)].cut, type);
  }
  if (frame.emit) {
    if (!first_kept) put(',');
    first_kept = false;
    frame.canon_member = static_cast<std::uint32_t>(out_);
    if (!raw_key.empty()) {
      put(raw_key);
      put(':');
    }
  }
  // A cut array, like a pin, is exposed: its ancestors split.
  if ((frame.pinned || frame.cut >= 0) && frame.depth > 0) pin_below_[frame.depth - 1] = 1;
  if (is_container(type)) {
    const NodeType node_type = type == od::json_type::object ? NodeType::kObject : NodeType::kArray;
    if (prevalidated_ && frame.quantize < 0 && !child_frame(frame, kNoNode).record &&
        patterns_dead(frame.depth)) {
      std::string_view raw;
      const auto e = node_type == NodeType::kObject ? object.raw_json().get(raw)
                                                    : array.raw_json().get(raw);
      if (e) return fail_simdjson(e, at);
      return copy_leaf(raw, node_type, frame, at);
    }
    return node_type == NodeType::kObject ? walk_container(object, node_type, frame, at)
                                          : walk_container(array, node_type, frame, at);
  }
  return walk_scalar(value, type, frame, token);
}

bool Walker::patterns_dead(std::uint32_t depth) const {
  // data() + offset, not &states_[i]: with no patterns the vector is empty.
  const std::uint64_t* states = states_.data() + depth * patterns_.size();
  for (std::size_t k = 0; k < patterns_.size(); ++k) {
    if (patterns_[k].alive(states[k])) return false;
  }
  return true;
}

bool Walker::copy_leaf(std::string_view raw, NodeType type, const Frame& frame, std::uint32_t at) {
  if (!frame.emit) return true;  // dropped: nothing to write
  raw = rtrim(raw);
  const std::uint32_t node = frame.record ? open_node(frame, type, at) : kNoNode;
  std::size_t written = 0;
  if (auto e = simdjson::minify(raw.data(), raw.size(), &canon_[out_], written)) {
    return fail_simdjson(e, at);
  }
  out_ += written;
  if (node == kNoNode) return true;
  nodes_[node].canon_end = static_cast<std::uint32_t>(out_);
  if (must_split(nodes_[node])) return rewalk(node, frame.parent, child_frame(frame, node));
  close_node(node, frame.parent, at + static_cast<std::uint32_t>(raw.size()));
  return true;
}

template <class Container>
bool Walker::walk_container(Container container, NodeType type, const Frame& frame,
                            std::uint32_t at) {
  if (frame.depth + 1 > static_cast<std::uint32_t>(rules_.limits.max_nesting)) {
    return fail(ErrorCode::kTooDeep, at,
                "objects/arrays nest deeper than " + std::to_string(rules_.limits.max_nesting) +
                    " levels; flatten the state or raise limits.max_nesting in the rules");
  }
  const bool is_object = type == NodeType::kObject;
  const std::uint32_t node = frame.record ? open_node(frame, type, at) : kNoNode;
  if (frame.emit) put(is_object ? '{' : '[');
  pin_below_[frame.depth] = 0;
  const Frame children = child_frame(frame, node);
  if (!walk_children(container, children)) return false;
  return close_container(node, frame, children, is_object ? '}' : ']');
}

bool Walker::walk_children(od::object object, const Frame& children) {
  auto& keys = keys_[children.depth - 1];
  keys.clear();
  bool first_kept = true;
  for (auto field_result : object) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) return fail_simdjson(e, here());
    const char* quote = reinterpret_cast<const char*>(field.key().raw()) - 1;
    od::value& child = field.value();
    // The key as written ends at the closing quote just before the ':' that
    // precedes the value token; copying it keeps its escapes byte for byte.
    const std::string_view token = child.raw_json_token();
    const char* key_end = token.data();
    while (key_end > quote + 1 && is_space(key_end[-1])) --key_end;
    if (key_end[-1] != ':') return fail_simdjson(simdjson::TAPE_ERROR, offset_of(key_end));
    --key_end;
    while (key_end > quote + 1 && is_space(key_end[-1])) --key_end;
    const std::string_view raw_key(quote, static_cast<std::size_t>(key_end - quote));
    // Stage 1 already checked UTF-8 and control characters; only a key with
    // escapes needs unescaping (which also validates them).
    std::string_view key = raw_key.substr(1, raw_key.size() - 2);
    if (key.find('\\') != std::string_view::npos) {
      if (auto e = field.unescaped_key().get(key)) return fail_simdjson(e, offset_of(quote));
      key = keep(key);
    }
    if (!prevalidated_) keys.emplace_back(key, offset_of(quote));

    Frame frame = children;
    frame.src_member = offset_of(quote);
    frame.segment.key = key;
    if (!walk_value(child, frame, token, raw_key, first_kept)) return false;
  }
  return prevalidated_ || check_duplicates(children.depth - 1);
}

bool Walker::walk_children(od::array array, const Frame& children) {
  bool first_kept = true;
  std::size_t index = 0;
  for (auto element_result : array) {
    od::value element;
    if (auto e = std::move(element_result).get(element)) return fail_simdjson(e, here());
    const std::string_view token = element.raw_json_token();
    Frame frame = children;
    frame.src_member = offset_of(token.data());
    frame.segment.is_element = true;
    frame.segment.index = index++;
    if (!walk_value(element, frame, token, {}, first_kept)) return false;
  }
  return true;
}

bool Walker::close_container(std::uint32_t node, const Frame& frame, const Frame& children,
                             char close) {
  if (frame.emit) put(close);
  const bool pins_inside = pin_below_[frame.depth] != 0;
  if (pins_inside && frame.depth > 0) pin_below_[frame.depth - 1] = 1;
  if (node == kNoNode) return true;
  Node& n = nodes_[node];
  n.contains_pin = pins_inside;
  n.canon_end = static_cast<std::uint32_t>(out_);
  if (!children.record && must_split(n)) return rewalk(node, frame.parent, children);
  close_node(node, frame.parent, container_end());
  return true;
}

bool Walker::rewalk(std::uint32_t node, std::uint32_t parent, const Frame& children) {
  const std::uint32_t src_end = container_end();
  const Node n = nodes_[node];
  od::document* outer = doc_;
  const std::size_t outer_end = doc_end_;
  od::document doc;
  if (auto e = rewalk_parser_.iterate(base_ + n.src_begin, src_end - n.src_begin,
                                      capacity_ - n.src_begin).get(doc)) {
    return fail_simdjson(e, n.src_begin);
  }
  doc_ = &doc;
  doc_end_ = src_end;
  out_ = n.canon_begin;
  Frame recording = children;
  recording.record = recording.force_record = true;
  bool ok;
  if (n.type == NodeType::kObject) {
    od::object object;
    ok = !doc.get_object().get(object) && (put('{'), walk_children(object, recording));
    put('}');
  } else {
    od::array array;
    ok = !doc.get_array().get(array) && (put('['), walk_children(array, recording));
    put(']');
  }
  doc_ = outer;
  doc_end_ = outer_end;
  if (!ok) return status_.ok() ? fail_simdjson(simdjson::TAPE_ERROR, n.src_begin) : false;
  close_node(node, parent, src_end);
  return true;
}

bool Walker::walk_scalar(od::value value, od::json_type type, const Frame& frame,
                         std::string_view raw_token) {
  const std::uint32_t at = offset_of(raw_token.data());
  const std::string_view token = rtrim(raw_token);
  simdjson::error_code e = simdjson::SUCCESS;
  double number = 0;
  switch (type) {
    case od::json_type::string:
      // As for keys: only strings with escapes need unescaping to be checked.
      if (token.find('\\') != std::string_view::npos) {
        std::string_view unused;
        e = value.get_string().get(unused);
      }
      break;
    case od::json_type::number: {
      // Like most JSON parsers, simdjson rejects numbers beyond double range (1e400).
      e = value.get_double().get(number);
      break;
    }
    case od::json_type::boolean: {
      bool unused;
      e = value.get_bool().get(unused);
      break;
    }
    case od::json_type::null: {
      bool is_null = false;
      e = value.is_null().get(is_null);
      if (!e && !is_null) e = simdjson::N_ATOM_ERROR;
      break;
    }
    default:
      e = simdjson::TAPE_ERROR;
  }
  if (e == simdjson::UTF8_ERROR) return fail_simdjson(e, at);
  if (e) {
    return fail(ErrorCode::kMalformedJson, at,
                "invalid JSON value " + std::string(token.substr(0, 40)) + " (" +
                    simdjson::error_message(e) + ")");
  }
  std::string_view text = token;
  if (frame.emit && type == od::json_type::number && frame.quantize >= 0) {
    text = quantizers_[static_cast<std::size_t>(frame.quantize)].apply(number, token, quantized_);
    put_number(text, token.size());
  } else if (frame.emit) {
    put(token);
  }
  if (frame.record) {
    const std::uint32_t node = open_node(frame, NodeType::kScalar, at);
    nodes_[node].canon_begin = static_cast<std::uint32_t>(out_ - text.size());
    close_node(node, frame.parent, at + static_cast<std::uint32_t>(token.size()));
  }
  return true;
}

void Walker::put_number(std::string_view text, std::size_t token_size) {
  if (text.size() > token_size) {
    growth_ += text.size() - token_size;
    const std::size_t needed = size_ + 64 + growth_;
    if (canon_.size() < needed) canon_.resize(std::max(needed, canon_.size() + canon_.size() / 2));
  }
  put(text);
}

bool Walker::element_key(od::object& object, Segment& segment, std::uint32_t at) {
  for (const std::string& field : rules_.key_fields) {
    od::value value;
    od::json_type type;
    const simdjson::error_code found = object.find_field_unordered(field).get(value);
    // After any other error simdjson's iterator is unusable (even reset()).
    if (found && found != simdjson::NO_SUCH_FIELD) return fail_simdjson(found, at);
    if (!found && !value.type().get(type)) {
      const std::string_view token = rtrim(value.raw_json_token());
      if (type == od::json_type::string && token.size() >= 2 && token.back() == '"') {
        std::string_view s = token.substr(1, token.size() - 2);
        if (s.find('\\') != std::string_view::npos) {
          if (value.get_string().get(s)) s = {};
          s = keep(s);
        }
        segment.key_value = s;
      } else if (type == od::json_type::number) {
        segment.key_value = token;
      }
      if (!segment.key_value.empty() || type == od::json_type::string) segment.key_field = field;
    }
    if (auto e = object.reset().error()) return fail_simdjson(e, at);
    if (!segment.key_field.empty()) return true;
  }
  return true;
}

bool Walker::check_duplicates(std::size_t depth) {
  const auto& keys = keys_[depth];
  const auto dup = find_duplicate_key(keys.size(), [&](std::size_t i) { return keys[i].first; });
  if (!dup) return true;
  return fail(ErrorCode::kDuplicateKey, keys[*dup].second,
              "key \"" + std::string(keys[*dup].first) +
                  "\" appears twice in one object; JSON leaves duplicates undefined, so fix the "
                  "serializer to write each key once");
}

std::uint32_t Walker::open_node(const Frame& frame, NodeType type, std::uint32_t src_begin) {
  Node node;
  node.depth = frame.depth;
  node.type = type;
  node.pinned = frame.pinned;
  node.cut = frame.cut;
  node.segment = frame.segment;
  node.canon_member = frame.depth == 0 ? 0 : frame.canon_member;
  node.canon_begin = static_cast<std::uint32_t>(out_);
  node.src_member = frame.depth == 0 ? src_begin : frame.src_member;
  node.src_begin = src_begin;
  nodes_.push_back(node);
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

bool Walker::must_split(const Node& node) const {
  if (node.type == NodeType::kScalar) return false;
  const std::size_t size = node.canon_size();
  const bool shallow = node.depth < static_cast<std::uint32_t>(rules_.max_depth);
  // A cut array splits even when small; an empty one ("[]") has nothing to cut.
  const bool cut = node.cut >= 0 && size > 2;
  return node.contains_pin || cut ||
         (!node.pinned && (size > rules_.max_block_bytes ||
                           (shallow && size >= rules_.min_split_bytes && node.has_container_child)));
}

void Walker::close_node(std::uint32_t index, std::uint32_t parent, std::uint32_t src_end) {
  Node& node = nodes_[index];
  node.canon_end = static_cast<std::uint32_t>(out_);
  node.src_end = src_end;
  node.split = must_split(node);
  if (!node.split) nodes_.resize(index + 1);  // shrinking: `node` stays valid
  node.end = static_cast<std::uint32_t>(nodes_.size());
  if (parent != kNoNode) {
    Node& p = nodes_[parent];
    p.has_container_child |= node.type != NodeType::kScalar;
  }
}

}  // namespace kvframe::json_blocker::detail
