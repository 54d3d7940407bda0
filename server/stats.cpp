#include "kvframe/server_core/stats.h"

#include <algorithm>
#include <cmath>

namespace kvframe::server {

const char* stage_name(Stage stage) {
  switch (stage) {
    case Stage::kQueue: return "queue";
    case Stage::kPartition: return "partition";
    case Stage::kTokenize: return "tokenize";
    case Stage::kEncode: return "encode";
    case Stage::kReposition: return "reposition";
    case Stage::kQueryPrefill: return "query_prefill";
    case Stage::kFirstToken: return "first_token";
    case Stage::kDecode: return "decode";
    case Stage::kEngine: return "engine";
    case Stage::kServer: return "server";
    case Stage::kCount: break;
  }
  return "unknown";
}

void StageWindow::add(double ms) {
  if (values_.size() < kCapacity) {
    values_.push_back(ms);
  } else {
    values_[next_] = ms;
    next_ = (next_ + 1) % kCapacity;
  }
  ++count_;
}

double StageWindow::quantile(double q) const {
  if (values_.empty()) return 0;
  std::vector<double> sorted = values_;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  const std::size_t index = std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(index), sorted.end());
  return sorted[index];
}

ServerStats::ServerStats() : started_(std::chrono::steady_clock::now()) {}

Counters& ServerStats::counters_of(const std::string& principal) {
  if (principal.empty()) return unattributed_;
  auto found = principals_.find(principal);
  if (found != principals_.end()) {
    recency_.splice(recency_.begin(), recency_, found->second.second);
    return found->second.first;
  }
  if (principals_.size() >= kMaxPrincipals) {
    principals_.erase(recency_.back());
    recency_.pop_back();
  }
  recency_.push_front(principal);
  return principals_.emplace(principal, std::make_pair(Counters{}, recency_.begin())).first->second.first;
}

void ServerStats::count_error(fb::ErrorCode code, const std::string& principal) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Counters* c : {&counters_, &counters_of(principal)}) {
    ++c->errors;
    if (code == fb::ErrorCode::Busy) ++c->busy_rejected;
    if (code == fb::ErrorCode::Deadline) ++c->deadline_missed;
  }
}

void ServerStats::count_frame(bool superseded, const std::string& principal) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Counters* c : {&counters_, &counters_of(principal)}) ++(superseded ? c->frames_superseded : c->frames);
}

void ServerStats::count_query(const std::string& principal) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Counters* c : {&counters_, &counters_of(principal)}) ++c->queries;
}

void ServerStats::count_expired(const std::string& principal) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Counters* c : {&counters_, &counters_of(principal)}) ++c->sessions_expired;
}

void ServerStats::count_undeliverable() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_.undeliverable;
}

void ServerStats::add_stage(Stage stage, double ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  windows_[static_cast<std::size_t>(stage)].add(ms);
}

void ServerStats::add_engine_stages(const EngineStages& ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::pair<Stage, double> stages[] = {
      {Stage::kPartition, ms.partition}, {Stage::kTokenize, ms.tokenize},
      {Stage::kEncode, ms.encode},       {Stage::kReposition, ms.reposition},
      {Stage::kQueryPrefill, ms.query_prefill}, {Stage::kFirstToken, ms.first_token},
      {Stage::kDecode, ms.decode},       {Stage::kEngine, ms.engine}};
  for (const auto& [stage, value] : stages) windows_[static_cast<std::size_t>(stage)].add(value);
}

StatsSnapshot ServerStats::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  StatsSnapshot out;
  out.uptime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  out.counters = counters_;
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    const StageWindow& window = windows_[i];
    if (window.count() == 0) continue;
    out.stages.push_back({static_cast<Stage>(i), window.count(), window.quantile(0.5), window.quantile(0.99)});
  }
  return out;
}

StatsSnapshot ServerStats::snapshot_of(const std::string& principal) const {
  std::lock_guard<std::mutex> lock(mutex_);
  StatsSnapshot out;
  out.uptime_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (auto found = principals_.find(principal); found != principals_.end()) out.counters = found->second.first;
  return out;
}

}  // namespace kvframe::server
