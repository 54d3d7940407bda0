// kvframe-holdem's local server: the engine behind inproc://, on its own thread.
#include "holdem/simulator/local_server.h"

#include <thread>

#include "kvframe/cli_model/model_params.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/server/engine_backend.h"
#include "kvframe/server_core/server.h"

namespace kvframe::examples::holdem {
namespace {

namespace rt = kvframe::runtime;
namespace srv = kvframe::server;

class InProcessServer final : public LocalServer {
 public:
  static std::unique_ptr<InProcessServer> start(const LocalServerParams& p, std::string* error) {
    auto self = std::unique_ptr<InProcessServer>(new InProcessServer());
    rt::EngineParams engine_params;
    rt::ModelParams model_params = cli::model_params(p.model, "holdem");
    // Loaded for the sessions' context, as llama.cpp for its -c and
    // kvframe-serve for its --max-context: a phi3 LongRoPE file (Phi-4-mini)
    // asked for more than its original context rotates with its long factors.
    model_params.context = p.context;
    auto loaded = rt::Engine::load(p.model.model, model_params, engine_params);
    if (!loaded) {
      *error = "cannot load the model " + p.model.model + ": " + loaded.error().to_string() +
               " (fetch the default one with scripts/fetch-model.sh, or pass --model or --server)";
      return nullptr;
    }
    self->backend_ = std::make_unique<srv::EngineBackend>(std::move(loaded).value());
    srv::ServerParams params;
    params.bind = "inproc://kvframe-holdem";
    params.handler.default_context = p.context;
    params.handler.fidelity = p.fidelity;
    auto server = srv::Server::create(*self->backend_, params, self->log_);
    if (!server) {
      *error = "cannot start the in-process server: " + server.error().message;
      return nullptr;
    }
    self->server_ = std::move(server).value();
    self->thread_ = std::thread([s = self->server_.get()] { s->run(); });
    return self;
  }
  ~InProcessServer() override {
    if (!server_) return;  // start() failed
    server_->stop();
    thread_.join();
  }
  client::Client::Params client_params() override {
    client::Client::Params params(server_->endpoint());
    params.zmq_context = server_->zmq_context();
    params.request_timeout_ms = 0;  // a CPU decision on a long state may take long; the server is ours
    return params;
  }

 private:
  InProcessServer() : log_(srv::LogLevel::kWarn) {}
  srv::Log log_;
  std::unique_ptr<srv::EngineBackend> backend_;
  std::unique_ptr<srv::Server> server_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<LocalServer> start_local_server(const LocalServerParams& params, std::ostream& progress,
                                                std::string* error) {
  progress << "loading " << params.model.model << " into an in-process server (inproc://)...\n" << std::flush;
  return InProcessServer::start(params, error);
}

void tune_for_local_server(char** argv, int threads) { rt::tune_cpu_process(argv, threads); }

}  // namespace kvframe::examples::holdem
