#include "kvframe/server_core/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <zmq.h>

namespace kvframe::server {

namespace {

constexpr std::size_t kZ85KeyLength = 40;

std::string trimmed(const std::string& line) {
  const std::size_t begin = line.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  return line.substr(begin, line.find_last_not_of(" \t\r\n") - begin + 1);
}

// The file's keys: non-empty lines that are not '#' comments, each checked.
// '#' is also a Z85 digit, but the largest (84): a 5-digit group starting
// with it exceeds 2^32, so no key starts with '#' and a line that does is a
// comment.
KeyResult<std::vector<std::string>> read_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) return KeyError{"cannot read " + path + ": " + std::strerror(errno)};
  std::vector<std::string> keys;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string key = trimmed(line);
    if (key.empty() || key[0] == '#') continue;
    if (!key_bytes(key).ok()) {
      return KeyError{path + ":" + std::to_string(number) +
                      ": not a Z85 CURVE key (40 characters; kvframe-serve --gen-keys writes them)"};
    }
    keys.push_back(key);
  }
  return keys;
}

KeyResult<bool> write_file(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return KeyError{"cannot write " + path + ": " + std::strerror(errno)};
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  // The mode of an existing file is not changed by open(): the secret must not stay readable.
  const bool protected_ = ::fchmod(fd, mode) == 0;
  ::close(fd);
  if (!written || !protected_) return KeyError{"cannot write " + path + ": " + std::strerror(errno)};
  return true;
}

}  // namespace

bool curve_available() { return zmq_has("curve") != 0; }

KeyResult<CurveKeyPair> generate_key_pair() {
  char public_key[kZ85KeyLength + 1], secret_key[kZ85KeyLength + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    return KeyError{std::string("zmq_curve_keypair failed: ") + zmq_strerror(zmq_errno()) +
                    " (libzmq without libsodium?)"};
  }
  return CurveKeyPair{public_key, secret_key};
}

KeyResult<CurveKeyPair> write_key_pair(const std::string& prefix) {
  auto pair = generate_key_pair();
  if (!pair) return pair.error();
  auto secret = write_file(prefix + ".key", "# kvframe-serve CURVE secret key: keep private\n" + pair->secret_key + "\n", 0600);
  if (!secret) return secret.error();
  auto pub = write_file(prefix + ".pub", pair->public_key + "\n", 0644);
  if (!pub) return pub.error();
  return pair;
}

KeyResult<std::string> read_secret_key(const std::string& path) {
  auto keys = read_keys(path);
  if (!keys) return keys.error();
  if (keys->size() != 1) {
    return KeyError{path + ": expected exactly one Z85 secret key, found " + std::to_string(keys->size())};
  }
  return keys->front();
}

KeyResult<std::vector<std::string>> read_allowed_keys(const std::string& path) {
  auto keys = read_keys(path);
  if (keys && keys->empty()) return KeyError{path + ": no client keys (one Z85 public key per line)"};
  return keys;
}

KeyResult<std::string> public_key_of(const std::string& secret_key) {
  char public_key[kZ85KeyLength + 1];
  if (secret_key.size() != kZ85KeyLength || zmq_curve_public(public_key, secret_key.c_str()) != 0) {
    return KeyError{"not a Z85 CURVE secret key"};
  }
  return std::string(public_key);
}

KeyResult<std::string> key_bytes(const std::string& z85) {
  uint8_t bytes[32];
  if (z85.size() != kZ85KeyLength || zmq_z85_decode(bytes, z85.c_str()) == nullptr) {
    return KeyError{"not a Z85 key of 40 characters"};
  }
  return std::string(reinterpret_cast<const char*>(bytes), sizeof bytes);
}

}  // namespace kvframe::server
