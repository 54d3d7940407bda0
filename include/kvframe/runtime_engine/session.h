// The block-attention engine: one Engine (model, tokenizer, shared block KV
// store) serves many Sessions, one per game. Per frame a session is given the
// whole gamecore JSON (or a patch); per query it brings its KV up to date with
// the latest frame and answers a task.
//
// What the model reads, in every mode — the same token ids, each part
// tokenized on its own (the prompt is never re-tokenized as one string):
//
//   prefix   the chat template's system turn and the opening of the user turn
//   blocks   one per json_blocker block, in the rules' order (document order
//            unless they say volatile_last): its text
//            ("<path>: <json>", a run of members under its parent's path) and "\n"
//   final    the task's instruction, the end of the user turn and the
//            assistant header; generation continues from there
//
// Attention modes (SessionParams::mode):
//   full    the whole prompt causal, prefilled from scratch every query (the baseline)
//   prefix  reuse the longest unchanged token prefix of the previous query's
//           prompt, as llama.cpp's prompt cache does (what games use today)
//   block   the seeds' block attention: each block encoded on its own after the
//           prefix (kv_diff caches its KV by content), placed at contiguous
//           positions by one RoPE rotation; the final block and decoding
//           attend to everything. Only new or changed blocks are encoded.
//
// An Engine and its sessions are driven by one thread (the server's engine
// thread); the BlockStore inside is thread-safe on its own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/common/block_fidelity.h"
#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/patch.h"
#include "kvframe/json_blocker/rules.h"
#include "kvframe/kv_diff/assembled_kv.h"
#include "kvframe/kv_diff/block_store.h"
#include "kvframe/runtime_tokenizer/chat_template.h"
#include "kvframe/runtime/generate.h"
#include "kvframe/runtime/model.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"

