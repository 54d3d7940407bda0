// kvf_*_default_params(), declared by the 0.3 and 0.4 headers and kept for
// the programs built against them until the soname next changes (they are
// not in the header: new code uses kvf_*_params_init). They return by value,
// into a slot the caller sized by its own header, which the library cannot
// learn; so they are frozen at 0.3's layout, the smallest any caller has:
// nothing is written past a 0.3 caller's struct, and struct_size says 0.3,
// so no field 0.3 lacked is read.
#include <cstring>

#include "param_defaults.h"
#include "sized_struct.h"

namespace {

using kvframe::client::kFirstSize;

// A params struct's first bytes, as many as 0.3 had. Each is over 16 bytes,
// so every ABI built for returns it as it returned the 0.3 struct: in memory
// the caller provides, whatever the fields.
template <class T>
struct Frozen {
  unsigned char bytes[kFirstSize<T>];
};
static_assert(sizeof(Frozen<kvf_client_params>) > 16 && sizeof(Frozen<kvf_session_params>) > 16 &&
                  sizeof(Frozen<kvf_query_params>) > 16,
              "returned in registers, not as the 0.3 struct was");

template <class T>
Frozen<T> frozen(T defaults) {
  Frozen<T> out;
  defaults.struct_size = sizeof out.bytes;
  std::memcpy(out.bytes, &defaults, sizeof out.bytes);
  return out;
}

}  // namespace

extern "C" {

KVF_API Frozen<kvf_client_params> kvf_client_default_params(void) {
  return frozen(kvframe::client::client_defaults());
}

KVF_API Frozen<kvf_session_params> kvf_session_default_params(void) {
  return frozen(kvframe::client::session_defaults());
}

KVF_API Frozen<kvf_query_params> kvf_query_default_params(void) {
  return frozen(kvframe::client::query_defaults());
}

}  // extern "C"
