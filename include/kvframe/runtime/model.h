// The Llama-family decoder (Llama 2/3.x, Mistral, SmolLM2: 'llama' files;
// Qwen2.x: 'qwen2' files) in libtorch, loaded from a GGUF file.
//
//   x = embed(tokens)
//   per layer:  x += Wo · attention(rope(Wq·rms(x)), rope(Wk·rms(x)), Wv·rms(x))   (GQA, causal)
//               x += Wdown · (silu(Wgate·rms(x)) * Wup·rms(x))                     (SwiGLU)
//   logits = Woutput · rms(x)          (Woutput = embed when the file ties them)
//
// On the CPU the matrices stay as the file stores them (memory-mapped
// quantized blocks, the only copy), read by kvframe's kernels for every pass
// (ModelParams::step_kernels); on CUDA they are dequantized once at load to
// the compute dtype (bf16 by default where the device runs it natively, else
// fp32). A LoRA adapter (lora.h) is applied on the fly or merged at load.
// The forward pass itself reads top to bottom in runtime/model/forward_pass.cpp:
// inference and training run the same one.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/runtime/batch.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/kv_core/kv_cache.h"
#include "kvframe/runtime/lora.h"
#include "kvframe/kv_core/rope.h"

namespace kvframe::runtime {

// Hyperparameters, read from the GGUF metadata ({arch}.*).
struct ModelConfig {
  std::string arch;        // "llama", "qwen2", "qwen3", "gemma3" or "phi3"
  std::string name;        // general.name, for logs
  int64_t n_layer = 0;
  int64_t n_embd = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;    // n_embd / n_head unless the file says otherwise
  int64_t n_ff = 0;
  int64_t n_vocab = 0;
  // The context the model was trained to hold: {arch}.context_length, or
  // for a phi3 file rotating with LongRoPE's short factors the length they
  // hold (rope.scaling.original_context_length).
  int64_t n_ctx_train = 0;
  double rms_eps = 1e-5;
  RopeParams rope;
  bool tied_embeddings = false;  // no output.weight: the head reuses token_embd
  bool qkv_bias = false;         // Qwen2
  // Phi-3: the file stores Q|K|V as one tensor (attn_qkv) and gate|up as
  // ffn_up, in the order the loop fuses them: read as they are.
  bool fused_in_file = false;
  // Phi-3's LongRoPE (rope_factors_short / rope_factors_long): the length the
  // short factors hold (rope.scaling.original_context_length; 0: the file
  // gives none), and whether the model rotates with the long ones: loaded
  // for a longer context (ModelParams::context), as llama.cpp picks them.
  int64_t rope_original_context = 0;
  bool long_rope = false;
  // How the one layer loop varies with the architecture (forward_pass.h).
  bool qk_norm = false;     // Qwen3, Gemma 3: each Q and K head RMS-normed before RoPE
  bool post_norms = false;  // Gemma 3: attention's and FFN's outputs RMS-normed before the residual add
  enum class Gate { kSilu, kGeluTanh };
  Gate gate = Gate::kSilu;  // the gated FFN's activation: SwiGLU, or Gemma's GeGLU
  double embed_scale = 1.0; // Gemma 3: embeddings times sqrt(n_embd)
  // Gemma 3's local layers (rope.local_layers): a query sees the
  // sliding_window keys up to its own position (llama.cpp's "standard"
  // window) and rotates with rope.local_freq_base.
  int64_t sliding_window = 0;
  bool is_local(int64_t layer) const { return rope.is_local(layer); }
  // Keys a query of this layer may reach back (itself included); 0: all.
  int64_t window(int64_t layer) const { return is_local(layer) ? sliding_window : 0; }

