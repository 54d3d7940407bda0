// kvframe-generate: runs a GGUF model on a prompt and prints the text as it is
// generated, then prefill and decode speed.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/cli_model/model_params.h"
#include "kvframe/runtime_tokenizer/chat_template.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/runtime/generate.h"

namespace {

namespace rt = kvframe::runtime;

constexpr const char* kFooter =
    "Exit status:\n"
    "  0  generated (stopped at an end token, --max-tokens or the context)\n"
    "  1  usage error\n"
    "  2  the model, prompt file or --schema cannot be used (missing, truncated,\n"
    "     unsupported, unknown chat template; a schema that is not JSON Schema, is\n"
    "     outside the supported subset, or whose shortest valid output is longer\n"
    "     than --max-tokens), or the prompt and --max-tokens pass the context a phi3\n"
    "     model's short LongRoPE factors hold (load it with --model-context); the\n"
    "     reason is printed on stderr\n"
    "  3  the run failed: the device is unavailable (--device cuda on a CPU-only\n"
    "     build or machine), or libtorch failed\n"
    "\n"
    "The default model is fetched by scripts/fetch-model.sh.";

// --model, --device, --dtype, --threads and --lora: kvframe::cli::ModelOptions.
struct Options : kvframe::cli::ModelOptions {
  std::string prompt;
  std::string prompt_file;
  std::string system;
  bool chat = false;
  int32_t max_tokens = 128;
  uint64_t seed = 0;
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  std::string schema_file;
  std::vector<std::string> stop;
};

int fail(const kvframe::Error& error, const char* next) {
  std::cerr << "kvframe-generate: " << error.to_string() << "\n  next: " << next << "\n";
  return kvframe::exit_code(error.code);
}

// Shows load progress on a terminal; stays quiet in logs and pipes.
void show_progress(int64_t done, int64_t total) {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  if (!tty) return;
  std::cerr << "\rloading weights " << done << "/" << total << (done == total ? "\n" : "") << std::flush;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Generates text with a Llama-family GGUF model (libtorch, CPU or CUDA)."};
  app.footer(kFooter);
  kvframe::cli::add_model_options(app, o);
  auto* prompt = app.add_option("--prompt", o.prompt, "prompt text");
  app.add_option("--prompt-file", o.prompt_file, "read the prompt from a file")->excludes(prompt);
  app.add_flag("--chat", o.chat, "wrap the prompt as a user message in the model's chat template");
  app.add_option("--system", o.system, "system message (with --chat)");
  app.add_option("--max-tokens", o.max_tokens, "most tokens to generate")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--seed", o.seed, "sampling seed")->capture_default_str();
  app.add_option("--temperature", o.temperature, "0: greedy")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--top-k", o.top_k, "sample from the k most likely tokens; 0: all")->check(CLI::NonNegativeNumber);
  app.add_option("--top-p", o.top_p, "nucleus sampling mass")->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--schema", o.schema_file,
                 "JSON Schema file: the output is one JSON value valid against it (docs/protocol.md lists the subset)")
      ->check(CLI::ExistingFile);
  app.add_option("--stop", o.stop, "stop string: the text ends before it (repeatable)");
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  if (o.prompt.empty() && o.prompt_file.empty()) {
    std::cerr << "kvframe-generate: give --prompt TEXT or --prompt-file FILE (see --help)\n";
    return kvframe::kExitUsage;
  }
  if (!o.prompt_file.empty()) {
    std::ifstream in(o.prompt_file, std::ios::binary);
    if (!in) {
      std::cerr << "kvframe-generate: cannot read --prompt-file " << o.prompt_file << "\n";
      return kvframe::kExitBadInput;
    }
    std::ostringstream text;
    text << in.rdbuf();
    o.prompt = text.str();
  }
  rt::tune_cpu_process(argv, o.threads);

  auto file = rt::GgufFile::open(o.model);
  if (!file) return fail(file.error(), "check --model; the default model comes from scripts/fetch-model.sh");
  auto tokenizer = rt::Tokenizer::from_gguf(*file);
  if (!tokenizer) return fail(tokenizer.error(), "this model's vocabulary is not supported");

  rt::GenerateParams params;
  params.max_tokens = o.max_tokens;
  params.sampling = {o.temperature, o.top_k, o.top_p, o.seed};
  std::string text = o.prompt;
  std::string end_of_turn;
  if (o.chat) {
    auto chat = rt::ChatTemplate::from_gguf(*file);
    if (!chat) return fail(chat.error(), "run without --chat and format the prompt yourself");
    std::vector<rt::ChatMessage> messages;
    if (!o.system.empty()) messages.push_back({"system", o.system});
    messages.push_back({"user", o.prompt});
    text = chat->render(messages);
    end_of_turn = chat->end_of_turn();
  }
  params.stop_tokens = rt::default_stop_tokens(*tokenizer, end_of_turn);
  params.stop_strings = o.stop;
  if (!o.schema_file.empty()) {
    std::ifstream in(o.schema_file, std::ios::binary);
    std::ostringstream schema;
    schema << in.rdbuf();
    auto compiled = rt::compile_schema(schema.str(), rt::token_vocabulary(*tokenizer, params.stop_tokens));
    if (!compiled) {
      return fail(compiled.error().to_error(),
                  "fix the schema: docs/protocol.md lists the keywords kvframe enforces");
    }
    params.schema = std::move(compiled).value();
  }

  rt::ModelParams model_params = kvframe::cli::model_params(o);
  model_params.on_progress = show_progress;
  auto model = rt::Model::load(*file, model_params);
  if (!model) return fail(model.error(), "check --model and --device");

  // A chat template writes its own bos text; a plain prompt gets bos when the file says so.
  const std::vector<rt::TokenId> prompt_tokens = tokenizer->encode(text, !o.chat && tokenizer->add_bos_by_default());
  auto result = rt::generate(**model, *tokenizer, prompt_tokens, params, [](const rt::TextChunk& chunk) {
    std::cout << chunk.text << std::flush;
  });
  std::cout << std::endl;  // flushed before the stats line on stderr
  if (!result) return fail(result.error(), "shorten the prompt or lower --max-tokens (or raise it for --schema)");

  const rt::GenerateStats& s = result->stats;
  std::fprintf(stderr,
               "[%s · %s %s · %s · weights %s] prefill %lld tokens in %.1f ms (%.1f tok/s) · decode %lld steps in "
               "%.1f ms (%.1f tok/s; %lld forced tokens rode along) · schema masks %.2f ms · stop: %s\n",
               (*model)->config().name.c_str(), o.device.c_str(), at::toString((*model)->dtype()),
               rt::cpu_backend_description().c_str(), (*model)->weights_memory().layout.c_str(),
               static_cast<long long>(s.prompt_tokens), s.prefill_seconds * 1e3, s.prefill_tokens_per_second(),
               static_cast<long long>(s.decode_steps), s.decode_seconds * 1e3, s.decode_tokens_per_second(),
               static_cast<long long>(s.forced_tokens), s.mask_seconds * 1e3, rt::stop_reason_name(result->stop));
  return kvframe::kExitOk;
}
