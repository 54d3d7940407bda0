#include "schema_program.h"

#include <map>
#include <memory>
#include <string_view>

#include "json_leaves.h"
#include "pattern_leaf.h"

namespace kvframe::runtime::schema {
namespace {

// Thrown inside the compiler only, when the program outgrows its limit;
// compile_program turns it into kTooComplex.
struct TooComplex {
  std::string path;
};

class Compiler {
 public:
  Compiler(Program& program, size_t max_size, const Node& root, const ByteSet& single)
      : program_(program), max_size_(max_size), path_(&root.path), single_(single) {}

  int32_t value(const Node& node, int32_t next) {
    path_ = &node.path;
    switch (node.kind) {
      case Node::Kind::kNull:
        return literal("null", next);
      case Node::Kind::kBoolean:
        return split(literal("true", next), literal("false", next));
      case Node::Kind::kLiterals: {
        std::vector<int32_t> entries;
        for (const std::string& text : node.texts) entries.push_back(literal(text, next));
        return alternatives(entries);
      }
      case Node::Kind::kAnyOf: {
        std::vector<int32_t> entries;
        for (const Node& child : node.children) entries.push_back(value(child, next));
        return alternatives(entries);
      }
      case Node::Kind::kString: {
        program_.strings.push_back(string_spec(node));
        return literal("\"", leaf(Inst::Op::kString, static_cast<int32_t>(program_.strings.size() - 1), next));
      }
      case Node::Kind::kNumber:
        program_.numbers.push_back(node.number);
        return leaf(Inst::Op::kNumber, static_cast<int32_t>(program_.numbers.size() - 1), next);
      case Node::Kind::kObject:
        return object(node, next);
      case Node::Kind::kArray:
        return array(node, next);
    }
    return next;
  }

  int32_t match() {
    Inst inst;
    inst.op = Inst::Op::kMatch;
    return emit(inst);
  }

  int32_t optional_space(int32_t next) { return split(literal(" ", next), next); }

 private:
  // The node's lengths, and its pattern's tables for this vocabulary (a
  // SchemaError, thrown, when the pattern cannot be met or held). Built
  // once per node: a bounded array compiles its item once per copy.
  StringSpec string_spec(const Node& node) {
    StringSpec spec = node.string;
    if (!node.pattern) return spec;
    auto& leaf = pattern_leaves_[&node];
    if (!leaf) {
      auto made = make_pattern_leaf(node.pattern, spec.min, spec.max, single_);
      if (!made) {
        SchemaError error = made.error();
        error.path = node.path;
        throw error;
      }
      leaf = std::move(*made);
    }
    spec.pattern = leaf;
    return spec;
  }

  int32_t emit(const Inst& inst) {
    if (program_.insts.size() >= max_size_) throw TooComplex{*path_};
    program_.insts.push_back(inst);
    return static_cast<int32_t>(program_.insts.size() - 1);
  }

  int32_t split(int32_t a, int32_t b) {
    Inst inst;
    inst.op = Inst::Op::kSplit;
    inst.next = a;
    inst.alt = b;
    return emit(inst);
  }

  int32_t leaf(Inst::Op op, int32_t index, int32_t next) {
    Inst inst;
    inst.op = op;
    inst.leaf = index;
    inst.next = next;
    return emit(inst);
  }

  int32_t literal(std::string_view text, int32_t next) {
    for (size_t i = text.size(); i-- > 0;) {
      Inst inst;
      inst.op = Inst::Op::kByte;
      inst.lo = inst.hi = static_cast<uint8_t>(text[i]);
      inst.next = next;
      next = emit(inst);
    }
    return next;
  }

  int32_t alternatives(const std::vector<int32_t>& entries) {
    int32_t entry = entries.back();
    for (size_t i = entries.size() - 1; i-- > 0;) entry = split(entries[i], entry);
    return entry;
  }

  // Properties in schema order. after: "a member is written, the next one
  // needs a comma"; none: "nothing written yet". Each value is compiled once.
  int32_t object(const Node& node, int32_t next) {
    const int32_t close = literal("}", next);
    int32_t after = close, none = close;
    for (size_t i = node.children.size(); i-- > 0;) {
      const int32_t entry = value(node.children[i], after);
      path_ = &node.path;
      const int32_t member = literal(node.texts[i] + ":", optional_space(entry));
      const int32_t with_comma = literal(",", optional_space(member));
      if (node.required[i]) {
        after = with_comma;
        none = member;
      } else {
        after = split(with_comma, after);
        none = split(member, none);
      }
    }
    return literal("{", none);
  }

