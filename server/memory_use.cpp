#include "kvframe/server_core/memory_use.h"

#include <fstream>
#include <sstream>

namespace kvframe::server {

ResidentMemory parse_resident_memory(const std::string& status_text) {
  ResidentMemory out;
  std::istringstream lines(status_text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    if (!(fields >> key >> kib)) continue;
    if (key == "VmRSS:") out.total_bytes = kib << 10;
    if (key == "RssAnon:") out.anonymous_bytes = kib << 10;
  }
  return out;
}

ResidentMemory resident_memory() {
  std::ifstream in("/proc/self/status");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_resident_memory(text.str());
}

uint64_t scratch_bytes(const ResidentMemory& resident, uint64_t dense_weights, uint64_t session_kv, uint64_t store) {
  // Sessions' KV is counted at what it may come to: pages not yet written
  // are not resident, so the difference can go below zero.
  const uint64_t counted = dense_weights + session_kv + store;
  return resident.anonymous_bytes > counted ? resident.anonymous_bytes - counted : 0;
}

}  // namespace kvframe::server