  // Parameters in the matmuls a token passes through (layers + head), for FLOP counts.
  int64_t matmul_params() const;
};

// Reads and checks the hyperparameters, for a model loaded to hold
// `context` tokens per sequence (ModelParams::context). kUnsupportedArch
// names the architecture and lists the supported ones; kMissingKey names
// the key; kInvalidArgument for a negative context.
Result<ModelConfig> read_model_config(const GgufFile& file, int64_t context = 0);

struct ModelParams {
  std::string device = "cpu";        // "cpu", "cuda", "cuda:N"
  // Compute dtype: "fp32", "bf16" or "fp16"; empty: bf16 on CUDA and on CPUs
  // with AVX-512-BF16 or AMX (prefill ~8x fp32's speed there, measured by
  // bench_runtime; logits within the tolerance tests/runtime/model states),
  // fp32 on other CPUs. "fp32" is the reference.
  std::string dtype;
  // Called while weights load: (tensors done, tensors total).
  std::function<void(int64_t, int64_t)> on_progress;
  // A LoRA adapter file to apply (empty: none), and whether to merge it into
  // the weights at load (no per-token cost; adapters of scope kAll only).
  std::string lora;
  bool lora_merge = false;
  // On the CPU (fp32 or bf16), every pass reads the file's own blocks in
  // place (runtime/model/quant_matrix.h): steps of up to 32 tokens
  // (decoding, forced runs) with kvframe's kernels, activations in fp32 (or
  // int8, below); longer passes (prefill, block encoding) dequantize tiles of weights to
  // the compute dtype for libtorch's GEMM. The model then takes about the
  // file's size in memory. false: libtorch over a dense copy of the weights
  // (the reference; the file's size several times over).
  bool step_kernels = true;
  // Decoding steps (one token a sequence) round their activations to int8
  // where the CPU has AVX2, as llama.cpp does: per 256 values for the
  // K-quant matrices (Q4_K, Q6_K), and on CPUs without AVX-512 per 32 for
  // the 32-value block types. About a third of the instructions per weight,
  // at half a step of 1/127 of those values' largest. Runs of several
  // tokens keep fp32, so a prompt's KV does not depend on how it was split.
  // false: fp32 activations (the reference the tests compare against).
  bool int8_activations = true;
  // Decoding steps on CUDA replay a captured CUDA graph (one launch instead
  // of ~50 per layer) where the build and the cache allow it
  // (runtime/model/decode_graph.h). false: every step runs eagerly.
  bool cuda_graphs = true;
  // Threads of this model's passes on the CPU, as llama_set_n_threads sets
  // a context's: each pass sets the count of the thread that runs it (an
  // OpenMP count is the calling thread's own), never the process's default.
  // 0: fit to the cores other processes leave free (free_cores.h) when the
  // program asked for that (tune_cpu_process without --threads), else
  // whatever the running thread has.
  int threads = 0;
  // The most tokens one sequence's cache will hold, as llama.cpp's n_ctx per
  // sequence. It matters to phi3 files with LongRoPE factors (Phi-4-mini):
  // past rope.scaling.original_context_length (4,096 there) they rotate with
  // their long factors and the model reports {arch}.context_length as its
  // trained context, at most that length with the short ones. 0: the short
  // factors. Other files ignore it.
  int64_t context = 0;
};

// How the context's tokens attend during training (Model::context_kv):
//   kCausal  every token to everything before it: `full` mode;
//   kBlock   the prefix causally, each block to itself (after the prefix when
//            blocks_after_prefix) and nothing else, at the positions block
//            mode encodes it at: `block` mode.
enum class AttentionMask { kCausal, kBlock };

// One prompt as the engine runs it, token ids per part (Engine::render_prompt),
// and the answer a training sample wants after it.
struct PromptSample {
  std::vector<int32_t> prefix;
  std::vector<std::vector<int32_t>> blocks;
  std::vector<int32_t> final_block;
  std::vector<int32_t> answer;
  int64_t context_tokens() const;  // prefix + blocks
};

// Private continuations of one shared cache, decoded as one batch: many NPC
// queries on the same frame share its assembled KV, and each has its own
// final block and answer here. Branch entry j of branch b takes position
// first_position + j (first_position: the shared cache's next_position when
// the branches were made), right after everything the shared cache holds.
struct BranchCache {
  std::vector<at::Tensor> k, v;  // per layer [branches, n_head_kv, capacity, head_dim]; keys rotated
  std::vector<int64_t> length;   // entries in use, per branch
  int64_t capacity = 0;          // entries per branch
  int64_t first_position = 0;
  int64_t branches() const { return static_cast<int64_t>(length.size()); }
};

// One sequence's share of Model::forward_sequences: tokens to append to its
// own cache (a session's decoding step: the sampled token and any the schema
// forces after it).
struct SequenceStep {
  std::vector<int64_t> tokens;
  KvCache* cache = nullptr;
};
// The most tokens forward_sequences runs as one CPU step (more: one sequence at a time).
inline constexpr int64_t kSequenceStepTokens = 128;

// Model::recompute over a few layers for most tokens (CacheBlend, arXiv
// 2405.16444): every token runs the layers before `at_layer` and that
// layer's projections, so its keys and values there are fresh in context.
// Then, in each group (a block: group_sizes consecutive tokens), the tokens
// marked `always` and the keep[g] others whose values moved most from what
// the cache held run on through every later layer; the rest keep their
// cached keys and values above `at_layer`. All tokens kept is recompute()
// without a selection.
struct RecomputeSelection {
  int64_t at_layer = 1;
  std::vector<int64_t> group_sizes;  // sums to the tokens' count
  std::vector<int64_t> keep;         // per group, besides its `always` tokens
  std::vector<uint8_t> always;       // per token (empty: none)
};

class Model {
 public:
  // Loads a GGUF model: checks the architecture, hyperparameters and every
  // tensor's shape and type; on the CPU keeps the matrices as stored (the
  // file stays mapped while the model lives), else dequantizes them to
  // params.dtype on params.device.
  // Both loaders run on a thread of their own (and wait for it), so a model
  // loaded on one thread runs at full speed on another (model.cpp says why).
  static Result<std::unique_ptr<Model>> load(const GgufFile& file, const ModelParams& params = {});
  static Result<std::unique_ptr<Model>> load(const std::string& path, const ModelParams& params = {});
  // A model of this shape with random weights (N(0, 0.02), norms 1), made on
  // params.device: for benchmarking real shapes (e.g. Llama-3-8B on a GPU)
  // without shipping their files. kInvalidArgument for inconsistent shapes.
  static Result<std::unique_ptr<Model>> with_random_weights(const ModelConfig& config,
                                                            const ModelParams& params = {}, uint64_t seed = 0);

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const;
  const Rope& rope() const;
  // What sizes this model's KV buffers (kv_cache.h).
  KvShape kv_shape() const;
  at::Device device() const;
  at::ScalarType dtype() const;
  // What KV computed for the prompt's context depends on: the shape, weights'
  // name, LongRoPE's set of factors, dtype, and an adapter that changes the context (scope kAll, or
  // merged): the one applied now, or `adapter` when it would be.
  uint64_t context_fingerprint() const;
  uint64_t context_fingerprint(const LoraAdapter* adapter) const;

