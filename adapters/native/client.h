// The client behind the C API: validates calls, copies their data into
// requests and hands them to the background thread (Link); blocking calls
// wait for their reply there.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "link.h"

namespace kvframe::client {

class Client {
 public:
  // Connects and, unless params.connect_timeout_ms is 0, waits for the HelloReply.
  static Status connect(const kvf_client_params& params, std::unique_ptr<Client>* out);
  ~Client();  // closes: see kvf_client_close
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Status server_info(kvf_server_info* out);
  Status open_session(const kvf_session_params& params, kvf_session* out);
  Status close_session(kvf_session session);
  Status send_frame(kvf_session session, uint64_t frame_number, kvf_frame_format format, std::string_view json,
                    kvf_callback callback, void* user, uint64_t* request_id);
  Status query(kvf_session session, const kvf_query_params& params, kvf_callback callback, void* user,
               uint64_t* request_id);
  std::unique_ptr<kvf_event> poll(int32_t timeout_ms);
  Status stats_json(std::string* out);

  // True on the background thread, i.e. inside a callback, where blocking
  // calls and closing the client would wait for themselves.
  bool on_background_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  explicit Client(const kvf_client_params& params);
  Status wait_for_hello(int32_t timeout_ms);
  Status check_session(kvf_session session);
  Status check_size(const RequestSpec& spec, const char* what);
  Status submit(kvf_session session, RequestSpec spec, Delivery delivery, uint64_t* request_id);
  BlockingReply submit_and_wait(kvf_session session, RequestSpec spec);

  const std::string endpoint_;
  const int32_t request_timeout_ms_;
  std::atomic<kvf_session> next_session_{1};
  // Destroyed in reverse: the sockets (in link_ and shared_) before their
  // context. own_context_ is empty when the caller lent one (context_).
  std::optional<zmq::context_t> own_context_;
  void* context_;
  Shared shared_;
  std::unique_ptr<Link> link_;
  std::thread thread_;
};

}  // namespace kvframe::client