  // States by items written: below minItems another item must follow; up to
  // maxItems one may; an unbounded tail loops.
  int32_t array(const Node& node, int32_t next) {
    const int32_t close = literal("]", next);
    if (node.max_items == 0) return literal("[", close);
    const Node& item = node.children.front();
    const auto another = [&](int32_t then) {
      const int32_t entry = value(item, then);
      path_ = &node.path;
      return literal(",", optional_space(entry));
    };
    int32_t after_first;  // the state after one item
    if (node.max_items == kUnbounded) {
      const int32_t loop = split(close, close);  // alt patched below: ", item" back to here
      const int32_t more = another(loop);
      program_.insts[static_cast<size_t>(loop)].alt = more;
      after_first = loop;
      for (int64_t k = node.min_items - 1; k >= 1; --k) after_first = another(after_first);
    } else {
      after_first = close;
      for (int64_t k = node.max_items - 1; k >= 1; --k) {
        const int32_t more = another(after_first);
        after_first = k >= node.min_items ? split(close, more) : more;
      }
    }
    const int32_t first = value(item, after_first);
    path_ = &node.path;
    return literal("[", node.min_items == 0 ? split(close, first) : first);
  }

  Program& program_;
  size_t max_size_;
  const std::string* path_;  // the node being compiled, for kTooComplex
  const ByteSet& single_;
  std::map<const Node*, std::shared_ptr<const PatternLeaf>> pattern_leaves_;
};

// Shortest single-byte-token distances to the match (Bellman-Ford: loops
// only come from unbounded arrays, so it settles in a few passes).
std::vector<int32_t> distances(const Program& program, const ByteSet& single) {
  const size_t n = program.insts.size();
  std::vector<int32_t> own(n, 0);  // bytes the instruction itself needs, from its start
  for (size_t pc = 0; pc < n; ++pc) {
    const Inst& inst = program.insts[pc];
    switch (inst.op) {
      case Inst::Op::kByte: {
        bool writable = false;
        for (int b = inst.lo; b <= inst.hi && !writable; ++b) writable = single[static_cast<size_t>(b)];
        own[pc] = writable ? 1 : kInf;
        break;
      }
      case Inst::Op::kString:
        own[pc] = string_min_completion(program.strings[static_cast<size_t>(inst.leaf)], kStringStart, single);
        break;
      case Inst::Op::kNumber:
        own[pc] = number_outlook(program.numbers[static_cast<size_t>(inst.leaf)], "").min_added;
        break;
      default:
        break;
    }
  }
  std::vector<int32_t> dist(n, kInf);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t pc = 0; pc < n; ++pc) {
      const Inst& inst = program.insts[pc];
      int32_t d = 0;
      switch (inst.op) {
        case Inst::Op::kMatch:
          d = 0;
          break;
        case Inst::Op::kSplit:
          d = std::min(dist[static_cast<size_t>(inst.next)], dist[static_cast<size_t>(inst.alt)]);
          break;
        default:
          d = std::min(kInf, own[pc] + dist[static_cast<size_t>(inst.next)]);
      }
      if (d < dist[pc]) {
        dist[pc] = d;
        changed = true;
      }
    }
  }
  return dist;
}

}  // namespace

SchemaResult<Program> compile_program(const Node& root, const ByteSet& single, size_t max_size) {
  Program program;
  Compiler compiler(program, max_size, root, single);
  try {
    const int32_t value = compiler.value(root, compiler.match());
    program.start = compiler.optional_space(value);
  } catch (const TooComplex& e) {
    return schema_error(ErrorCode::kSchemaTooComplex,
                        "the compiled schema would exceed " + std::to_string(max_size) +
                            " instructions (lower maxItems or nest less)",
                        e.path);
  } catch (const SchemaError& e) {
    return e;
  }
  program.distance = distances(program, single);
  return program;
}

}  // namespace kvframe::runtime::schema
