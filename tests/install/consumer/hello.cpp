// The smallest real exchange through an installed libkvframe_client, in C++
// (the header-only wrapper kvframe_client.hpp): connect, open a session, send
// one frame and wait for its ack, ask about it. Built by
// tests/install/run_install_test.sh with find_package(kvframe).
//
//   hello_cpp ENDPOINT    exit 0: the frame was acked with blocks, the question answered
#include <kvframe/client/kvframe_client.hpp>

#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <optional>

namespace kc = kvframe::client;

namespace {

int fail(const char* what, const kc::Status& status) {
  std::cerr << "hello_cpp: " << what << " failed: " << kvf_status_name(status.code()) << " (" << status.message()
            << ")\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: hello_cpp ENDPOINT\n";
    return 2;
  }
  kc::Client::Params params(argv[1]);
  params.client_name = "hello_cpp";
  params.connect_timeout_ms = 30000;
  params.request_timeout_ms = 120000;
  auto client = kc::Client::connect(params);
  if (!client) return fail("connect", client.status());
  auto info = client->server_info();
  if (!info) return fail("server_info", info.status());
  std::cout << "hello_cpp: server " << info->server_version << ", model " << info->model << "\n";

  auto session = client->open_session({"install-check"});
  if (!session) return fail("open_session", session.status());

  // The ack comes on the client's thread: hand it over through a promise.
  auto acked = std::make_shared<std::promise<std::optional<kvf_frame_ack>>>();
  auto ack = acked->get_future();
  kc::Status sent = session->send_frame(1, KVF_FRAME_WHOLE, R"({"npc":{"name":"Bram","hp":3},"wolf":{"hp":9}})",
                                        [acked](const kc::Event& e) {
                                          if (e.type() == KVF_EVENT_ERROR) std::cerr << "hello_cpp: " << e.text() << "\n";
                                          acked->set_value(e.frame_ack());
                                        });
  if (!sent) return fail("send_frame", sent);
  if (ack.wait_for(std::chrono::seconds(120)) != std::future_status::ready) return fail("frame ack", {KVF_ERR_TIMEOUT, "none in 120 s"});
  const std::optional<kvf_frame_ack> counts = ack.get();
  if (!counts || counts->blocks_total == 0) return fail("frame ack", {KVF_ERR_INTERNAL, "no ack, or no blocks"});
  std::cout << "hello_cpp: frame 1 acked, " << counts->blocks_total << " blocks\n";

  kc::QueryParams question("What does Bram do?");
  question.max_tokens = 4;
  std::future<kc::Answer> answer = session->ask(question);
  if (answer.wait_for(std::chrono::seconds(120)) != std::future_status::ready) return fail("ask", {KVF_ERR_TIMEOUT, "no answer in 120 s"});
  const kc::Answer got = answer.get();
  if (!got.status) return fail("ask", got.status);
  std::cout << "hello_cpp: answered \"" << got.text << "\"\n";
  return 0;
}