  // The adapter applied on the fly (null: none). set_adapter replaces it
  // (null removes it); kInvalidArgument when it was made for another shape.
  // Not while another thread runs the model.
  const std::shared_ptr<LoraAdapter>& adapter() const;
  Status set_adapter(std::shared_ptr<LoraAdapter> adapter);

  // What the weights take, and how the CPU multiplies them (logs, Stats).
  struct WeightsMemory {
    // The file's blocks, read in place: memory-mapped, so the pages are the
    // page cache's, shared by every process that maps the file.
    int64_t stored_bytes = 0;
    // libtorch tensors: norms and biases, or every weight where dense.
    int64_t dense_bytes = 0;
    // "as stored (avx512 steps, bf16 tiles)" or "dense bf16".
    std::string layout;
  };
  WeightsMemory weights_memory() const;

  // ModelParams::threads, for the passes started from now on (0: fit to
  // free cores). Not while another thread runs the model.
  int threads() const;
  void set_threads(int threads);

  // kBackend when the memory cannot be had; kInvalidArgument for capacity < 1
  // or for one check_positions() refuses.
  Result<KvCache> new_cache(int64_t capacity) const;
  // kInvalidArgument when `positions` pass what this model rotates right: on
  // a phi3 model rotating with LongRoPE's short factors, rope_original_context
  // (load it with ModelParams::context for more). `what` names the need in
  // the message ("a KV cache of 300 tokens").
  Status check_positions(int64_t positions, const std::string& what) const;

