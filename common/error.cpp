#include "kvframe/common/error.h"

#include <iterator>

namespace kvframe {

namespace {

struct Described {
  const char* name;
  const char* meaning;
};

// Indexed by the code: the list declares both in the same order.
constexpr Described kDescribed[] = {
#define KVFRAME_ERROR_DESCRIBED(code, name, meaning) {name, meaning},
    KVFRAME_ERROR_CODES(KVFRAME_ERROR_DESCRIBED)
#undef KVFRAME_ERROR_DESCRIBED
};
static_assert(std::size(kDescribed) == std::size(kAllErrorCodes));

const Described* described(ErrorCode code) {
  const auto i = static_cast<std::size_t>(code);
  return i < std::size(kDescribed) ? &kDescribed[i] : nullptr;
}

}  // namespace

const char* error_code_name(ErrorCode code) {
  const Described* d = described(code);
  return d ? d->name : "unknown";
}

const char* error_message(ErrorCode code) {
  const Described* d = described(code);
  return d ? d->meaning : "an error code kvframe does not define";
}

std::string Error::to_string() const {
  return std::string(error_code_name(code)) + ": " + message;
}

}  // namespace kvframe