namespace kvframe::runtime {

enum class AttentionMode { kFull, kPrefix, kBlock };
const char* attention_mode_name(AttentionMode mode);  // "full", "prefix", "block"
Result<AttentionMode> parse_attention_mode(std::string_view name);

struct SessionParams;

struct EngineParams {
  // Budget of the block KV store shared by all sessions (bytes). Blocks of
  // every live session's current frame stay in memory regardless; the budget
  // bounds what is kept for reuse beyond that (see kv_diff/README.md).
  int64_t cache_bytes = int64_t{2} << 30;
};

class Engine {
 public:
  // Loads the GGUF model, its tokenizer and chat template. A model with no
  // template gets raw prompts (as create() without one); a template we do not
  // recognise is kUnknownTemplate.
  static Result<std::unique_ptr<Engine>> load(const std::string& model_path, const ModelParams& model_params = {},
                                              const EngineParams& params = {});
  // From parts. Without a chat template the prefix is the system prompt as
  // given and the final block the instruction as given (raw completion).
  static Result<std::unique_ptr<Engine>> create(std::unique_ptr<Model> model, Tokenizer tokenizer,
                                                std::optional<ChatTemplate> chat_template,
                                                const EngineParams& params = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const Model& model() const;
  // The most KV memory a session of `mode` with `context` tokens may come to
  // hold (block mode's slack layout keeps room for 1.5x its context):
  // kvframe-serve's --max-memory-mb counts sessions by it.
  int64_t max_session_kv_bytes(AttentionMode mode, int64_t context) const;
  const Tokenizer& tokenizer() const;
  const std::optional<ChatTemplate>& chat_template() const;
  kv_diff::BlockStore& store();
  // Output schemas compiled against this engine's tokenizer, by their text
  // (Task::output_schema goes through it).
  SchemaCache& schemas();
  // Identifies model weights + shape (+ an adapter that changes block KV)
  // for block keys: sessions of different engines never share a store entry
  // by accident (Model::context_fingerprint). fingerprint() is that of
  // sessions running the default adapter; fingerprint(adapter) of those
  // running `adapter` (null: none). Sessions whose adapters change only the
  // query (scope kQuery) get the base model's, so they share block KV.
  uint64_t fingerprint() const;
  uint64_t fingerprint(const LoraAdapter* adapter) const;
  // The adapter sessions run when their params name none: the one the model
  // was loaded with (ModelParams::lora), or set_adapter's (null: none).
  const std::shared_ptr<LoraAdapter>& default_adapter() const;
  // Replaces the default adapter (null: none); kvframe-finetune swaps in the
  // one it trains. When block KV changes with it (scope kAll) the store is
  // emptied and the fingerprint changes: sessions opened afterwards never
  // read KV of the old adapter (sessions opened before keep theirs).
  // kInvalidArgument for an adapter of another model shape.
  Status set_adapter(std::shared_ptr<LoraAdapter> adapter);
  // Makes the model apply `adapter` (null: none) from now on: a session
  // switches to its own before it runs the model, so sessions with
  // different adapters take turns on one model, never sharing a pass.
  // Cheap when it is already applied. kInvalidArgument for another shape.
  Status use_adapter(const std::shared_ptr<LoraAdapter>& adapter);
  // Where answers end unless a task says otherwise: the tokenizer's eos and
  // the chat template's end-of-turn token (default_stop_tokens).
  const std::vector<TokenId>& stop_tokens() const;

 private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct SessionParams {
  AttentionMode mode = AttentionMode::kBlock;
  std::string system_prompt;  // empty: the chat template's default, if any
  json_blocker::Rules rules;
  // Tokens the session's KV holds: prefix + blocks + final block + answer.
  int64_t context = 16384;
  // block mode: where changed blocks go in the assembled buffer (kv_diff).
  // Unset: default_layout(the engine's model).
  std::optional<kv_diff::Layout> layout;
  // block mode: what each block is encoded after. false (the default): each
  // block alone, from position 0, as in the seeds — its KV then depends on
  // its tokens only and is shared by sessions with any system prompt. true:
  // after the prefix (the system prompt, its KV computed once per session).
  // Measured in docs/block_attention.md: blocks alone stayed closer to full
  // attention's first-token distribution (KL) on the default model.
  bool blocks_after_prefix = false;
  common::BlockFidelity fidelity;  // block mode's fidelity knobs (kvframe/common/block_fidelity.h)
  // The LoRA adapter this session's model runs with (lora.h): unset, the
  // engine's default_adapter(); a null pointer, none (the base model). One
  // of scope kQuery changes only the final block and the answer, so the
  // session reads the same block KV as sessions with any other such adapter
  // or none; one of scope kAll gets block KV of its own (keyed by its
  // fingerprint). kInvalidArgument at open for an adapter of another shape.
  std::optional<std::shared_ptr<LoraAdapter>> adapter;
  // block mode: the block store scope (kv_diff/block_store.h) this session
  // reads and fills. Sessions of different scopes never reuse each other's
  // blocks, so none can tell from a cache hit, or its timing, what another
  // scope sent. 0: the scope every unscoped session shares.
  uint64_t cache_scope = 0;
};

// The prompts a session opened with `params` runs for its frames in turn,
// token ids per part, exactly as its queries would: with the rules' order
// kVolatileLast where a block stands depends on the frames before. What
// kvframe-finetune trains on (answers are left empty).
class PromptRenderer {
 public:
  PromptRenderer(const Engine& engine, SessionParams params);
  ~PromptRenderer();
  PromptRenderer(PromptRenderer&&) noexcept;
  PromptRenderer& operator=(PromptRenderer&&) noexcept;

  // The next frame's prompt. kInvalidArgument for bad rules, a frame that does
  // not parse or partition, or an empty instruction; such a frame is not one
  // of the session's.
  Result<PromptSample> render(std::string_view frame_json, const std::string& instruction);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct Task {
  std::string instruction;  // the final block's text: what to do now
  // max_tokens, sampling, stop strings, stop tokens (empty: the model's
  // defaults). Its schema is set from output_schema.
  GenerateParams generate;
  // A JSON Schema the answer must satisfy (json_schema.h; compiled once per
  // text by the engine's SchemaCache): the answer is then that JSON value
  // and nothing else. Empty: free text.
  std::string output_schema;
  // Streamed text as it becomes final (whole UTF-8 characters, sentence ends marked).
  ChunkCallback on_chunk;
};

// Milliseconds per stage of one query (the frame's stages since the last query).
struct StageTimes {
  double partition = 0;      // json_blocker: parse, partition, diff of the frames since the last query
  double tokenize = 0;       // tokenizing new block texts and the final block
  double encode = 0;         // encoding blocks (block mode) / the prompt (full, prefix), in the query or ahead of it
  double reposition = 0;     // kv_diff placement: rotations and copies into the assembled buffer
  double query_prefill = 0;  // the final block's forward pass (all tasks' at once in query_batch)
  double first_token = 0;    // time to first token: partition + everything up to the first sampled token
  double first_chunk = 0;    // time to the first streamed chunk (0: none was streamed)
  double decode = 0;         // the remaining tokens
  double mask = 0;           // picking tokens within the output schema (part of first_token + decode)
  double total = 0;          // partition + query() end to end
};

struct QueryReport {
  AttentionMode mode = AttentionMode::kBlock;
  int64_t blocks_total = 0;         // blocks of the current frame
  int64_t blocks_reused = 0;        // already in this session's KV, unchanged
  int64_t blocks_encoded = 0;       // run through the model for this query (or ahead of it by warm())
  int64_t cache_hits = 0;           // not in the session but found in the shared store
  int64_t blocks_repositioned = 0;  // reused at a new position: keys re-rotated (or rewritten by the layout)
  // tokens run through the model up to the first token, final block included,
  // and those Session::warm() ran for this frame ahead of the query
  int64_t tokens_encoded = 0;
  // tokens warm() and warm_step() encoded, since the session's previous
  // query, for frames a later one superseded before a query asked them: the
  // rest of the work the stream cost (a game streaming at its table's pace
  // has every frame warmed)
  int64_t tokens_encoded_superseded = 0;
  int64_t context_tokens = 0;       // prefix + blocks
  int64_t query_tokens = 0;         // the final block
  int64_t generated_tokens = 0;
  int64_t decode_steps = 0;         // passes through the model after the first token's
  int64_t forced_tokens = 0;        // tokens the schema forced, taken without a pass of their own (jump-forward)
  kv_diff::AssembleStats assembly;  // block mode
  StageTimes ms;
};

struct Answer {
  std::string text;
  std::vector<TokenId> tokens;
  StopReason stop = StopReason::kMaxTokens;
  at::Tensor first_logits;  // fp32 [n_vocab]: the distribution of the first token
  std::vector<ChoicePoint> choices;  // with an output schema: its first choices (Generation::choices)
  QueryReport report;
};

// The layout a block session takes when SessionParams::layout is unset:
// compact on a GPU, where moving KV is cheap and a buffer without gaps keeps
// attention on the fused kernels, and for a model with sliding-window layers
// (Gemma 3), whose windows count entries and so cannot skip gaps; slack on
// the CPU otherwise, where re-rotating in place is what is cheap.
kv_diff::Layout default_layout(const Model& model);

class Session {
 public:
  // Errors: kInvalidArgument for bad rules, a context below 16 tokens or one
  // past the positions the model rotates right (Model::check_positions);
  // kBackend when the KV buffer cannot be allocated.
  static Result<std::unique_ptr<Session>> open(Engine& engine, const SessionParams& params = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SessionParams& params() const;

  // A new frame, whole or as a patch against the previous one. Cheap: parses,
  // partitions and diffs; the KV is brought up to date by the next query().
  // A rejected frame leaves the session on the previous one.
  json_blocker::Result<json_blocker::FrameDiff> update(std::string_view frame_json);
  json_blocker::Result<json_blocker::FrameDiff> update_patch(std::string_view patch,
                                                             json_blocker::PatchFormat format);
  uint64_t frames() const;

  // Brings the KV up to date with the latest frame now rather than at the
  // next query, which then runs only its final block: kvframe-serve calls it
  // while no request waits, so a game that streams frames finds each one
  // encoded when it asks. The next query's report counts what it encoded
  // (blocks, hits, tokens) but not its time. No-op before the first frame
  // and in full mode (the baseline recomputes everything at each query); an
  // error here (the context full, ...) is the next query's error too.
  Status warm();
  // warm() a step at a time, so that one session's large frame (a first
  // frame of 32K tokens) need not hold the engine for seconds: encodes at
  // most max_tokens (at least one block) of what the latest frame still
  // needs and returns the tokens left to encode; the step that leaves 0
  // also places the blocks, as warm() does. A query may come at any point
  // and finishes what is left. The next query's report counts all of it.
  // max_tokens <= 0, and modes other than block: warm() whole, 0 left.
  Result<int64_t> warm_step(int64_t max_tokens);

  // Answers `task` against the latest frame. kInvalidArgument before the
  // first frame; kContextFull when prefix + blocks + final block + max_tokens
  // exceed params().context (the message says by how much); a kSchema* code
  // for an output schema we cannot compile, kUnsatisfiable for one whose
  // shortest valid output exceeds max_tokens (nothing is run then).
  Result<Answer> query(const Task& task);

  // Several tasks against the latest frame at once (different NPCs, different
  // instructions): the frame's KV is brought up to date once, then all final
  // blocks are prefilled and decoded as one batch, each task on its own
  // branch of the shared KV (Model::forward_branches). Each task gets what
  // query() would give it alone (greedy: the same tokens). One task's error
  // (a bad schema, too long for the context) fails that task only; an error
  // of the shared work fails all. A single task runs as query() does.
  std::vector<Result<Answer>> query_batch(const std::vector<Task>& tasks);

  // Tasks of different sessions of one engine (a server's games), answered
  // together: each session's frame as query() brings it up to date, one
  // after another, then every final block in one pass
  // (Model::forward_sequences) and every answer decoded in lockstep — one
  // pass a step for all (decode_together). Each gets what its query() would give
  // alone (greedy: the same tokens). A task's own error (a bad schema, the
  // context full) fails that task only; kInvalidArgument for all when a
  // session is null or named twice, or the sessions are of different engines
  // (on_answer is then not called).
  struct SessionTask {
    Session* session = nullptr;
    Task task;
    // Called with the task's result as soon as it is known (its answer
    // complete, or its error), before the others' are: a server sends it
    // then. It may move the answer out (query_together returns what is left).
    std::function<void(Result<Answer>&)> on_answer;
  };
  static std::vector<Result<Answer>> query_together(const std::vector<SessionTask>& tasks);

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvframe::runtime
