#include "kvframe/json_blocker/partition.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "dom_check.h"
#include "input_errors.h"
#include "path.h"
#include "walker.h"

namespace kvframe::json_blocker {

using detail::Node;
using detail::NodeType;

namespace {

struct PendingBlock {
  std::size_t text_begin, text_end, id_end, pointer_end;  // consecutive in the arena
  std::uint32_t prefix_size;
  ByteRange source;
  BlockKind kind;
};

// Cuts the walker's node frontier into blocks, in document order.
class Assembler {
 public:
  Assembler(const Rules& rules, std::string_view canon, const std::vector<Node>& nodes,
            std::string& arena, std::vector<PendingBlock>& out)
      : rules_(rules), canon_(canon), nodes_(nodes), arena_(arena), out_(out) {}

  void run() {
    if (nodes_.empty()) return;
    if (nodes_[0].split) {
      cut(0);
    } else {
      value_block(nodes_[0]);
    }
  }

 private:
  struct Run {
    std::uint32_t first = 0, last = 0;
    std::size_t count = 0, bytes = 0;
  };

  std::string_view display() const { return id_.empty() ? std::string_view("$") : id_; }
  std::string_view slice(std::uint32_t begin, std::uint32_t end) const {
    return canon_.substr(begin, end - begin);
  }

  // Emits the blocks of split container `index`; id_/pointer_ hold its path.
  void cut(std::uint32_t index) {
    const Node& parent = nodes_[index];
    const bool is_array = parent.type == NodeType::kArray;
    if (is_array) find_repeated_keys(index);
    const std::size_t declared_chunk = declared_chunk_of(parent);
    Run run;
    for (std::uint32_t c = index + 1; c < parent.end; c = nodes_[c].end) {
      const Node& child = nodes_[c];
      const bool mergeable = child.type == NodeType::kScalar && !child.pinned &&
                             child.canon_size() <= rules_.merge_scalar_bytes;
      if (!mergeable) {
        flush(run, is_array);
        descend(child, c);
        continue;
      }
      const std::size_t bytes = child.canon_end - child.canon_member + 1;
      if (run.count && run_full(run, child, bytes, is_array, declared_chunk)) flush(run, is_array);
      if (!run.count) run.first = c;
      run.last = c;
      ++run.count;
      run.bytes += bytes;
    }
    flush(run, is_array);
  }

  // The chunk size an arrays rule declares for this array, or 0.
  std::size_t declared_chunk_of(const Node& array) const {
    if (array.cut < 0) return 0;
    const ArrayRule& rule = rules_.arrays[static_cast<std::size_t>(array.cut)];
    return rule.cut == ArrayCut::kChunk ? rule.chunk : 0;
  }

  // Whether `child` must start a new run. A declared chunk cuts at multiples
  // of its size whatever the bytes, like a pin is never split for size, so a
  // tile map's rows keep their ids as values grow; otherwise a run ends at the
  // budget or at scalar_array_chunk elements.
  bool run_full(const Run& run, const Node& child, std::size_t bytes, bool is_array,
                std::size_t declared_chunk) const {
    if (declared_chunk) {
      return nodes_[run.first].segment.index / declared_chunk != child.segment.index / declared_chunk;
    }
    return run.bytes + bytes > rules_.max_block_bytes ||
           (is_array && run.count >= rules_.scalar_array_chunk);
  }

  // Two elements with one key value (a game bug, but not ours to reject) still
  // need distinct ids: the second is [id=x#2]. Sorting the key values' hashes
  // finds repeats cheaply; repeats_ lists (node, occurrence) pairs.
  void find_repeated_keys(std::uint32_t array) {
    repeats_.clear();
    keyed_.clear();
    for (std::uint32_t c = array + 1; c < nodes_[array].end; c = nodes_[c].end) {
      const std::string_view v = nodes_[c].segment.key_value;
      if (!nodes_[c].segment.key_field.empty()) keyed_.emplace_back(XXH3_64bits(v.data(), v.size()), c);
    }
    std::sort(keyed_.begin(), keyed_.end());  // equal hashes end up adjacent, in document order
    for (std::size_t first = 0, last; first < keyed_.size(); first = last) {
      for (last = first + 1; last < keyed_.size() && keyed_[last].first == keyed_[first].first;) ++last;
      for (std::size_t k = first + 1; k < last; ++k) {
        int occurrence = 1;
        for (std::size_t m = first; m < k; ++m) {
          occurrence += key_value(keyed_[m].second) == key_value(keyed_[k].second);
        }
        if (occurrence > 1) repeats_.emplace_back(keyed_[k].second, occurrence);
      }
    }
    std::sort(repeats_.begin(), repeats_.end());
  }

