// Replies kept in the order they were sent, for tests and the fuzz target.
#pragma once

#include <string>
#include <vector>

#include "kvframe/server_core/handler.h"
#include "messages.h"

namespace kvframe::server::test {

struct Reply {
  std::string route;
  std::string bytes;
  const fb::Message* message() const { return read_reply(bytes); }
};

class CollectedReplies : public ReplySink {
 public:
  void send(const std::string& route, flatbuffers::DetachedBuffer message) override {
    all.push_back({route, std::string(reinterpret_cast<const char*>(message.data()), message.size())});
  }
  std::vector<Reply> all;
};

}  // namespace kvframe::server::test
