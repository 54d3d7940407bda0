// The server's counters and per-stage latencies, written by the I/O and
// engine threads and read for StatsRequest. Percentiles come from a bounded
// ring of each stage's most recent values, so they follow the current load
// and memory stays fixed however long the server runs.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvframe/server_core/backend.h"

namespace kvframe::server {

enum class Stage {
  kQueue, kPartition, kTokenize, kEncode, kReposition, kQueryPrefill, kFirstToken, kDecode, kEngine, kServer,
  kCount
};
const char* stage_name(Stage stage);  // "queue", "partition", ..., as in Stats.stages

// The most recent values of one stage.
class StageWindow {
 public:
  static constexpr std::size_t kCapacity = 1024;
  void add(double ms);
  uint64_t count() const { return count_; }  // all values ever added
  // The q-quantile (0..1) of the values held, nearest rank; 0 when empty.
  double quantile(double q) const;

 private:
  std::vector<double> values_;
  std::size_t next_ = 0;
  uint64_t count_ = 0;
};

struct Counters {
  uint64_t frames = 0, frames_superseded = 0, queries = 0, deadline_missed = 0, errors = 0;
  uint64_t busy_rejected = 0, undeliverable = 0, sessions_expired = 0;
};

struct StageSummary {
  Stage stage;
  uint64_t count;
  double p50_ms, p99_ms;
};

struct StatsSnapshot {
  double uptime_s = 0;
  Counters counters;
  std::vector<StageSummary> stages;  // stages with at least one value
};

// Thread-safe. Counters are kept for the whole server and for each
// principal (handler.h, Peer) that is counted; a client reading Stats sees
// its own (snapshot_of), an operator the whole server's (snapshot).
class ServerStats {
 public:
  // Principals whose counters are kept at once; past it the least recently
  // counted one is forgotten (its Stats start again from zero).
  static constexpr std::size_t kMaxPrincipals = 4096;

  ServerStats();
  void count_error(fb::ErrorCode code, const std::string& principal);  // also counts Busy and Deadline on their own
  void count_frame(bool superseded, const std::string& principal);
  void count_query(const std::string& principal);
  void count_undeliverable();
  void count_expired(const std::string& principal);  // a session closed for its client's silence
  void add_stage(Stage stage, double ms);
  void add_engine_stages(const EngineStages& ms);
  StatsSnapshot snapshot() const;
  // One principal's counters (no stages: those are the server's).
  StatsSnapshot snapshot_of(const std::string& principal) const;

 private:
  Counters& counters_of(const std::string& principal);  // caller holds mutex_

  mutable std::mutex mutex_;
  std::chrono::steady_clock::time_point started_;
  Counters counters_;
  std::array<StageWindow, static_cast<std::size_t>(Stage::kCount)> windows_;
  using Recency = std::list<std::string>;  // front: the most recently counted principal
  Recency recency_;
  std::unordered_map<std::string, std::pair<Counters, Recency::iterator>> principals_;
  Counters unattributed_;  // counts with no principal (write-only)
};

}  // namespace kvframe::server
