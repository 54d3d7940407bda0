// Block fine-tuning ("Block-attention for Efficient Prefilling", Ma et al.,
// arXiv:2409.15355, §2.4): ordinary supervised fine-tuning of a
// LoRA adapter in which every sample is trained under the block mask — the
// attention block mode runs — and, for a share of samples, under the causal
// mask too, so the model answers alike in `block` and `full` mode.
//
//   Trainer trainer = Trainer::create(engine, params, examples).value();
//   while (trainer.step() < params.steps) trainer.train_step();   // checkpoints itself
//   trainer.save_adapter("adapter.gguf");
//
// Each sample runs the model's training passes (Model::context_kv, then
// forward_over; the same forward pass inference runs), the loss is the
// cross-entropy of the answer tokens only. With a query-scope adapter
// (LoraScope::kQuery) the context needs no gradients: its block-mode KV is
// what the inference engine computes (kv_diff's store and assembly, cached by
// block content across samples), so a step costs the blocks new to it plus
// the final block and answer. torch::optim::AdamW over fp32 adapter masters;
// compute in the model's dtype (bf16 on CPUs with AVX-512-BF16 / AMX).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kvframe/finetune/dataset.h"
#include "kvframe/runtime/lora.h"
#include "kvframe/runtime_engine/session.h"

namespace kvframe::finetune {

enum class Schedule { kCosine, kLinear, kConstant };
const char* schedule_name(Schedule schedule);
Result<Schedule> parse_schedule(std::string_view name);

struct TrainParams {
  runtime::LoraParams lora;
  int64_t steps = 300;       // optimizer steps
  int64_t batch = 8;         // samples per step (gradient accumulation)
  double lr = 1e-3;          // peak learning rate
  int64_t warmup = 20;       // steps of linear warm-up from 0
  Schedule schedule = Schedule::kCosine;
  double min_lr = 0.1;       // the decay ends at min_lr * lr
  double weight_decay = 0.0;
  double clip = 1.0;         // gradient norm clipping (0: none)
  // Share of samples trained under the causal mask as well as the block mask
  // (the seeds: every sample under both). Causal samples cost a full pass
  // over their context; block samples reuse cached block KV.
  double causal_fraction = 1.0;
  // For samples under both masks: weight of KL(full || block) over the
  // answer tokens, full mode's distribution a fixed teacher — block mode is
  // taught to answer as full mode does, not only to hit the target (the
  // targets of hard decisions are uncertain, and each mode may guess apart).
  double consistency = 0.0;
  bool blocks_after_prefix = false;  // as the sessions that will use the adapter
  int64_t max_context = 0;   // samples with more context tokens are left out (0: any)
  // Adapter initialisation and sample order: each epoch takes the samples in
  // runs of `batch` consecutive ones (in file order), the runs shuffled.
  uint64_t seed = 1;
  std::string init;          // start from this adapter file instead of a fresh one (its rank, alpha, targets, scope)
  // Plain text the adapter must leave alone (prose, code): each step adds
  // general_weight * KL(base || adapted) of the next-token distributions over
  // general_per_step windows of general_window tokens, cycling through the
  // texts — so the tuned model keeps the base model's way with text that is
  // not a game (the paper mixes general SFT data in for the same reason).
  std::vector<std::string> general_texts;
  int64_t general_window = 256;
  int64_t general_per_step = 1;
  double general_weight = 1.0;
  std::string out_dir;       // checkpoints (empty: none)
  int64_t checkpoint_every = 20;
};

struct StepStats {
  int64_t step = 0;  // after this step
  double loss = 0;   // mean answer cross-entropy over this step's samples and masks (nats per token)
  double loss_block = 0, loss_causal = 0;  // per mask (causal: 0 when no sample had it)
  double consistency = 0;  // mean KL(full || block) of the answer tokens over the causal samples (nats)
  int64_t causal_samples = 0;
  double kl_general = 0;  // mean KL(base || adapted) per token over the general windows (nats; 0: none)
  double lr = 0;         // the rate this step used
  double grad_norm = 0;  // before clipping
  int64_t samples = 0, tokens = 0;  // tokens: context (encoded this step) + query
  double seconds = 0;
};

struct HeldoutLoss {
  double block = 0, causal = 0;  // mean answer cross-entropy, nats per token
  double consistency = 0;        // mean KL(full || block) of the answer tokens, nats
  int64_t samples = 0;
};

class Trainer {
 public:
  // Tokenizes `train` (examples longer than params.max_context or without a
  // target are left out; skipped() counts them) and makes a fresh adapter on
  // engine's model — or, when `resume` and params.out_dir holds a
  // checkpoint, the adapter, optimizer state and sample order saved there
  // (kInvalidArgument if it was made with other data or parameters; the
  // reader's errors for a damaged one). kInvalidArgument for bad params or no
  // usable examples.
  static Result<std::unique_ptr<Trainer>> create(runtime::Engine& engine, const TrainParams& params,
                                                 const std::vector<Example>& train, bool resume = false);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  int64_t step() const;  // optimizer steps done
  int64_t samples() const;  // usable training samples
  int64_t skipped() const;
  bool resumed() const;
  const std::shared_ptr<runtime::LoraAdapter>& adapter() const;

  // One optimizer step; writes a checkpoint every checkpoint_every steps and
  // after the last. kBackend when libtorch fails (the step is not taken).
  Result<StepStats> train_step();
  // Answer loss on held-out examples under both masks, without gradients.
  Result<HeldoutLoss> heldout_loss(const std::vector<Example>& examples);
  Status save_checkpoint() const;
  // The adapter as kvframe and llama.cpp load it (F16).
  Status save_adapter(const std::string& path) const;

 private:
  struct Impl;
  explicit Trainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The checkpoint files in a training folder.
std::string checkpoint_adapter_path(const std::string& out_dir);  // <out>/checkpoint.adapter.gguf
std::string checkpoint_state_path(const std::string& out_dir);    // <out>/checkpoint.state.gguf

}  // namespace kvframe::finetune
