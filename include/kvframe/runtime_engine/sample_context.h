// The context KV (prefix + blocks) of prompts given as token ids, built by
// the engine's own machinery for a mode — in block mode the shared block
// store and kv_diff's assembly, so blocks seen before are not encoded again.
// kvframe-finetune reads the base model's context KV through it when it
// trains a query-scope adapter: exactly what a session would hold.
#pragma once

#include <memory>

#include "kvframe/runtime/model.h"
#include "kvframe/runtime_engine/session.h"

namespace kvframe::runtime {

class SampleContext {
 public:
  // kInvalidArgument for a context below 16 tokens; kBackend when the KV
  // buffer cannot be allocated. `params.mode` picks the mode; its rules and
  // system prompt are not used (the sample's tokens already hold them).
  static Result<std::unique_ptr<SampleContext>> open(Engine& engine, const SessionParams& params);
  ~SampleContext();
  SampleContext(const SampleContext&) = delete;
  SampleContext& operator=(const SampleContext&) = delete;

  // Brings the KV up to date with the sample's prefix and blocks; the cache
  // stays valid (and unchanged) until the next prepare(). `report` gets the
  // block counts and tokens encoded. kContextFull when the sample does not
  // fit the context it was opened with.
  Result<const KvCache*> prepare(const PromptSample& sample, QueryReport& report);

 private:
  struct Impl;
  explicit SampleContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvframe::runtime
