#include "workloads.h"

#include <stdexcept>

#include "holdem/holdem_state.h"
#include "kvframe/json_blocker/rules.h"
#include "moba/moba_stream.h"

namespace kvframe::bench {

namespace {

json_blocker::Rules load_rules_or_throw(const char* path) {
  auto rules = json_blocker::load_rules(path);
  if (!rules) throw std::runtime_error(std::string(path) + ": " + rules.error().to_string());
  return std::move(rules).value();
}

std::string size_name(std::size_t bytes) {
  return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + "MiB"
                             : std::to_string(bytes >> 10) + "KiB";
}

}  // namespace

Workload moba_workload(std::size_t frame_bytes, std::size_t transitions) {
  namespace moba = examples::moba;
  Workload workload;
  workload.name = "moba_" + size_name(frame_bytes);
  workload.rules = load_rules_or_throw(KVFRAME_MOBA_RULES_FILE);
  moba::StreamGenerator generator(moba::params_for_bytes(frame_bytes, /*seed=*/1));
  workload.frames.push_back(generator.next().json);
  for (std::size_t i = 0; i < transitions; ++i) {
    moba::Frame frame = generator.next();
    workload.frames.push_back(std::move(frame.json));
    workload.merge_patches.push_back(std::move(frame.merge_patch));
    workload.json_patches.push_back(std::move(frame.json_patch));
  }
  return workload;
}

Workload holdem_workload() {
  Workload workload;
  workload.name = "holdem";
  workload.rules = load_rules_or_throw(KVFRAME_HOLDEM_RULES_FILE);
  examples::holdem::StatePair pair = examples::holdem::figure5_pair();
  workload.frames = {std::move(pair.previous), std::move(pair.current)};
  return workload;
}

}  // namespace kvframe::bench
