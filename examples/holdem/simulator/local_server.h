// kvframe-holdem's kvframe server in its own process, for matches played
// without --server. Two builds of the program link one side each:
// kvframe-holdem links local_server.cpp (the engine, and with it libtorch),
// kvframe-holdem-client links no_local_server.cpp and plays against --server
// only: without libtorch it starts in milliseconds and a few MiB, so one host
// can run a hundred matches against a server (bench/bench_serving.py).
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "kvframe/cli_options/model_options.h"
#include "kvframe/client/kvframe_client.hpp"
#include "kvframe/common/block_fidelity.h"

namespace kvframe::examples::holdem {

struct LocalServerParams {
  cli::ModelOptions model;       // --model, --dtype, --threads, --lora
  std::uint32_t context = 8192;  // the sessions' and the model's (ModelParams::context)
  common::BlockFidelity fidelity;
};

class LocalServer {
 public:
  virtual ~LocalServer() = default;
  // Where the players' client connects (the server's inproc:// endpoint and its ZeroMQ context).
  virtual client::Client::Params client_params() = 0;
};

// The server, loaded and running (saying so on `progress` first); nullptr with
// the reason in `error` when the model cannot be loaded, or when this build
// has no local server.
std::unique_ptr<LocalServer> start_local_server(const LocalServerParams& params, std::ostream& progress,
                                                std::string* error);

// Fits this process's CPU threads to the local server's model (runtime::tune_cpu_process),
// before anything starts a thread; nothing in a build without one.
void tune_for_local_server(char** argv, int threads);

}  // namespace kvframe::examples::holdem
