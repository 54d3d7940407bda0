// Delta frames: RFC 7386 JSON Merge Patch and RFC 6902 JSON Patch.
//
// simdjson only reads JSON, so patches are applied with nlohmann-json
// (ordered_json, so key order and therefore block order survive). Its writer
// prints numbers in shortest round-trip form: a frame sent as "1.50" and then
// patched comes back as "1.5", and blocks holding such numbers show as changed
// once. Games that write shortest-form numbers (most serializers do) never see it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kvframe/json_blocker/error.h"
#include "kvframe/json_blocker/rules.h"

namespace kvframe::json_blocker {

enum class PatchFormat {
  kMergePatch,  // RFC 7386: a partial document; null deletes a member
  kJsonPatch,   // RFC 6902: an array of add/remove/replace/move/copy/test ops
};

const char* patch_format_name(PatchFormat format);

// Applies patches to one evolving document. Keeps the parsed document between
// calls so a stream of patches parses the full frame only once.
class PatchedDocument {
 public:
  explicit PatchedDocument(Limits limits = {});
  ~PatchedDocument();
  PatchedDocument(PatchedDocument&&) noexcept;
  PatchedDocument& operator=(PatchedDocument&&) noexcept;

  // Replaces the document with a whole frame (parsed lazily, on the next patch).
  void reset(std::string json);
  const std::string& text() const;

  // Applies `patch` and returns the new whole document as minified JSON (a view
  // of text(), valid until the next call). On error the document is unchanged.
  Result<std::string_view> apply(std::string_view patch, PatchFormat format);
  // Returns to the document before the last successful apply(), for a caller
  // that rejects its result (e.g. the patched frame breaks a limit).
  void undo();

 private:
  Result<std::string_view> apply_checked(std::string_view patch, PatchFormat format);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot: apply `patch` to `document`.
Result<std::string> apply_patch(std::string_view document, std::string_view patch,
                                PatchFormat format, const Limits& limits = {});

}  // namespace kvframe::json_blocker
