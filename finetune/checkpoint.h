// Training checkpoints: the adapter so far (an ordinary adapter file, F32)
// and the rest of the state — AdamW's moments, the step, the position in the
// sample order, what the run was made with — in a GGUF file beside it. Both
// are written whole or not at all (GgufWriter::write renames into place).
#pragma once

#include <torch/optim/adamw.h>

#include <memory>
#include <string>
#include <vector>

#include "kvframe/finetune/trainer.h"

namespace kvframe::finetune {

struct TrainerState {
  int64_t step = 0;   // optimizer steps done
  int64_t epoch = 0;  // passes over the samples begun
  int64_t cursor = 0;  // samples of this epoch's order taken
};

struct CheckpointState {
  std::shared_ptr<runtime::LoraAdapter> adapter;
  TrainerState state;
  int64_t adam_step = 0;
  std::vector<at::Tensor> exp_avg, exp_avg_sq;  // per adapter parameter
};

Status write_checkpoint(const std::string& out_dir, const runtime::LoraAdapter& adapter,
                        const torch::optim::AdamW& optimizer, const TrainParams& params, uint64_t data_hash,
                        const TrainerState& state);

// kInvalidArgument when the checkpoint was made with other data or other
// adapter / sampling parameters (the message names what differs); the GGUF
// reader's and adapter loader's errors for damaged files; kCorrupt when the
// two files disagree.
Result<CheckpointState> load_checkpoint(const std::string& out_dir, const runtime::Model& model,
                                        const TrainParams& params, uint64_t data_hash);

// Gives the optimizer (made over checkpoint.adapter's parameters) its moments back.
void restore_optimizer(torch::optim::AdamW& optimizer, const CheckpointState& checkpoint);

}  // namespace kvframe::finetune
