// kvframe's one error list (common/error.h) and its one map onto the wire
// (protocol/wire_code.h): every code is named and explained, names are
// unique, every code reaches a client as a code the server sends, and every
// wire code is either such a code's image or one the protocol raises itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "kvframe/protocol/protocol.h"
#include "kvframe/protocol/wire_code.h"

namespace kvframe::protocol {
namespace {

TEST(ErrorCodes, EveryCodeHasOneNameAndAMeaning) {
  std::set<std::string> names;
  for (ErrorCode code : kAllErrorCodes) {
    const std::string name = error_code_name(code);
    EXPECT_NE(name, "unknown") << static_cast<int>(code);
    EXPECT_TRUE(names.insert(name).second) << name << " names two codes";
    EXPECT_GT(std::string(error_message(code)).size(), 10u) << name;
  }
  EXPECT_EQ(Error({ErrorCode::kTruncated, "tensor x"}).to_string(), "truncated: tensor x");
  EXPECT_STREQ(error_code_name(ErrorCode::kSchemaNotJson), "schema_not_json");
}

TEST(ErrorCodes, EveryCodeHasTheWiresCode) {
  for (ErrorCode code : kAllErrorCodes) {
    const fb::ErrorCode wire = wire_code(code);
    EXPECT_NE(wire, fb::ErrorCode::None) << error_code_name(code);
    EXPECT_NE(wire, fb::ErrorCode::Internal) << error_code_name(code) << " has no wire code";
    // Timeout and Disconnected are the client's own.
    EXPECT_LT(static_cast<int>(wire), static_cast<int>(fb::ErrorCode::Timeout)) << error_code_name(code);
  }
  EXPECT_EQ(wire_code(ErrorCode::kSchemaUnsupported), fb::ErrorCode::BadRequest);
  EXPECT_EQ(wire_code(ErrorCode::kContextFull), fb::ErrorCode::ContextFull);
  EXPECT_EQ(wire_code(ErrorCode::kCorrupt), fb::ErrorCode::Engine);
  EXPECT_EQ(wire_code(ErrorCode::kDuplicateKey), fb::ErrorCode::BadJson);
  EXPECT_EQ(wire_code(ErrorCode::kNoPreviousFrame), fb::ErrorCode::OutOfOrder);
}

// The wire codes no library error maps to: the server's door, scheduler and
// quotas, and the native client, raise them about the conversation itself.
// A wire code added to protocol/kvframe.fbs belongs here or in wire_code.
const std::set<fb::ErrorCode> kProtocolOwn = {
    fb::ErrorCode::None,          fb::ErrorCode::Malformed,     fb::ErrorCode::TooLarge,
    fb::ErrorCode::WrongVersion,  fb::ErrorCode::UnknownSession, fb::ErrorCode::Deadline,
    fb::ErrorCode::Busy,          fb::ErrorCode::ShuttingDown,  fb::ErrorCode::Internal,
    fb::ErrorCode::QuotaExceeded, fb::ErrorCode::StaleBase,     fb::ErrorCode::UnknownAdapter,
    fb::ErrorCode::Timeout,       fb::ErrorCode::Disconnected,
};

TEST(ErrorCodes, EveryWireCodeHasAMeaning) {
  std::set<fb::ErrorCode> mapped;
  for (ErrorCode code : kAllErrorCodes) mapped.insert(wire_code(code));
  for (fb::ErrorCode wire : fb::EnumValuesErrorCode()) {
    const bool library = mapped.count(wire) > 0;
    const bool own = kProtocolOwn.count(wire) > 0;
    EXPECT_TRUE(library || own) << error_code_name(wire) << ": no library error maps to it and the protocol "
                                << "does not raise it itself";
    EXPECT_FALSE(library && own) << error_code_name(wire) << " is listed as the protocol's own but is mapped";
    EXPECT_STRNE(error_code_name(wire), "Unknown");
  }
}

}  // namespace
}  // namespace kvframe::protocol
