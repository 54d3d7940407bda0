// One pass of simdjson ondemand over a frame (internal to json_blocker).
//
// The walk validates every value (syntax, UTF-8, depth, duplicate keys), writes
// the canonical (minified, drops removed) text of the whole document, and
// records a node per kept value that a block boundary could fall on. Children
// are recorded only where a split is likely (containers shallower than
// max_depth); a deeper container that turns out over budget or holding a pin
// is walked once more from its bytes, recording. A container that will not be
// split is closed with its descendants' nodes discarded, so the node list holds
// only the frontier the blocks are cut from.
//
// Why ondemand and not DOM: only ondemand knows where each value sits in the
// input (block source ranges), and walking it once is as fast as building a DOM
// (bench/bench_json_blocker measures both).
//
// Numbers under a quantize path are written coarse into the canonical text
// (quantize.h); arrays under an arrays rule are split whatever their size, and
// the elements of a "rows" or "elements" cut are marked pinned.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/json_blocker/error.h"
#include "kvframe/json_blocker/rules.h"
#include "path.h"
#include "quantize.h"

namespace kvframe::json_blocker::detail {

enum class NodeType : std::uint8_t { kObject, kArray, kScalar };

struct Node {
  std::uint32_t end = 0;      // one past this node's last kept descendant node
  std::uint32_t depth = 0;    // path depth; the root is 0
  NodeType type = NodeType::kScalar;
  bool pinned = false;        // matched a pin pattern
  bool contains_pin = false;  // some kept descendant is pinned
  bool has_container_child = false;
  Segment segment;            // how the parent reaches this value
  std::uint32_t canon_member = 0;  // canonical offset where the member/element starts
  std::uint32_t canon_begin = 0, canon_end = 0;  // canonical value text
  std::uint32_t src_member = 0;    // input offset of the member's key, or of the element
  std::uint32_t src_begin = 0, src_end = 0;      // input range of the value

  bool split = false;          // cut into child blocks (its children follow it)
  std::int32_t cut = -1;       // arrays: index of the rules.arrays entry it follows, or -1

  std::uint32_t canon_size() const { return canon_end - canon_begin; }
};

class Walker {
 public:
  explicit Walker(const Rules& rules);  // rules must pass check_rules()

  // Walks data[0, size); `capacity` >= size + SIMDJSON_PADDING bytes are
  // readable. With record=false only validates. Returns the first error, if any.
  // `prevalidated`: the caller has already checked the whole document (see
  // dom_check.h), so leaf containers no pattern can reach inside are copied
  // minified instead of walked value by value, and duplicate keys are not
  // looked for again.
  Status walk(simdjson::ondemand::parser& parser, const char* data, std::size_t size, std::size_t capacity,
              bool record, bool prevalidated);

  std::string_view canon() const { return std::string_view(canon_.data(), out_); }
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  struct Frame;  // per-value walk context
  // `token` is the value's raw token (simdjson's raw_json_token); `raw_key` the
  // member's key as written (quotes included), empty for elements and the
  // root; `first_kept` tracks commas in the canonical text.
  bool walk_value(simdjson::ondemand::value value, Frame& frame, std::string_view token,
                  std::string_view raw_key, bool& first_kept);
  template <class Container>  // ondemand::object or ondemand::array
  bool walk_container(Container container, NodeType type, const Frame& frame, std::uint32_t at);
  bool walk_children(simdjson::ondemand::object object, const Frame& children);
  bool walk_children(simdjson::ondemand::array array, const Frame& children);
  // Closes container `node`; re-walks it recording when it must split but its
  // children were not recorded.
  bool close_container(std::uint32_t node, const Frame& frame, const Frame& children, char close);
  bool rewalk(std::uint32_t node, std::uint32_t parent, const Frame& children);
  // Prevalidated fast path: copies a leaf container minified, without visiting
  // its values, then closes it like walk_container would.
  bool copy_leaf(std::string_view raw, NodeType type, const Frame& frame, std::uint32_t at);
  // No pattern of the rules can match anything below this depth's value.
  bool patterns_dead(std::uint32_t depth) const;
  bool walk_scalar(simdjson::ondemand::value value, simdjson::ondemand::json_type type,
                   const Frame& frame, std::string_view token);
  // Advances every pattern by the frame's segment and records what matched
  // (pin, array cut, quantize rule) in the frame; false when dropped.
  bool step_patterns(Frame& frame);
  // Finds the key field that identifies an array element, then rewinds it.
  bool element_key(simdjson::ondemand::object& object, Segment& segment, std::uint32_t at);
  bool check_duplicates(std::size_t depth);
  // Copies an unescaped string out of simdjson's scratch buffer, which a
  // rewind or a re-walk may reuse, into storage that lives as long as the walk.
  std::string_view keep(std::string_view unescaped);
  // Opens/closes the node of a kept value; close decides whether it splits.
  std::uint32_t open_node(const Frame& frame, NodeType type, std::uint32_t src_begin);
  void close_node(std::uint32_t index, std::uint32_t parent, std::uint32_t src_end);
  bool must_split(const Node& node) const;
  Frame child_frame(const Frame& parent, std::uint32_t node) const;
  void put(char c) { canon_[out_++] = c; }
  void put(std::string_view s) {
    std::memcpy(&canon_[out_], s.data(), s.size());
    out_ += s.size();
  }
  // Writes a quantized number in place of `token_size` input bytes; it may be
  // longer than what it replaces, so the buffer grows by the difference.
  void put_number(std::string_view text, std::size_t token_size);
  std::uint32_t here();           // input offset of the parser's next token
  std::uint32_t container_end();  // input offset just past the container just left

  bool fail(ErrorCode code, std::size_t offset, std::string message);
  bool fail_simdjson(simdjson::error_code error, std::size_t offset);
  std::uint32_t offset_of(const char* p) const { return static_cast<std::uint32_t>(p - base_); }

  const Rules& rules_;
  // Every pattern of the rules, by role: drops, then pins, then array cuts
  // (rules.arrays order), then quantize rules (rules.quantize order).
  std::vector<Pattern> patterns_;
  std::size_t pins_begin_ = 0, cuts_begin_ = 0, quantize_begin_ = 0;
  std::vector<NumberQuantizer> quantizers_;  // one per rules.quantize entry
  std::string quantized_;                    // scratch for a rounded number
  std::vector<std::uint64_t> states_;  // per depth: one NFA state per pattern
  std::vector<std::vector<std::pair<std::string_view, std::uint32_t>>> keys_;  // per depth
  std::vector<std::uint8_t> pin_below_;  // per depth: a pinned value was seen under it
  // Canonical text: never longer than the input plus what quantized numbers
  // added (everything else only removes bytes), so it is written through a
  // cursor into a buffer sized to the input and grown by put_number.
  std::string canon_;
  std::size_t out_ = 0;
  std::size_t growth_ = 0;  // bytes quantized numbers added this walk
  std::vector<Node> nodes_;
  std::deque<std::string> unescaped_;  // deque: elements never move
  simdjson::ondemand::document* doc_ = nullptr;
  simdjson::ondemand::parser rewalk_parser_;
  std::size_t capacity_ = 0;
  std::size_t doc_end_ = 0;  // offset where the document being walked ends
  const char* base_ = nullptr;
  std::size_t size_ = 0;
  bool prevalidated_ = false;
  Status status_;  // the first error fail() recorded in this walk
};

}  // namespace kvframe::json_blocker::detail
