// A real kvframe-serve process for integration tests: started on a loopback
// port the OS picks, on a tiny random-weight model the test support writes,
// stopped by signal. Its stderr (logfmt lines) is captured for diagnostics.
// The server dies with the thread that started it (PR_SET_PDEATHSIG), so a
// test program killed mid-run leaves no server behind: start it from a thread
// that outlives it (the test's own).
//
//   auto server = test::ServerProcess::start({});
//   ASSERT_TRUE(server) << test::ServerProcess::last_start_error();
//   connect(server->endpoint());   // "tcp://127.0.0.1:40123"
//   server->stop();                // SIGTERM, waits; returns the exit status
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace kvframe::test {

struct ServerProcessOptions {
  std::string model_path;               // empty: tiny_model_file()
  std::string bind = "tcp://127.0.0.1:0";  // port 0: the OS picks; endpoint() tells which
  std::vector<std::string> extra_args;  // e.g. {"--mode", "full", "--max-message-mb", "1"}
  int start_timeout_ms = 60000;         // until the "listening" log line
};

class ServerProcess {
 public:
  // Starts kvframe-serve and waits for its listening line. nullptr on failure
  // (last_start_error() has the reason and the process's output).
  static std::unique_ptr<ServerProcess> start(const ServerProcessOptions& options);
  static std::string last_start_error();

  ~ServerProcess();  // SIGKILL if still running
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const std::string& endpoint() const;  // the bound endpoint, port resolved
  pid_t pid() const;
  bool running();
  // Sends `signal` and waits up to timeout_ms for the exit; returns the exit
  // code (128 + signal number when killed by one, -1 on timeout).
  int stop(int signal = 15 /* SIGTERM */, int timeout_ms = 10000);
  void kill();             // SIGKILL and reap
  std::string log() const; // stderr so far

 private:
  struct Impl;
  explicit ServerProcess(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The kvframe-serve binary: $KVFRAME_SERVE if set, else the one this build made.
std::string kvframe_serve_path();
// A tiny random-weight GGUF model (tests/support/tiny_model.h), written once
// per process into a temporary directory.
std::string tiny_model_file();

}  // namespace kvframe::test
