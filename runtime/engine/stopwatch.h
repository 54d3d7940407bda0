// Stage timing for reports. On a GPU the work is queued asynchronously, so
// each lap first waits for the device: the stage's time is then its own.
#pragma once

#include <ATen/ATen.h>

#include <chrono>

namespace kvframe::runtime {

class Stopwatch {
 public:
  explicit Stopwatch(at::Device device) : device_(device) { restart(); }
  void restart() { start_ = std::chrono::steady_clock::now(); }
  // Milliseconds since the last lap (or restart), then restarts.
  double lap() {
    if (device_.is_cuda()) {
      // Copying a value to the host waits for the stream's queued work; the
      // CPU build of libtorch has no CUDA API to call instead.
      at::empty({1}, at::TensorOptions(at::kFloat).device(device_)).cpu();
    }
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
    return ms;
  }

 private:
  at::Device device_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kvframe::runtime
