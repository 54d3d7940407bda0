// CURVE keys for kvframe-serve: Z85 text files (40 characters), one key per
// file for the server's secret, one per line for the allowed clients' public
// keys. A line starting with '#' is a comment (no key starts with '#', the
// largest Z85 digit). Nothing is thrown; errors say which file and why.
#pragma once

#include <string>
#include <vector>

#include "kvframe/common/result.h"

namespace kvframe::server {

struct KeyError {
  std::string message;  // names the file and says what is wrong
};
template <class T>
using KeyResult = common::Result<T, KeyError>;

struct CurveKeyPair {
  std::string public_key, secret_key;  // Z85
};

bool curve_available();  // libzmq was built with CURVE (libsodium)
KeyResult<CurveKeyPair> generate_key_pair();
// Writes PREFIX.key (secret, mode 0600) and PREFIX.pub (public).
KeyResult<CurveKeyPair> write_key_pair(const std::string& prefix);
KeyResult<std::string> read_secret_key(const std::string& path);
KeyResult<std::vector<std::string>> read_allowed_keys(const std::string& path);
KeyResult<std::string> public_key_of(const std::string& secret_key);
// The 32 bytes a Z85 key stands for (what ZAP hands the server).
KeyResult<std::string> key_bytes(const std::string& z85);

}  // namespace kvframe::server