  // The one batch entry point (batch.h): runs the batch's tokens through the
  // forward pass in one pass, the matrices read once for every sequence's
  // tokens. The pass's plan follows from the batch: on the CPU, runs of a
  // few tokens a sequence (kSequenceStepTokens at most in all) take the
  // step kernels, longer ones tiles and GEMM; block attention its encoder's
  // masks (flash kernels on CUDA where they run); on CUDA a lone decoding
  // step replays its captured graph. Returns the kept tokens' logits and,
  // for kBlocks with keep_kv, the blocks' keys and values. kContextFull when
  // a sequence does not fit its cache; kInvalidArgument for no tokens,
  // per-token vectors of another length, a sequence with no tokens (or no
  // cache, or a shared or foreign one), ids outside the vocabulary, or a
  // kBlocks batch that asks for nothing — all checked before anything runs,
  // so every cache is then unchanged; kBackend when libtorch fails.
  //
  // Not expressed as a batch (each says why below): forward_branches
  // (BranchCache's own layout), recompute (tokens at chosen positions and
  // entries), context_kv and forward_over (training: differentiable).
  Result<Decoded> decode(const Batch& batch) const;

  // Helpers over decode(), with the contracts they had before it.

  // decode() of one kAppend sequence, its last token's logits kept or all.
  // Runs tokens [n] (int64) through the model: they take positions
  // cache.next_position .. +n-1, are written to entries cache.length .. +n-1,
  // and see every entry before them that `padding` does not mask (their own
  // entries' padding flags are cleared). Returns fp32 logits: [n, n_vocab]
  // when all_logits, else [1, n_vocab] for the last token only (the head is
  // then computed for that token alone). kContextFull when the cache has no
  // room; kInvalidArgument for token ids outside the vocabulary or a padding
  // tensor that is not bool [capacity] on the cache's device. `part` says
  // whether an adapter of scope kQuery applies.
  Result<at::Tensor> forward(const at::Tensor& tokens, KvCache& cache, bool all_logits = false,
                             PromptPart part = PromptPart::kQuery) const;

  // decode() of one kAppend sequence per step, each one's last token's logits kept.
  // Several sequences' steps at once — the decoding steps of many sessions,
  // or their final blocks — each in its own cache: steps[s].tokens are
  // appended to *steps[s].cache (distinct caches) as forward() would append
  // them, and attend to that cache only. The matrices are read once for
  // every sequence's tokens, which is where a memory-bound step's time goes:
  // by the CPU step kernels up to kSequenceStepTokens in all, else (a GPU,
  // longer runs) by one pass of the forward pass over the packed tokens,
  // each sequence's attention over its own cache. A single sequence runs as
  // forward(). The result equals forward() on each (to fp32 rounding): fp32
  // logits [steps, n_vocab] of each sequence's last token. kContextFull when
  // one does not fit its cache; kInvalidArgument for an empty sequence, a
  // shared or foreign cache, or ids outside the vocabulary — checked before
  // anything runs, so every cache is then unchanged.
  Result<at::Tensor> forward_sequences(const std::vector<SequenceStep>& steps) const;

  // decode() of a kBlocks batch, one sequence per block, keep_kv.
  // Block attention's encoder: runs independent token blocks through the
  // model in one batched pass. Block b's tokens take positions
  // context.next_position + 0 .. n_b - 1 and attend to every visible entry of
  // `context` (the shared system prompt; nullptr: nothing) and causally to
  // their own block — never to another block. Returns each block's keys
  // (un-rotated) and values, in input order. kInvalidArgument for an empty
  // block or ids outside the vocabulary.
  Result<std::vector<BlockKv>> encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                             const KvCache* context = nullptr) const;

  // Not helpers over decode(): a branch is not a KvCache but a row of
  // BranchCache's [branches, ...] tensors, whose entries each row's queries
  // read causally after the shared cache's; a batch of kAppend sequences
  // would need each branch copied out to a cache of its own and back.
  //
  // `branches` empty continuations of `shared` with room for `capacity`
  // tokens each. kInvalidArgument for branches or capacity < 1; kBackend
  // when the memory cannot be had.
  Result<BranchCache> new_branches(const KvCache& shared, int64_t branches, int64_t capacity) const;

