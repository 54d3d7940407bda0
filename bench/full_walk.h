// A full ondemand walk: the cheapest way simdjson's ondemand API can read a
// whole frame, the other backend json_blocker could have been built on.
#pragma once

#include <simdjson.h>

#include <cstddef>

namespace kvframe::bench {

// Reads every value as a consumer of all of them must: numbers parsed,
// strings and keys unescaped. Adds to `checksum` so nothing is optimized
// away. Returns false on a parse error.
bool touch_every_value(simdjson::ondemand::value value, std::size_t& checksum);

}  // namespace kvframe::bench
