#include "kvframe/common/exit_codes.h"

namespace kvframe {

int exit_code(ErrorCode code) {
  switch (code) {
    case ErrorCode::kDeviceUnavailable:
    case ErrorCode::kBackend:
    case ErrorCode::kContextFull:
    case ErrorCode::kServerBind: return kExitFailed;
    default: return kExitBadInput;
  }
}

}  // namespace kvframe
