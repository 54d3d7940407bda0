// Socket: an owned ZeroMQ socket made in a context given as a raw handle.
//
// cppzmq makes sockets only from its own zmq::context_t, but a client that
// shares the context of a server in the same process (kvf_client_params.
// zmq_context, for inproc://) has only the libzmq handle. This is
// zmq::socket_t's ownership (close on destruction, move-only) over
// cppzmq's socket_base, which gives the same send/recv/set API.
#pragma once

#include <utility>
#include <zmq.hpp>

namespace kvframe::client {

class Socket : public zmq::detail::socket_base {
 public:
  Socket(void* context, zmq::socket_type type) : socket_base(zmq_socket(context, static_cast<int>(type))) {
    if (handle() == nullptr) throw zmq::error_t();
  }
  ~Socket() {
    if (handle() != nullptr) zmq_close(handle());
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
};

}  // namespace kvframe::client
