#include "kvframe/runtime_engine/session.h"

#include "kv_context.h"
#include "kvframe/common/named_values.h"

namespace kvframe::runtime {

constexpr NamedValue<AttentionMode> kAttentionModeNames[] = {
    {AttentionMode::kFull, "full"}, {AttentionMode::kPrefix, "prefix"}, {AttentionMode::kBlock, "block"}};

const char* attention_mode_name(AttentionMode mode) { return name_of_value(kAttentionModeNames, mode, "unknown"); }

Result<AttentionMode> parse_attention_mode(std::string_view name) {
  if (const std::optional<AttentionMode> mode = value_of_name(kAttentionModeNames, name)) return *mode;
  return Error{ErrorCode::kInvalidArgument,
               "unknown attention mode '" + std::string(name) + "': use full, prefix or block"};
}

struct Engine::Impl {
  std::unique_ptr<Model> model;
  Tokenizer tokenizer;
  std::optional<ChatTemplate> chat_template;
  kv_diff::BlockStore store;
  uint64_t fingerprint = 0;
  std::shared_ptr<LoraAdapter> default_adapter;
  std::vector<TokenId> stop_tokens;  // eos and the template's end of turn
  SchemaCache schemas;               // over the tokenizer, ended by stop_tokens
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::load(const std::string& model_path, const ModelParams& model_params,
                                             const EngineParams& params) {
  auto file = GgufFile::open(model_path);
  if (!file) return file.error();
  auto tokenizer = Tokenizer::from_gguf(*file);
  if (!tokenizer) return tokenizer.error();
  // No template: raw prompts (base models, the tests' tiny models). One we
  // do not recognise: refused, never guessed.
  std::optional<ChatTemplate> chat_template;
  auto recognised = ChatTemplate::from_gguf(*file);
  if (recognised) {
    chat_template = std::move(recognised).value();
  } else if (recognised.error().code != ErrorCode::kMissingKey) {
    return recognised.error();
  }
  auto model = Model::load(*file, model_params);
  if (!model) return model.error();
  return create(std::move(model).value(), std::move(tokenizer).value(), std::move(chat_template), params);
}

Result<std::unique_ptr<Engine>> Engine::create(std::unique_ptr<Model> model, Tokenizer tokenizer,
                                               std::optional<ChatTemplate> chat_template,
                                               const EngineParams& params) {
  if (!model) return Error{ErrorCode::kInvalidArgument, "Engine::create() needs a model"};
  if (tokenizer.n_vocab() > model->config().n_vocab) {
    return Error{ErrorCode::kInvalidArgument, "the tokenizer has " + std::to_string(tokenizer.n_vocab()) +
                                                  " tokens but the model only " +
                                                  std::to_string(model->config().n_vocab)};
  }
  if (params.cache_bytes < 0) return Error{ErrorCode::kInvalidArgument, "cache_bytes must not be negative"};
  const uint64_t fingerprint = model->context_fingerprint();
  std::vector<TokenId> stops =
      default_stop_tokens(tokenizer, chat_template ? chat_template->end_of_turn() : std::string());
  auto vocabulary = token_vocabulary(tokenizer, stops);
  // Built in place: the store holds a mutex and cannot move.
  std::shared_ptr<LoraAdapter> default_adapter = model->adapter();
  std::unique_ptr<Impl> impl(new Impl{std::move(model), std::move(tokenizer), std::move(chat_template),
                                      kv_diff::BlockStore(params.cache_bytes), fingerprint,
                                      std::move(default_adapter), std::move(stops),
                                      SchemaCache(std::move(vocabulary))});
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

const Model& Engine::model() const { return *impl_->model; }

int64_t Engine::max_session_kv_bytes(AttentionMode mode, int64_t context) const {
  const KvShape shape = impl_->model->kv_shape();
  const int64_t entry = 2 * shape.n_layer * shape.n_head_kv * shape.head_dim * c10::elementSize(shape.dtype);
  const int64_t entries = mode == AttentionMode::kBlock ? block_capacity(default_layout(*impl_->model), context) : context;
  return entries * entry;
}
const Tokenizer& Engine::tokenizer() const { return impl_->tokenizer; }
const std::optional<ChatTemplate>& Engine::chat_template() const { return impl_->chat_template; }
kv_diff::BlockStore& Engine::store() { return impl_->store; }
uint64_t Engine::fingerprint() const { return impl_->fingerprint; }

uint64_t Engine::fingerprint(const LoraAdapter* adapter) const {
  return adapter == impl_->default_adapter.get() ? impl_->fingerprint : impl_->model->context_fingerprint(adapter);
}

const std::shared_ptr<LoraAdapter>& Engine::default_adapter() const { return impl_->default_adapter; }

Status Engine::set_adapter(std::shared_ptr<LoraAdapter> adapter) {
  if (Status set = impl_->model->set_adapter(adapter); !set.ok()) return set;
  impl_->default_adapter = std::move(adapter);
  const uint64_t fingerprint = impl_->model->context_fingerprint();
  if (fingerprint != impl_->fingerprint) impl_->store.clear();
  impl_->fingerprint = fingerprint;
  return {};
}

Status Engine::use_adapter(const std::shared_ptr<LoraAdapter>& adapter) {
  if (impl_->model->adapter() == adapter) return {};
  return impl_->model->set_adapter(adapter);
}
const std::vector<TokenId>& Engine::stop_tokens() const { return impl_->stop_tokens; }
SchemaCache& Engine::schemas() { return impl_->schemas; }

}  // namespace kvframe::runtime
