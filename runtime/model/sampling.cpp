// Sampling runs in plain C++ on the CPU over the logits: a vocabulary of
// 50-150K floats is sorted in well under a millisecond, and plain code keeps
// a seeded run identical across libtorch versions and devices.
#include "kvframe/runtime/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace kvframe::runtime {
namespace {

// Uniform in [0, 1) from 53 random bits: the same on every standard library
// (std::uniform_real_distribution is not specified bit for bit).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

TokenId Sampler::sample(const at::Tensor& logits, const TokenMask* allowed) {
  at::Tensor row = logits.reshape({-1}).to(at::kCPU, at::kFloat).contiguous();
  const float* data = row.data_ptr<float>();
  const int64_t n_vocab = row.numel();
  // A forced choice draws no random number, so skipping it (jump-forward,
  // Decoder::forced) leaves a seeded run's later draws as they were.
  if (allowed && allowed->ids().size() == 1) return allowed->ids().front();
  if (params_.temperature <= 0.0f) {
    if (!allowed) return static_cast<TokenId>(std::max_element(data, data + n_vocab) - data);  // first maximum, as torch.argmax
    // ids() ascend, so the first maximum among them is the one an argmax
    // over logits with the rest at -inf would give.
    const std::vector<int32_t>& ids = allowed->ids();
    return *std::max_element(ids.begin(), ids.end(), [&](TokenId a, TokenId b) { return data[a] < data[b]; });
  }

  // Candidates (all tokens, or the allowed ones) by descending logit; top-k keeps the first k.
  std::vector<TokenId> order;
  if (allowed) {
    order = allowed->ids();
  } else {
    order.resize(static_cast<size_t>(n_vocab));
    std::iota(order.begin(), order.end(), 0);
  }
  const auto n = static_cast<int64_t>(order.size());
  const int64_t keep = params_.top_k > 0 ? std::min<int64_t>(params_.top_k, n) : n;
  auto by_logit = [&](TokenId a, TokenId b) { return data[a] > data[b] || (data[a] == data[b] && a < b); };
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), by_logit);
  order.resize(static_cast<size_t>(keep));

  // Softmax at the temperature, then top-p: the shortest prefix reaching p.
  std::vector<double> probs(order.size());
  const double top = data[order[0]];
  double total = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    probs[i] = std::exp((data[order[i]] - top) / params_.temperature);
    total += probs[i];
  }
  size_t kept = order.size();
  if (params_.top_p < 1.0f) {
    double cumulative = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      cumulative += probs[i] / total;
      if (cumulative >= params_.top_p) {
        kept = i + 1;
        break;
      }
    }
    total = std::accumulate(probs.begin(), probs.begin() + static_cast<std::ptrdiff_t>(kept), 0.0);
  }

  double r = uniform01(rng_) * total;
  for (size_t i = 0; i < kept; ++i) {
    r -= probs[i];
    if (r < 0) return order[i];
  }
  return order[kept - 1];
}

}  // namespace kvframe::runtime