  std::string_view key_value(std::uint32_t node) const { return nodes_[node].segment.key_value; }

  int occurrence(std::uint32_t node) const {
    auto it = std::lower_bound(repeats_.begin(), repeats_.end(), std::make_pair(node, 0));
    return it != repeats_.end() && it->first == node ? it->second : 1;
  }

  void descend(const Node& child, std::uint32_t index) {
    const std::size_t id_size = id_.size(), pointer_size = pointer_.size();
    append_segment(child.segment, occurrence(index));
    if (child.split) {
      // repeats_ belongs to the array being cut; keep it across recursion.
      auto saved = std::move(repeats_);
      cut(index);
      repeats_ = std::move(saved);
    } else {
      value_block(child);
    }
    id_.resize(id_size);
    pointer_.resize(pointer_size);
  }

  void append_segment(const detail::Segment& segment, int occurrence) {
    if (!segment.is_element) {
      detail::append_id_key(id_, segment.key, id_.empty());
      detail::append_pointer_key(pointer_, segment.key);
      return;
    }
    detail::append_id_element(id_, segment);
    if (occurrence > 1) id_.insert(id_.size() - 1, "#" + std::to_string(occurrence));
    detail::append_pointer_index(pointer_, segment.index);
  }

  void value_block(const Node& node) {
    emit(display(), display(), "", slice(node.canon_begin, node.canon_end), "",
         ByteRange{node.src_member, node.src_end}, BlockKind::kValue);
  }

  void flush(Run& run, bool is_array) {
    if (!run.count) return;
    const Node& first = nodes_[run.first];
    const Node& last = nodes_[run.last];
    if (run.count == 1) {
      descend(first, run.first);
    } else {
      const std::string parent(display());
      const std::size_t id_size = id_.size();
      if (is_array) {
        id_ += "[" + std::to_string(first.segment.index) + ".." +
               std::to_string(last.segment.index) + "]";
        emit(id_, id_, "[", slice(first.canon_member, last.canon_end), "]",
             ByteRange{first.src_member, last.src_end}, BlockKind::kElementRun);
      } else {
        if (!id_.empty()) id_.push_back('.');
        id_.push_back('{');
        detail::append_id_key(id_, first.segment.key, true);
        id_ += "..";
        detail::append_id_key(id_, last.segment.key, true);
        id_.push_back('}');
        emit(id_, parent, "{", slice(first.canon_member, last.canon_end), "}",
             ByteRange{first.src_member, last.src_end}, BlockKind::kMemberRun);
      }
      id_.resize(id_size);
    }
    run = Run{};
  }

  void emit(std::string_view id, std::string_view prefix, std::string_view open,
            std::string_view json, std::string_view close, ByteRange source, BlockKind kind) {
    PendingBlock block;
    block.text_begin = arena_.size();
    arena_ += prefix;
    arena_ += ": ";
    block.prefix_size = static_cast<std::uint32_t>(prefix.size() + 2);
    arena_ += open;
    arena_ += json;
    arena_ += close;
    block.text_end = arena_.size();
    arena_ += id;
    block.id_end = arena_.size();
    arena_ += pointer_;
    block.pointer_end = arena_.size();
    block.source = source;
    block.kind = kind;
    out_.push_back(block);
  }

  const Rules& rules_;
  std::string_view canon_;
  const std::vector<Node>& nodes_;
  std::string& arena_;
  std::vector<PendingBlock>& out_;
  std::string id_, pointer_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed_;  // (hash, node) scratch
  std::vector<std::pair<std::uint32_t, int>> repeats_;
};

}  // namespace

const char* block_kind_name(BlockKind kind) {
  switch (kind) {
    case BlockKind::kValue: return "value";
    case BlockKind::kMemberRun: return "member_run";
    case BlockKind::kElementRun: return "element_run";
  }
  return "unknown";
}

long Partition::block_at(std::size_t offset) const {
  auto it = std::upper_bound(blocks_.begin(), blocks_.end(), offset,
                             [](std::size_t o, const Block& b) { return o < b.source.begin; });
  if (it == blocks_.begin()) return -1;
  --it;
  return offset < it->source.end ? static_cast<long>(it - blocks_.begin()) : -1;
}

struct Partitioner::Impl {
  // Invalid rules are kept only as the error every call returns; the walker
  // gets defaults so that it is never built from them.
  explicit Impl(Rules r)
      : rules_status(check_rules(r)), rules(rules_status.ok() ? std::move(r) : Rules{}), walker(rules) {}

