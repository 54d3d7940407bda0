// kvframe-holdem-client: no local server (and no libtorch); LLM seats need --server.
#include "holdem/simulator/local_server.h"

namespace kvframe::examples::holdem {

std::unique_ptr<LocalServer> start_local_server(const LocalServerParams&, std::ostream&, std::string* error) {
  *error = "kvframe-holdem-client has no model of its own: pass --server ENDPOINT (a running kvframe-serve), "
           "or use kvframe-holdem";
  return nullptr;
}

void tune_for_local_server(char**, int) {}

}  // namespace kvframe::examples::holdem