  // One batched step over all branches: tokens[b] (tokens.size() ==
  // branches.branches(); an empty row sits this call out) are appended to
  // branch b and attend to every visible entry of `shared` (its first
  // shared.length entries, minus padding) and causally to branch b's own
  // entries — never to another branch. `shared` is only read. The result is
  // what forward() would give on a copy of `shared` with branch b's tokens
  // appended (to fp32 rounding). Returns fp32 logits [branches, n_vocab] of
  // each row's last new token (zeros for rows that sat out).
  // kContextFull when a row does not fit its branch; kInvalidArgument for
  // ids outside the vocabulary or mismatched sizes.
  Result<at::Tensor> forward_branches(const std::vector<std::vector<int32_t>>& tokens, const KvCache& shared,
                                      BranchCache& branches) const;

  // Not a helper over decode(): its tokens go to chosen entries at chosen
  // positions, each attending by entry_positions rather than by entry order,
  // and a selection narrows the pass at a layer — none of which a batch's
  // positions (the next ones, in order) can say.
  //
  // Recomputes chosen entries of `cache` in context (the block engine's
  // fidelity knobs, common::BlockFidelity): token tokens[i], at
  // position positions[i], runs through the model and its keys and values
  // are written over entry entries[i]. It attends to every entry e of
  // [0, cache.length) whose position entry_positions[e] is at most its own:
  // the others as cached, the recomputed ones as this pass makes them, layer
  // by layer — so recomputing every token of a sequence is a causal prefill
  // of it. entry_positions: int64 [cache.length] on the cache's device (a
  // value above every position hides an entry, as padding does; `padding`
  // itself is not read). The adapter applies when it changes the context.
  // With a selection (the blend knob), only some tokens run
  // every layer: see RecomputeSelection.
  // kInvalidArgument for sizes that differ, no tokens, entries outside
  // [0, length) or repeated, a selection that does not fit the tokens, or
  // bad ids; kBackend when libtorch fails.
  Status recompute(KvCache& cache, const std::vector<int32_t>& tokens, const std::vector<int64_t>& entries,
                   const std::vector<int64_t>& positions, const at::Tensor& entry_positions,
                   const RecomputeSelection* selection = nullptr) const;

  // Not helpers over decode(): they run under autograd (decode() runs in
  // inference mode, and on CUDA through flash kernels that training does not
  // take), and context_kv's block mask re-rotates each block to its place in
  // document order as it goes. forward_over is a kBlocks block with logits
  // run under autograd: a helper once decode() can run outside inference
  // mode without the flash kernels (not done yet).
  //
  // Training. Both are differentiable with respect to the adapter's
  // parameters when autograd is on (and the parameters require grad); the
  // base weights never take gradients.
  //
  // The context of a sample (prefix, then blocks) as `mask` attends it: a
  // cache of exactly its tokens at contiguous positions, keys rotated — for
  // kBlock what encode_blocks + kv_diff's assembly make of it, for kCausal
  // what forward() makes. The adapter applies when it changes the context
  // (scope kAll). kInvalidArgument for an empty context or bad ids.
  Result<KvCache> context_kv(const PromptSample& sample, AttentionMask mask, bool blocks_after_prefix = false) const;
  // `tokens` appended after `context` (only read: nothing is written to it),
  // as forward() would run them on a copy of it: fp32 logits of the last
  // `logit_rows` tokens [logit_rows, n_vocab]. kContextFull never: the pass
  // holds its own keys; kInvalidArgument for no tokens, logit_rows outside
  // [1, tokens], bad ids or a cache of another model.
  Result<at::Tensor> forward_over(const std::vector<int32_t>& tokens, const KvCache& context,
                                  PromptPart part = PromptPart::kQuery, int64_t logit_rows = 1) const;

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  static Result<std::unique_ptr<Model>> load_here(const GgufFile& file, const ModelParams& params);
  static Result<std::unique_ptr<Model>> random_here(const ModelConfig& config, const ModelParams& params,
                                                    uint64_t seed);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvframe::runtime
