// Bytes from the operating system's CSPRNG, for what must not be guessed:
// session ids, a client's routing id (its identity on a server without
// CURVE). A seeded std:: engine is not enough: a few hundred outputs give
// its whole state away (std::mt19937_64 is linear).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

#if defined(__linux__)
#include <sys/random.h>

#include <cerrno>
#endif

namespace kvframe::common {

// Fills out with n random bytes. Blocks only while the kernel's pool is
// uninitialised (early boot).
inline void secure_random(void* out, std::size_t n) {
  auto* bytes = static_cast<unsigned char*>(out);
#if defined(__linux__)
  while (n > 0) {
    const ssize_t got = getrandom(bytes, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      break;  // ENOSYS on kernels before 3.17: std::random_device below
    }
    bytes += got;
    n -= static_cast<std::size_t>(got);
  }
  if (n == 0) return;
#endif
  // MSVC's and libc++'s random_device read the OS CSPRNG (rand_s,
  // arc4random); libstdc++'s reads /dev/urandom or RDRAND.
  std::random_device device;
  for (; n > 0; --n) *bytes++ = static_cast<unsigned char>(device());
}

inline uint64_t secure_random_u64() {
  uint64_t value = 0;
  secure_random(&value, sizeof value);
  return value;
}

}  // namespace kvframe::common
