// Block mode's fidelity knobs (docs/block_attention.md): how much of full
// attention a session buys back for the blocks it encoded alone. Defined
// once, in protocol/options.json (each knob's type, default, range, flag and
// what it does), for every layer that holds them — the runtime's
// SessionParams, the server's defaults and SessionConfig, the CLI flags, the
// evaluation — each copying the struct whole or iterating
// KVF_FIDELITY_KNOBS, so a new knob is added there and where it is used
// (runtime/engine/block_context.cpp).
// Header-only and free of torch: the server's core holds it too.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "kvframe/common/options.h"

namespace kvframe::common {

// A value outside a knob's range (options::knob_<name>::min .. max; NaN is
// in none) is refused: by Session::open (kInvalidArgument), by the server at
// OpenSession (BadRequest), by the flags.
struct BlockFidelity {
  KVF_BLOCK_FIDELITY_FIELDS
};

// A knob's value or limit as people write it (0.25, 4, 1.5, not
// std::to_string's 0.250000), for the range errors of the runtime and the
// server.
template <typename T>
std::string knob_text(T value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// Every knob as "name value", comma-separated, for reports and logs.
inline std::string fidelity_text(const BlockFidelity& fidelity) {
  std::string text;
#define KVF_KNOB_TEXT(name) text += (text.empty() ? "" : ", ") + std::string(#name " ") + knob_text(fidelity.name);
  KVF_FIDELITY_KNOBS(KVF_KNOB_TEXT)
#undef KVF_KNOB_TEXT
  return text;
}

// Why `value` is outside knob `Knob`'s range [Knob::min, hi], if it is; hi
// defaults to the engine's limit (the server passes its wire_max).
template <class Knob>
std::optional<std::string> knob_out_of_range(typename Knob::type value, typename Knob::type hi = Knob::max) {
  if (value >= Knob::min && value <= hi) return std::nullopt;
  std::string range = "at least " + knob_text(Knob::min);
  if (hi != std::numeric_limits<typename Knob::type>::max()) range = knob_text(Knob::min) + " .. " + knob_text(hi);
  return std::string(Knob::name) + " is " + knob_text(value) + "; it takes " + range + " (" + Knob::off + ")";
}

// The first knob of `fidelity` outside its engine range, as knob_out_of_range says it.
inline std::optional<std::string> fidelity_out_of_range(const BlockFidelity& fidelity) {
  std::optional<std::string> bad;
#define KVF_CHECK_KNOB(name) \
  if (!bad) bad = knob_out_of_range<options::knob_##name>(fidelity.name);
  KVF_FIDELITY_KNOBS(KVF_CHECK_KNOB)
#undef KVF_CHECK_KNOB
  return bad;
}

}  // namespace kvframe::common
