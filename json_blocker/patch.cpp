#include "kvframe/json_blocker/patch.h"

#include <simdjson.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "kvframe/json_blocker/partition.h"

namespace kvframe::json_blocker {

using Json = nlohmann::ordered_json;

const char* patch_format_name(PatchFormat format) {
  return format == PatchFormat::kMergePatch ? "merge-patch" : "json-patch";
}

namespace {

// Byte offset of element `index` of the JSON array `json`, for pointing at the
// JSON Patch operation that failed (nlohmann only says which path).
std::size_t element_offset(std::string_view json, std::size_t index) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc;
  simdjson::ondemand::array array;
  if (parser.iterate(padded).get(doc) || doc.get_array().get(array)) return 0;
  std::size_t i = 0;
  for (auto element : array) {
    simdjson::ondemand::value value;
    if (element.get(value)) return 0;
    if (i++ == index) return static_cast<std::size_t>(value.raw_json_token().data() - padded.data());
  }
  return 0;
}

Error patch_exception(const nlohmann::json::exception& e, std::size_t offset) {
  // nlohmann ids: 4xx out_of_range = a path that is not there; 501 = failed "test".
  ErrorCode code = ErrorCode::kPatchInvalid;
  std::string hint = "; a JSON Patch is an array of {\"op\",\"path\",...} objects (RFC 6902)";
  if (dynamic_cast<const nlohmann::json::out_of_range*>(&e) != nullptr) {
    code = ErrorCode::kPatchPathMissing;
    hint = "; the patch was made against a different frame than the server holds — resend the "
           "whole frame";
  } else if (e.id == 501) {
    code = ErrorCode::kPatchTestFailed;
    hint = "; the frame is not in the state the patch expects — resend the whole frame";
  }
  return Error{code, offset, std::string("patch operation failed: ") + e.what() + hint};
}

Rules rules_with(const Limits& limits) {
  Rules rules;
  rules.limits = limits;
  return rules;
}

}  // namespace

struct PatchedDocument::Impl {
  explicit Impl(const Limits& limits) : validator(rules_with(limits)) {}

  // The whole document as JSON, parsed lazily: a stream of whole frames never
  // pays for it, a stream of patches pays once.
  Json& parsed() {
    if (!doc) doc = Json::parse(text);
    return *doc;
  }

  Partitioner validator;
  std::string text, previous_text;
  std::optional<Json> doc;
};

PatchedDocument::PatchedDocument(Limits limits) : impl_(std::make_unique<Impl>(limits)) {}
PatchedDocument::~PatchedDocument() = default;
PatchedDocument::PatchedDocument(PatchedDocument&&) noexcept = default;
PatchedDocument& PatchedDocument::operator=(PatchedDocument&&) noexcept = default;

void PatchedDocument::reset(std::string json) {
  impl_->text = std::move(json);
  impl_->doc.reset();
}

const std::string& PatchedDocument::text() const { return impl_->text; }

void PatchedDocument::undo() {
  std::swap(impl_->text, impl_->previous_text);
  impl_->doc.reset();
}

Result<std::string_view> PatchedDocument::apply(std::string_view patch, PatchFormat format) {
  if (impl_->text.empty()) {
    return Error{ErrorCode::kNoPreviousFrame, 0,
                 "a patch arrived before any whole frame; send the whole frame first"};
  }
  // The patch is untrusted bytes: check it with the same limits as a frame
  // (UTF-8, syntax, depth, size, duplicate keys) before nlohmann sees it.
  if (auto checked = impl_->validator.validate(patch); !checked) {
    const Error& e = checked.error();
    return Error{ErrorCode::kPatchInvalid, e.offset, "patch: " + e.message};
  }
  try {
    return apply_checked(patch, format);
  } catch (const nlohmann::json::exception& e) {
    // Only reachable for inputs simdjson accepts and nlohmann does not.
    impl_->doc.reset();
    return Error{ErrorCode::kPatchInvalid, 0, std::string("patch: ") + e.what()};
  }
}

Result<std::string_view> PatchedDocument::apply_checked(std::string_view patch, PatchFormat format) {
  Json& doc = impl_->parsed();
  const Json ops = Json::parse(patch);
  if (format == PatchFormat::kMergePatch) {
    doc.merge_patch(ops);  // cannot fail
  } else {
    if (!ops.is_array()) {
      return Error{ErrorCode::kPatchInvalid, 0,
                   "a JSON Patch must be an array of operations (RFC 6902); for a partial "
                   "document use merge-patch (RFC 7386)"};
    }
    // One operation at a time, so a failure can name the operation. A failed
    // patch leaves `doc` half-applied: drop it and re-parse the text next time.
    for (std::size_t i = 0; i < ops.size(); ++i) {
      try {
        doc.patch_inplace(Json::array({ops[i]}));
      } catch (const nlohmann::json::exception& e) {
        impl_->doc.reset();
        return patch_exception(e, element_offset(patch, i));
      }
    }
  }
  std::swap(impl_->previous_text, impl_->text);
  impl_->text = doc.dump();
  return std::string_view(impl_->text);
}

Result<std::string> apply_patch(std::string_view document, std::string_view patch,
                                PatchFormat format, const Limits& limits) {
  PatchedDocument doc(limits);
  Partitioner validator(rules_with(limits));
  if (auto checked = validator.validate(document); !checked) return checked.error();
  doc.reset(std::string(document));
  auto applied = doc.apply(patch, format);
  if (!applied) return applied.error();
  return std::string(applied.value());
}

}  // namespace kvframe::json_blocker