  // Copies `json` into the reusable padded buffer simdjson needs.
  Status load(std::string_view json) {
    if (json.size() > rules.limits.max_document_bytes) {
      return Error{ErrorCode::kTooLarge, rules.limits.max_document_bytes,
                   "the frame is " + std::to_string(json.size()) + " bytes, over the limit of " +
                       std::to_string(rules.limits.max_document_bytes) +
                       "; send patches, drop fields in the rules, or raise "
                       "limits.max_document_bytes"};
    }
    if (buffer.data() == nullptr || buffer.size() < json.size()) {
      buffer = simdjson::padded_string(std::max({json.size(), buffer.size() * 2, std::size_t{4096}}));
    }
    if (!json.empty()) std::memcpy(buffer.data(), json.data(), json.size());
    std::memset(buffer.data() + json.size(), 0, simdjson::SIMDJSON_PADDING);
    return {};
  }

  // Validates with DOM first; the strict walk runs for frames DOM refuses, to
  // find the error and its offset.
  Status walk(std::string_view json, bool record) {
    if (!rules_status.ok()) return rules_status;
    if (Status loaded = load(json); !loaded.ok()) return loaded;
    const simdjson::error_code dom =
        dom_check.parse(buffer.data(), json.size(), rules.limits.max_nesting);
    const bool valid = !dom && !dom_check.has_duplicate_keys();
    if (valid && !record) return {};
    if (!valid) {
      if (auto literal = detail::first_non_finite_number(json.data(), json.size())) {
        return Error{ErrorCode::kMalformedJson, literal->offset,
                     (literal->pointer.empty() ? std::string("/") : literal->pointer) + " is " + literal->literal +
                         ": JSON has no NaN or infinity (the serializer wrote JavaScript's literal); send a "
                         "finite number, or null"};
      }
    }
    Status walked = walker.walk(parser, buffer.data(), json.size(),
                                buffer.size() + simdjson::SIMDJSON_PADDING, record, valid);
    if (!valid && walked.ok()) {
      // ondemand accepted what DOM refused; DOM is right, but cannot say where.
      return Error{ErrorCode::kMalformedJson, 0,
                   std::string("invalid JSON (") + simdjson::error_message(dom) +
                       "); the position is unknown: validate the frame with a JSON linter"};
    }
    return walked;
  }

  Status rules_status;  // check_rules(rules): when not ok(), what every call returns
  Rules rules;
  simdjson::ondemand::parser parser;
  detail::DomCheck dom_check;
  detail::Walker walker;
  simdjson::padded_string buffer;
  std::vector<PendingBlock> pending;
};

Partitioner::Partitioner(Rules rules) : impl_(std::make_unique<Impl>(std::move(rules))) {}
Partitioner::~Partitioner() = default;
Partitioner::Partitioner(Partitioner&&) noexcept = default;
Partitioner& Partitioner::operator=(Partitioner&&) noexcept = default;

const Rules& Partitioner::rules() const { return impl_->rules; }

Result<std::size_t> Partitioner::validate(std::string_view json) {
  if (Status walked = impl_->walk(json, false); !walked.ok()) return walked.error();
  return json.size();
}

Result<Partition> Partitioner::partition(std::string_view json) {
  if (Status walked = impl_->walk(json, true); !walked.ok()) return walked.error();
  auto arena = std::make_unique<std::string>();
  arena->reserve(impl_->walker.canon().size() + impl_->walker.canon().size() / 4 + 64);
  impl_->pending.clear();
  Assembler(impl_->rules, impl_->walker.canon(), impl_->walker.nodes(), *arena, impl_->pending).run();

  Partition result;
  result.blocks_.reserve(impl_->pending.size());
  const std::string_view all(*arena);
  for (const PendingBlock& p : impl_->pending) {
    Block block;
    block.text = all.substr(p.text_begin, p.text_end - p.text_begin);
    block.id = all.substr(p.text_end, p.id_end - p.text_end);
    block.pointer = all.substr(p.id_end, p.pointer_end - p.id_end);
    block.hash = XXH3_64bits(block.text.data(), block.text.size());
    block.id_hash = XXH3_64bits(block.id.data(), block.id.size());
    block.source = p.source;
    block.kind = p.kind;
    block.prefix_size = p.prefix_size;
    result.text_bytes_ += block.text.size();
    result.blocks_.push_back(block);
  }
  result.arena_ = std::move(arena);
  result.input_bytes_ = json.size();
  return result;
}

Result<Partition> partition(std::string_view json, const Rules& rules) {
  return Partitioner(rules).partition(json);
}

}  // namespace kvframe::json_blocker
