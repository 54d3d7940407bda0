// kvframe-serve: the block-attention engine behind a ZeroMQ socket, for games
// (protocol/kvframe.fbs; clients: adapters/native).
#include <CLI/CLI.hpp>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/cli_model/model_params.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/cli_options/fidelity_options.h"
#include "kvframe/server/adapter_set.h"
#include "kvframe/server_core/curve_keys.h"
#include "kvframe/server/engine_backend.h"
#include "kvframe/server_core/ping.h"
#include "kvframe/server_core/server.h"

namespace {

namespace rt = kvframe::runtime;
namespace srv = kvframe::server;

constexpr const char* kFooter =
    "Clients (adapters/native, the Unity and Unreal plugins) connect a ZeroMQ DEALER\n"
    "to --bind and speak protocol/kvframe.fbs (docs/protocol.md).\n"
    "\n"
    "Security: a --bind that is not loopback needs CURVE: --curve-secret (from\n"
    "--gen-keys) encrypts, --curve-allow admits only the listed client keys.\n"
    "--insecure-public serves a public address unencrypted anyway.\n"
    "\n"
    "Tenants: every request acts for a principal, the client's CURVE public key\n"
    "(or, without CURVE, its connection). A session answers only its principal;\n"
    "each principal has its own block-cache scope (--cache-group shares one\n"
    "among keys that trust each other), its own Stats (--curve-operator keys\n"
    "see the whole server's; without CURVE on loopback everyone does) and\n"
    "quotas (--quota-*; over one: Error{QuotaExceeded}). docs/protocol.md,\n"
    "\"Threat model\", says what is isolated in each deployment.\n"
    "\n"
    "Message size: requests above --max-message-mb get Error{TooLarge}; above twice\n"
    "that ZeroMQ drops the sender's connection unread (the server keeps serving).\n"
    "\n"
    "Logs: logfmt lines on stderr (ts=... level=... msg=\"...\" key=value ...).\n"
    "SIGINT / SIGTERM: stop taking requests, answer queued ones ShuttingDown, let a\n"
    "running query finish (up to --shutdown-grace-ms, else leave it), exit 0.\n"
    "\n"
    "Exit status:\n"
    "  0  clean shutdown (or --gen-keys done)\n"
    "  1  usage error\n"
    "  2  the model, keys or configuration cannot be used (the reason is logged)\n"
    "  3  cannot bind --bind\n"
    "  4  --ping: no HelloReply in time\n"
    "\n"
    "The default model is fetched by scripts/fetch-model.sh.";

// --model, --device, --dtype, --threads and --lora: kvframe::cli::ModelOptions.
struct Options : kvframe::cli::ModelOptions {
  std::string bind = "tcp://127.0.0.1:5555";
  std::string ready_file;
  bool warm_frames = true;
  std::size_t max_sessions_together = 1;
  // 1024: with a newcomer's cold ~7K-token frame beside 4 Hold'em matches it
  // halved their decisions' p99 and left p50 as it was; with matches alone it
  // changed nothing (bench/bench_serving.py, docs/protocol.md).
  uint32_t step_tokens = 1024;
  uint32_t session_idle_s = 600;
  std::string ping;
  int ping_timeout_ms = 2000;
  std::string ping_server_key, ping_client_key;
  std::string mode = "any";
  int64_t cache_mb = 2048;
  int64_t max_memory_mb = 0;  // 0: no limit
  uint32_t context = 4096;
  kvframe::common::BlockFidelity fidelity;
  uint32_t max_context = 0;
  uint32_t max_tokens = 4096;
  double max_message_mb = static_cast<double>(kvframe::protocol::kDefaultMaxMessageBytes >> 20);
  std::size_t max_queue = 1024;
  std::size_t max_session_queue = 256;
  std::size_t max_batch = 32;
  std::string log_level = "info";
  std::vector<std::string> adapters;
  bool lora_merge = false;
  std::string curve_secret;
  std::string curve_allow;
  std::string curve_operator;
  std::vector<std::string> cache_groups;
  std::vector<std::string> shares;  // KEY=WEIGHT
  std::size_t quota_sessions = 64;
  uint64_t quota_context = 1u << 18;
  std::size_t quota_queued = 512;
  double quota_rate = 1000;
  int64_t quota_store_mb = -1;  // -1: half of cache_mb
  std::string gen_keys;
  bool insecure_public = false;
  int shutdown_grace_ms = 1500;
};

std::atomic<srv::Server*> g_server{nullptr};

void on_stop_signal(int) {
  if (srv::Server* server = g_server.load()) server->stop();
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

std::vector<srv::fb::AttentionMode> served_modes(const std::string& mode) {
  using M = srv::fb::AttentionMode;
  if (mode == "full") return {M::Full};
  if (mode == "prefix") return {M::Prefix};
  if (mode == "block") return {M::Block};
  return {M::Full, M::Prefix, M::Block};
}

int generate_keys(const std::string& prefix) {
  auto pair = srv::write_key_pair(prefix);
  if (!pair) {
    std::cerr << "kvframe-serve: " << pair.error().message << "\n";
    return kvframe::kExitBadInput;
  }
  std::cout << "wrote " << prefix << ".key (secret: --curve-secret, keep private) and " << prefix
            << ".pub (public: give it to clients, or list it in the server's --curve-allow)\npublic key: "
            << pair->public_key << "\n";
  return kvframe::kExitOk;
}

// CURVE settings from the key files; the error says which file and why.
srv::KeyResult<srv::CurveParams> curve_params(const Options& o) {
  srv::CurveParams curve;
  if (o.curve_secret.empty()) return curve;
  if (!srv::curve_available()) return srv::KeyError{"this libzmq has no CURVE support (built without libsodium)"};
  auto secret = srv::read_secret_key(o.curve_secret);
  if (!secret) return secret.error();
  curve.secret_key = *secret;
  if (!o.curve_allow.empty()) {
    auto allowed = srv::read_allowed_keys(o.curve_allow);
    if (!allowed) return allowed.error();
    curve.allowed_clients = *allowed;
  }
  if (!o.curve_operator.empty()) {
    auto operators = srv::read_allowed_keys(o.curve_operator);
    if (!operators) return operators.error();
    curve.operators = *operators;
  }
  return curve;
}

// --cache-group files: each file's keys share one block-cache scope, named
// by the file.
srv::KeyResult<std::map<std::string, std::string>> cache_groups(const Options& o) {
  std::map<std::string, std::string> groups;
  for (const std::string& file : o.cache_groups) {
    auto keys = srv::read_allowed_keys(file);
    if (!keys) return keys.error();
    for (const std::string& key : *keys) {
      if (auto [it, fresh] = groups.emplace("curve:" + key, file); !fresh && it->second != file) {
        return srv::KeyError{"key " + key + " is in two --cache-group files, " + it->second + " and " + file};
      }
    }
  }
  return groups;
}

// --share KEY=WEIGHT: a client's share of the engine, by its public key.
srv::KeyResult<std::unordered_map<std::string, double>> engine_shares(const Options& o) {
  std::unordered_map<std::string, double> weights;
  for (const std::string& share : o.shares) {
    const std::size_t at = share.rfind('=');  // Z85 keys may hold '=' themselves; weights do not
    double weight = 0;
    try {
      weight = at == std::string::npos ? 0 : std::stod(share.substr(at + 1));
    } catch (const std::exception&) {
    }
    if (at != 40 || !(weight > 0)) {
      return srv::KeyError{"--share '" + share + "' is not KEY=WEIGHT (a Z85 public key of 40 characters, a weight > 0)"};
    }
    weights["curve:" + share.substr(0, at)] = weight;
  }
  return weights;
}

// Tells whoever started the server where it listens (a --bind with port 0 picks a free
// port): one line on stdout, and --ready-file written whole or not at all (a temporary
// file renamed into place) so a watcher never reads half an endpoint.
bool announce_endpoint(const std::string& endpoint, const std::string& ready_file) {
  std::cout << "kvframe-serve listening on " << endpoint << std::endl;
  if (ready_file.empty()) return true;
  const std::string temporary = ready_file + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << endpoint << '\n';
    if (!out.flush()) return false;
  }
  return std::rename(temporary.c_str(), ready_file.c_str()) == 0;
}

// --ping: one line on stdout, the exit status says the rest.
int run_ping(const Options& o) {
  srv::PingParams params{o.ping, std::chrono::milliseconds(o.ping_timeout_ms), "", "", ""};
  auto read_key = [](const std::string& path, std::string& out) {
    auto key = srv::read_secret_key(path);  // one Z85 key per file, public or secret alike
    if (!key) {
      std::cerr << "kvframe-serve --ping: " << key.error().message << "\n";
      return false;
    }
    out = *key;
    return true;
  };
  if (!o.ping_server_key.empty() && !read_key(o.ping_server_key, params.server_public_key)) return kvframe::kExitBadInput;
  if (!o.ping_client_key.empty() && (!read_key(o.ping_client_key + ".pub", params.client_public_key) ||
                                     !read_key(o.ping_client_key + ".key", params.client_secret_key))) {
    return kvframe::kExitBadInput;
  }
  auto answer = srv::ping(params);
  if (!answer) {
    std::cout << "no answer: " << answer.error().message << std::endl;
    return kvframe::kExitCheckFailed;
  }
  std::cout << "ok " << o.ping << " kvframe-serve " << answer->server_version << " model " << answer->model
            << " instance " << std::hex << answer->instance_id << std::dec << " in " << answer->round_trip_ms
            << " ms" << std::endl;
  return kvframe::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Serves the kvframe block-attention engine to games over ZeroMQ."};
  app.footer(kFooter);
  kvframe::cli::ModelOptionsSpec model_options;
  model_options.lora_note = "the adapter of sessions that name none, which may also be an --adapter NAME";
  model_options.context = false;  // --max-context is the context the model is loaded for
  kvframe::cli::add_model_options(app, o, model_options);
  app.add_option("--bind", o.bind, "ZeroMQ endpoint to listen on (port 0: any free port; the bound one is printed)")
      ->capture_default_str();
  app.add_option("--ready-file", o.ready_file,
                 "once listening, write the bound endpoint and a newline to this file (removed at exit)");
  app.add_option("--mode", o.mode, "attention modes served: full, prefix, block, or any (each session picks)")
      ->check(CLI::IsMember({"full", "prefix", "block", "any"}))
      ->capture_default_str();
  app.add_option("--max-memory-mb", o.max_memory_mb,
                 "memory for the weights, the block store (--cache-mb) and the sessions' KV together (MiB; 0: no "
                 "limit): a load over it does not start, an OpenSession over it gets Error{Busy}")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--cache-mb", o.cache_mb, "block KV store budget shared by all sessions (MiB)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--context", o.context, "context tokens of a session that asks for 0 (capped at --max-context)")
      ->check(CLI::Range(16u, 1u << 24))->capture_default_str();
  kvframe::cli::add_fidelity_options(app, o.fidelity, "for sessions that ask for the server's default",
                                     kvframe::cli::KnobLimits::kServer);
  app.add_option("--max-context", o.max_context, "most context tokens a session may ask for, and the context the model is loaded for (phi3 "
                 "LongRoPE files rotate with their long factors past their original context; default: the model's)")
      ->check(CLI::Range(16u, 1u << 24));
  app.add_option("--max-tokens", o.max_tokens, "most tokens one query may generate")
      ->check(CLI::Range(1u, 1u << 20))->capture_default_str();
  app.add_option("--max-message-mb", o.max_message_mb, "largest request (MiB); larger ones get Error{TooLarge}")
      ->check(CLI::Range(0.001, 1024.0))->capture_default_str();
  app.add_option("--max-queue", o.max_queue, "requests waiting for the engine, all sessions (then Error{Busy})")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-batch", o.max_batch,
                 "queries of one session on the same frame decoded as one batch (1: one at a time)")
      ->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--max-sessions-together", o.max_sessions_together,
                 "queries of different sessions answered together, their answers decoded in one pass a step "
                 "(1: one session at a time; more pays where decoding fills a decision, not on a small CPU)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--session-idle-s", o.session_idle_s,
                 "close a session whose client has sent nothing for this many seconds, dropping its queued work "
                 "(a client that vanished frees its memory; kvframe's clients ping while they hold sessions, and "
                 "re-open one the server forgot by themselves); 0: never")
      ->capture_default_str();
  app.add_option("--step-tokens", o.step_tokens,
                 "tokens of a frame one session may encode per engine turn: a larger frame is encoded a step at a "
                 "time while other sessions' queries run between the steps (0: whole frames in one turn)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_flag("!--no-warm", o.warm_frames,
               "do not encode a frame as it arrives when the engine is idle (then its query encodes it)");
  app.add_option("--max-session-queue", o.max_session_queue, "requests waiting in one session (then Error{Busy})")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--log-level", o.log_level, "error, warn, info or debug (debug: stats every 10 s)")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}))->capture_default_str();
  app.add_option("--adapter", o.adapters, "a LoRA adapter sessions may name in OpenSession: NAME=FILE (repeat for "
                                          "several). With the default model kvframe's own are there already, under "
                                          "their game's name (holdem, ...; block: the block-tuned one)");
  app.add_flag("--lora-merge", o.lora_merge, "merge the adapter into the weights (scope 'all' adapters only)");
  app.add_option("--curve-secret", o.curve_secret, "server's CURVE secret key file (Z85; from --gen-keys): encrypts");
  app.add_option("--curve-allow", o.curve_allow, "allowed client public keys, Z85, one per line ('#' lines are comments)")
      ->needs(app.get_option("--curve-secret"));
  app.add_option("--curve-operator", o.curve_operator,
                 "client public keys (Z85, one per line) that read the whole server's Stats; others see their own")
      ->needs(app.get_option("--curve-secret"));
  app.add_option("--cache-group", o.cache_groups,
                 "a file of client public keys (Z85, one per line) that share one block-cache scope (repeatable; "
                 "every other client has its own)")
      ->needs(app.get_option("--curve-secret"));
  app.add_option("--share", o.shares,
                 "KEY=WEIGHT: that client's share of the engine against the others' (repeatable; default 1): the "
                 "engine goes first to the client charged the least engine time over its weight, then round-robin "
                 "among its sessions")
      ->needs(app.get_option("--curve-secret"));
  app.add_option("--quota-sessions", o.quota_sessions, "sessions one client may hold open")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--quota-context", o.quota_context, "context tokens of one client's open sessions, summed")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--quota-queued", o.quota_queued, "requests of one client waiting for the engine")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--quota-rate", o.quota_rate, "messages a second one client may send (burst: twice that; 0: no limit)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--quota-store-mb", o.quota_store_mb,
                 "block-cache MiB one client's scope keeps; past it its own oldest blocks go (default: half of --cache-mb)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--shutdown-grace-ms", o.shutdown_grace_ms,
                 "on SIGINT/SIGTERM, how long a running query may finish before the process leaves without it")
      ->check(CLI::Range(0, 600000))->capture_default_str();
  app.add_flag("--insecure-public", o.insecure_public, "serve a non-loopback --bind without CURVE");
  app.add_option("--ping", o.ping,
                 "health probe: send Hello to ENDPOINT, print the HelloReply, exit 0 (4 without an answer); for "
                 "readiness and liveness probes (docs/deploy.md)");
  app.add_option("--ping-timeout-ms", o.ping_timeout_ms, "how long --ping waits")
      ->check(CLI::Range(1, 600000))->capture_default_str();
  app.add_option("--ping-server-key", o.ping_server_key, "--ping over CURVE: the server's public key file (PREFIX.pub)");
  app.add_option("--ping-client-key", o.ping_client_key,
                 "--ping over CURVE: this probe's key pair PREFIX (PREFIX.key, PREFIX.pub; one of --curve-allow's "
                 "keys when the server has an allow-list; default: a fresh pair)");
  app.add_option("--gen-keys", o.gen_keys, "write a CURVE key pair to PREFIX.key (secret) and PREFIX.pub, then exit");
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  if (!o.gen_keys.empty()) return generate_keys(o.gen_keys);
  if (!o.ping.empty()) return run_ping(o);

  srv::Log log(*srv::parse_log_level(o.log_level));
  auto curve = curve_params(o);
  if (!curve) {
    log.error("cannot use the CURVE keys", {{"reason", curve.error().message}});
    return kvframe::kExitBadInput;
  }
  auto groups = cache_groups(o);
  if (!groups) {
    log.error("cannot use the --cache-group files", {{"reason", groups.error().message}});
    return kvframe::kExitBadInput;
  }
  auto shares = engine_shares(o);
  if (!shares) {
    log.error("bad --share", {{"reason", shares.error().message}});
    return kvframe::kExitBadInput;
  }
  rt::tune_cpu_process(argv, o.threads);
  if (auto public_key = srv::public_key_of(curve->secret_key)) {
    // What clients configure as the server's key: a wrong --curve-secret shows here.
    log.info("curve on", {{"server_public_key", *public_key},
                          {"allowed_clients", std::to_string(curve->allowed_clients.size())}});
  }

  auto adapter_files = srv::adapter_files(o.adapters, o.model);
  if (!adapter_files) {
    log.error("bad --adapter", {{"reason", adapter_files.error().message}});
    return kvframe::kExitBadInput;
  }
  auto named_file = adapter_files->find(o.lora);
  const std::string default_adapter =
      named_file != adapter_files->end() ? named_file->second : kvframe::cli::lora_file(o);
  rt::ModelParams model_params = kvframe::cli::model_params(o);
  // Merged, the default adapter is part of the weights; otherwise it is one
  // of the adapters sessions switch between, set after the load.
  model_params.lora = o.lora_merge ? default_adapter : "";
  model_params.lora_merge = o.lora_merge;
  // The longest session the server takes is what the model is loaded for
  // (a phi3 LongRoPE file's long factors past its original context).
  model_params.context = o.max_context;
  rt::EngineParams engine_params;
  engine_params.cache_bytes = o.cache_mb << 20;
  log.info("loading model", {{"model", o.model},
                             {"lora", default_adapter.empty() ? "none" : default_adapter},
                             {"device", o.device},
                             {"cpu", rt::cpu_backend_description()}});
  auto loaded = rt::Engine::load(o.model, model_params, engine_params);
  if (!loaded) {
    log.error("cannot load the model", {{"model", o.model},
                                        {"reason", loaded.error().to_string()},
                                        {"next", "check --model, --lora and --device; the default model comes from scripts/fetch-model.sh"}});
    return kvframe::kExitBadInput;
  }
  const rt::Model::WeightsMemory weights = (*loaded)->model().weights_memory();
  log.info("model loaded", {{"weights", weights.layout},
                            {"stored_mb", std::to_string(weights.stored_bytes >> 20)},
                            {"dense_mb", std::to_string(weights.dense_bytes >> 20)}});
  // What --max-memory-mb leaves the sessions' KV once the weights and the
  // block store have theirs.
  const int64_t fixed_mb = ((weights.stored_bytes + weights.dense_bytes) >> 20) + o.cache_mb;
  if (o.max_memory_mb > 0 && fixed_mb >= o.max_memory_mb) {
    log.error("the model and the block store need more than --max-memory-mb",
              {{"max_memory_mb", std::to_string(o.max_memory_mb)},
               {"weights_mb", std::to_string((weights.stored_bytes + weights.dense_bytes) >> 20)},
               {"cache_mb", std::to_string(o.cache_mb)},
               {"next", "raise --max-memory-mb, lower --cache-mb, or use a smaller model"}});
    return kvframe::kExitBadInput;
  }
  if (!(*loaded)->chat_template()) {
    log.warn("the model has no chat template: prompts go to it raw", {{"model", o.model}});
  }
  (*loaded)->store().set_scope_budget((o.quota_store_mb >= 0 ? o.quota_store_mb : o.cache_mb / 2) << 20);
  auto adapters = srv::load_adapters(**loaded, *adapter_files, o.lora_merge ? "" : default_adapter);
  if (!adapters) {
    log.error("cannot load a LoRA adapter", {{"reason", adapters.error().message},
                                            {"next", "check --adapter and --lora: files kvframe-finetune wrote for this model"}});
    return kvframe::kExitBadInput;
  }
  log.info("adapters", {{"names", srv::adapter_names(*adapters)}, {"default", o.lora}});
  srv::EngineBackend backend(std::move(loaded).value(), std::move(*adapters));

  srv::ServerParams params;
  params.bind = o.bind;
  params.curve = *curve;
  params.insecure_public = o.insecure_public;
  params.shutdown_grace = std::chrono::milliseconds(o.shutdown_grace_ms);
  params.handler.modes = served_modes(o.mode);
  params.handler.default_context = o.context;
  params.handler.fidelity = o.fidelity;
  params.handler.max_context = o.max_context;
  params.handler.warm_frames = o.warm_frames;
  params.handler.max_sessions_together = o.max_sessions_together;
  params.handler.step_tokens = o.step_tokens;
  params.handler.session_idle = std::chrono::seconds(o.session_idle_s);
  params.handler.limits.max_tokens = o.max_tokens;
  params.handler.limits.max_message_bytes = static_cast<std::size_t>(o.max_message_mb * (1 << 20));
  params.handler.scheduler.max_queue = o.max_queue;
  params.handler.scheduler.max_session_queue = o.max_session_queue;
  params.handler.scheduler.max_batch = o.max_batch;
  // Sessions' KV is always counted (Stats), bounded only under --max-memory-mb.
  params.handler.scheduler.kv_bytes_of = [&backend](srv::fb::AttentionMode mode, uint32_t context) {
    return backend.session_kv_bytes(mode, context);
  };
  if (o.max_memory_mb > 0) {
    params.handler.scheduler.session_kv_bytes = static_cast<uint64_t>(o.max_memory_mb - fixed_mb) << 20;
  }
  params.handler.quotas = {o.quota_sessions, o.quota_context, o.quota_queued, std::move(*shares)};
  params.handler.rate = {o.quota_rate, 2 * o.quota_rate};
  params.handler.cache_groups = std::move(*groups);
  params.handler.server_version = KVFRAME_VERSION;
  auto server = srv::Server::create(backend, params, log);
  if (!server) {
    log.error("cannot start", {{"reason", server.error().message}});
    return kvframe::exit_code(server.error().code);  // a port taken: 3; a setting: 2
  }
  if (!announce_endpoint((*server)->endpoint(), o.ready_file)) {
    log.error("cannot write --ready-file", {{"path", o.ready_file}, {"next", "check that its folder exists and is writable"}});
    return kvframe::kExitBadInput;
  }
  g_server = server->get();
  install_stop_handlers();
  const bool finished = (*server)->run();
  g_server = nullptr;
  if (!o.ready_file.empty()) std::remove(o.ready_file.c_str());
  // A query still running after the grace period cannot be interrupted:
  // leave without waiting for it (destructors would).
  if (!finished) std::_Exit(kvframe::kExitOk);
  return kvframe::kExitOk;
}
