#include "kvframe/cli_options/fidelity_options.h"

namespace kvframe::cli {

namespace {

template <class Knob>
void add_knob(CLI::App& app, typename Knob::type& value, const std::string& tail, KnobLimits limits) {
  const auto hi = limits == KnobLimits::kServer ? Knob::wire_max : Knob::max;
  app.add_option(Knob::flag, value, std::string(Knob::help) + " (" + Knob::off + tail)
      ->check(CLI::Range(Knob::min, hi))
      ->capture_default_str();
}

}  // namespace

void add_fidelity_options(CLI::App& app, common::BlockFidelity& fidelity, const std::string& whose,
                          KnobLimits limits) {
  const std::string tail = (whose.empty() ? "" : ", " + whose) + "; docs/block_attention.md)";
#define KVF_ADD_KNOB(name) add_knob<options::knob_##name>(app, fidelity.name, tail, limits);
  KVF_FIDELITY_KNOBS(KVF_ADD_KNOB)
#undef KVF_ADD_KNOB
}

}  // namespace kvframe::cli
