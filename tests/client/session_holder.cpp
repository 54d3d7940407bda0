// A game that opens a session and then sends nothing, for the keepalive
// integration test (client_integration_test.cpp) to kill with SIGKILL: a
// client that vanished without closing anything. Prints "ready" once the
// session is open, then sleeps until it is killed.
//
//   client_session_holder ENDPOINT
#include <unistd.h>

#include <iostream>

#include "kvframe/client/kvframe_client.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: client_session_holder ENDPOINT\n";
    return 2;
  }
  kvframe::client::Client::Params params;
  params.endpoint = argv[1];
  params.client_name = "session_holder";
  auto failed = [](const kvframe::client::Status& status) {
    std::cerr << "session_holder: " << status.message() << "\n";
    return 1;
  };
  auto client = kvframe::client::Client::connect(params);
  if (!client) return failed(client.status());
  auto session = client->open_session({"holdem"});
  if (!session) return failed(session.status());
  std::cout << "ready" << std::endl;
  for (;;) pause();
}
