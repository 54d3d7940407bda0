// kvframe's server: a ZeroMQ ROUTER socket in front of a Backend.
//
//   Log log(LogLevel::kInfo);
//   auto server = Server::create(backend, params, log);
//   if (!server) { ... server.error().message ... }
//   std::thread t([&] { (*server)->run(); });   // or run() on this thread
//   ... (*server)->endpoint() ...               // "tcp://127.0.0.1:40123" when bound to port 0
//   (*server)->stop();                          // from any thread or a signal handler
//
// Threads: run()'s thread does all socket I/O (the ROUTER, the ZAP handler,
// replies forwarded from the engine); one engine thread runs the requests
// (sessions are not thread-safe). Clients are DEALERs; each ZeroMQ message is
// one frame holding one protocol Message.
//
// Size limits: a message above HandlerParams.limits.max_message_bytes (the
// soft limit) is answered Error{TooLarge} naming its request; one above
// twice that (the hard limit, ZMQ_MAXMSGSIZE) makes ZeroMQ drop the sender's
// connection without reading it — the server itself keeps serving.
//
// Principals (handler.h, Peer): with CURVE, the client's public key as the
// handshake authenticated it (a ZAP handler is always installed, and names
// each connection by its key); without, the connection's routing id. Without
// CURVE on a loopback endpoint every client is an operator: that server is
// one trusted tenant (docs/protocol.md, "Threat model").
//
// Clients that go away: ZMQ_ROUTER_MANDATORY and non-blocking sends make a
// reply to a vanished (or not reading) client fail at once; it is counted
// in Stats.undeliverable and dropped. The socket lingers 0 while serving and
// 250 ms on the way out, so the last replies reach clients still connected.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/server_core/handler.h"

namespace kvframe::server {

struct CurveParams {
  std::string secret_key;                    // Z85; empty: no encryption
  std::vector<std::string> allowed_clients;  // Z85 public keys; empty: anyone with the server's public key
  std::vector<std::string> operators;        // Z85 public keys that read the whole server's Stats
};

struct ServerParams {
  std::string bind = "tcp://127.0.0.1:5555";
  HandlerParams handler;
  CurveParams curve;
  bool insecure_public = false;  // serve a non-loopback address without CURVE
  int high_water_mark = 10000;   // messages queued per connection, each way
  // How long stop() waits for a running query before run() gives up on it.
  std::chrono::milliseconds shutdown_grace{1500};
};

// tcp:// to 127.x, localhost or ::1, ipc:// and inproc:// are local.
bool is_loopback_endpoint(std::string_view endpoint);

class Server {
 public:
  // kServerConfig (keys, socket options) or kServerBind; the message says what to do next.
  static Result<std::unique_ptr<Server>> create(Backend& backend, ServerParams params, Log& log);
  ~Server();  // waits for a running request
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The bound endpoint, port 0 resolved.
  const std::string& endpoint() const;
  // The ZeroMQ context (a libzmq handle) the server's sockets live in. A
  // client in the same process passes it as kvf_client_params.zmq_context to
  // reach an inproc:// endpoint; it lives as long as the Server.
  void* zmq_context();
  // Serves until stop(). Then answers what is queued with ShuttingDown and
  // waits up to shutdown_grace for the running request. true when it
  // finished; false when it was abandoned, still running: the process should
  // then exit at once (std::_Exit) rather than destroy the server.
  bool run();
  // Thread-safe and async-signal-safe (sets a flag run() polls).
  void stop() { stop_requested_.store(true); }
  RequestHandler& handler();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace kvframe::server
