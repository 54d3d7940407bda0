#include "kvframe/json_blocker/frame_stream.h"

#include <chrono>

namespace kvframe::json_blocker {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

FrameStream::FrameStream(Rules rules) : document_(rules.limits), partitioner_(std::move(rules)) {}

Result<FrameDiff> FrameStream::push_whole(std::string_view json) {
  timings_ = {};
  auto start = std::chrono::steady_clock::now();
  auto partition = partitioner_.partition(json);
  timings_.partition_ms = ms_since(start);
  if (!partition) return partition.error();
  document_.reset(std::string(json));
  return accept(std::move(partition).value());
}

Result<FrameDiff> FrameStream::push_patch(std::string_view patch, PatchFormat format) {
  timings_ = {};
  auto start = std::chrono::steady_clock::now();
  auto patched = document_.apply(patch, format);
  timings_.patch_ms = ms_since(start);
  if (!patched) return patched.error();
  start = std::chrono::steady_clock::now();
  auto partition = partitioner_.partition(patched.value());
  timings_.partition_ms = ms_since(start);
  if (!partition) {
    document_.undo();
    return partition.error();
  }
  return accept(std::move(partition).value());
}

FrameDiff FrameStream::accept(Partition partition) {
  const auto start = std::chrono::steady_clock::now();
  previous_ = std::move(current_);
  current_ = std::move(partition);
  ++frames_;
  FrameDiff result = diff(previous_, current_);
  timings_.diff_ms = ms_since(start);
  return result;
}

}  // namespace kvframe::json_blocker
