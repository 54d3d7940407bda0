// What the server's memory goes to, for Stats and the log: the weights, the
// sessions' KV and the block store as the server counts them, and the rest
// of what the process holds resident, read from the kernel.
#pragma once

#include <cstdint>
#include <string>

namespace kvframe::server {

// The process's resident memory (/proc/self/status): all of it, and the part
// that is anonymous, i.e. not pages of mapped files (the GGUF's blocks the
// CPU reads in place are file pages).
struct ResidentMemory {
  uint64_t total_bytes = 0;
  uint64_t anonymous_bytes = 0;
};
ResidentMemory resident_memory();
// Reads VmRSS and RssAnon from a /proc/<pid>/status text; a field it lacks is 0.
ResidentMemory parse_resident_memory(const std::string& status_text);

struct MemoryUse {
  uint64_t weights = 0;     // the file's blocks read in place and dense tensors
  uint64_t session_kv = 0;  // the most KV the open sessions may come to hold
  uint64_t store = 0;       // the block store's encoded blocks
  uint64_t resident = 0;    // the whole process, resident now
  // Resident anonymous memory that is neither dense weights, nor sessions'
  // KV, nor the store: activations and the kernels' scratch the allocator
  // keeps between passes, and the runtime's own (tokenizer, libraries).
  uint64_t scratch = 0;
};
// The scratch left once the counted parts are taken from the anonymous memory.
uint64_t scratch_bytes(const ResidentMemory& resident, uint64_t dense_weights, uint64_t session_kv, uint64_t store);

}  // namespace kvframe::server
