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
  Segment segment;
};

Walker::Walker(const Rules& rules) : rules_(rules) {
  for (const auto& text : rules.drop) drops_.push_back(Pattern::parse(text).value());
  for (const auto& text : rules.pin) pins_.push_back(Pattern::parse(text).value());
  patterns_ = drops_.size() + pins_.size();
  const std::size_t levels = static_cast<std::size_t>(rules.limits.max_nesting) + 2;
  states_.resize(levels * patterns_);
  keys_.resize(levels);
  pin_below_.resize(levels);
}

bool Walker::fail(ErrorCode code, std::size_t offset, std::string message) {
  if (!error_) error_ = Error{code, offset, std::move(message)};
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

std::optional<Error> Walker::walk(od::parser& parser, const char* data, std::size_t size,
                                  std::size_t capacity, bool record, bool prevalidated) {
  error_.reset();
  nodes_.clear();
  unescaped_.clear();
  out_ = 0;
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
    return error_;
  }
  doc_ = &doc;
  for (std::size_t k = 0; k < drops_.size(); ++k) states_[k] = drops_[k].start();
  for (std::size_t k = 0; k < pins_.size(); ++k) states_[drops_.size() + k] = pins_[k].start();

  od::json_type type;
  if (auto e = doc.type().get(type)) {
    fail_simdjson(e, 0);
    return error_;
  }
  if (type != od::json_type::object && type != od::json_type::array) {
    fail(ErrorCode::kMalformedJson, 0,
         "a frame must be a JSON object or array at the top level, not a single value");
    return error_;
  }
  od::value root;
  if (auto e = doc.get_value().get(root)) {
    fail_simdjson(e, 0);
    return error_;
  }
  Frame frame;
  frame.emit = frame.record = record;
  bool first_kept = true;
  if (!walk_value(root, frame, root.raw_json_token(), {}, first_kept)) return error_;
  if (const char* rest = nullptr; !doc.current_location().get(rest)) {
    fail(ErrorCode::kMalformedJson, offset_of(rest),
         "unexpected content after the end of the JSON document (two frames sent as one?)");
    return error_;
  }
  return std::nullopt;
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
  const std::size_t n = patterns_;
  if (frame.depth == 0) return true;
  const std::uint64_t* parent = states_.data() + (frame.depth - 1) * n;  // see patterns_dead
  std::uint64_t* mine = states_.data() + frame.depth * n;
  bool dropped = false;
  for (std::size_t k = 0; k < drops_.size(); ++k) {
    mine[k] = drops_[k].step(parent[k], frame.segment);
    dropped |= drops_[k].accepts(mine[k]);
  }
  for (std::size_t k = 0, d = drops_.size(); k < pins_.size(); ++k) {
    mine[d + k] = pins_[k].step(parent[d + k], frame.segment);
    frame.pinned |= pins_[k].accepts(mine[d + k]);
  }
  return !dropped;
}

Walker::Frame Walker::child_frame(const Frame& parent, std::uint32_t node) const {
  Frame child;
  child.depth = parent.depth + 1;
  child.parent = node;
  child.emit = parent.emit;
  child.force_record = parent.force_record;
  child.record = parent.record &&
                 (parent.force_record || parent.depth < static_cast<std::uint32_t>(rules_.max_depth));
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
    const bool needs_key = frame.record || patterns_ != 0;
    if (frame.emit && frame.segment.is_element && needs_key && !element_key(object, frame.segment, at))
      return false;
  } else if (type == od::json_type::array) {
    if (auto e = value.get_array().get(array)) return fail_simdjson(e, at);
  }
  if (frame.emit && patterns_ != 0 && !step_patterns(frame)) frame.emit = frame.record = false;
  if (frame.emit) {
    if (!first_kept) put(',');
    first_kept = false;
    frame.canon_member = static_cast<std::uint32_t>(out_);
    if (!raw_key.empty()) {
      put(raw_key);
      put(':');
    }
  }
  if (frame.pinned && frame.depth > 0) pin_below_[frame.depth - 1] = 1;
  if (type == od::json_type::object || type == od::json_type::array) {
    const NodeType node_type = type == od::json_type::object ? NodeType::kObject : NodeType::kArray;
    if (prevalidated_ && !child_frame(frame, kNoNode).record && patterns_dead(frame.depth)) {
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
  const std::uint64_t* states = states_.data() + depth * patterns_;
  for (std::size_t k = 0; k < drops_.size(); ++k) {
    if (drops_[k].alive(states[k])) return false;
  }
  for (std::size_t k = 0; k < pins_.size(); ++k) {
    if (pins_[k].alive(states[drops_.size() + k])) return false;
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
  if (!ok) return error_ ? false : fail_simdjson(simdjson::TAPE_ERROR, n.src_begin);
  close_node(node, parent, src_end);
  return true;
}

bool Walker::walk_scalar(od::value value, od::json_type type, const Frame& frame,
                         std::string_view raw_token) {
  const std::uint32_t at = offset_of(raw_token.data());
  const std::string_view token = rtrim(raw_token);
  simdjson::error_code e = simdjson::SUCCESS;
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
      double unused;
      e = value.get_double().get(unused);
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
  if (frame.emit) put(token);
  if (frame.record) {
    const std::uint32_t node = open_node(frame, NodeType::kScalar, at);
    nodes_[node].canon_begin = static_cast<std::uint32_t>(out_ - token.size());
    close_node(node, frame.parent, at + static_cast<std::uint32_t>(token.size()));
  }
  return true;
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
  return node.contains_pin ||
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
