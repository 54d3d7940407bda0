// The parsed action of a Result (kvf_event_action, kvf_value_*): the
// protocol's FlexBuffers bytes kept by the event, and kvf_value, a
// flexbuffers::Reference carried in the C struct's private fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "kvframe/client/kvframe_client.h"
#include "request.h"

namespace kvframe::client {

// What an event keeps of Result.action (already verified by
// protocol::decode): the bytes and one NUL after them; empty when there is
// none. The NUL bounds every key read: the FlexBuffers verifier of Debian's
// flatbuffers (2.0.8) accepts a map key whose terminator is missing.
std::vector<uint8_t> stored_action(const flatbuffers::Vector<uint8_t>* action);

// The root of what stored_action() kept.
Status action_root(const std::vector<uint8_t>& stored, kvf_value* out);

kvf_value_type value_type(const kvf_value& value);
Status value_get(const kvf_value& value, std::string_view path, kvf_value* out);
Status value_as_bool(const kvf_value& value, bool* out);
Status value_as_int(const kvf_value& value, int64_t* out);
Status value_as_double(const kvf_value& value, double* out);
Status value_as_string(const kvf_value& value, std::string_view* out);
std::size_t value_size(const kvf_value& value);
Status value_at(const kvf_value& value, std::size_t index, kvf_value* out);
Status value_key_at(const kvf_value& value, std::size_t index, std::string_view* out);

}  // namespace kvframe::client
