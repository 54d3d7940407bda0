// The replay page: the template (replay/replay_template.html, embedded at
// configure time as kReplayTemplate) with the record substituted for its
// placeholder inside <script id="record" type="application/json">.
#include "holdem/replay_html.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace kvframe::examples::holdem {

extern const char* const kReplayTemplate;  // generated: replay_template.cpp

namespace {

// The marker in the template that the record replaces (it appears exactly
// once, as the whole content of the record's <script> element).
constexpr const char* kRecordMarker = "__KVFRAME_REPLAY_RECORD__";

// JSON text made safe inside a <script> element: "</" becomes "<\/" (so no
// "</script" can end the element) and "<!--" becomes "\u003c!--" (so no
// comment opener puts the element in its "escaped" state). In valid JSON a
// "<" occurs only inside strings, where both are escapes that JSON.parse
// decodes back to the original text.
std::string escape_for_script(const std::string& json) {
  std::string out;
  out.reserve(json.size() + 16);
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else if (c == '<' && json.compare(i, 4, "<!--") == 0) {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string replay_html(const std::string& record_json) {
  const std::string page = kReplayTemplate;
  const std::size_t at = page.find(kRecordMarker);
  if (at == std::string::npos) {
    throw std::logic_error("replay template: no record placeholder");
  }
  std::string out;
  out.reserve(page.size() + record_json.size() + 64);
  out.append(page, 0, at);
  out += escape_for_script(record_json);
  out.append(page, at + std::strlen(kRecordMarker), std::string::npos);
  return out;
}

void write_replay_html(const std::string& path, const std::string& record_json) {
  const std::string page = replay_html(record_json);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error("cannot write replay page: " + path);
  file.write(page.data(), static_cast<std::streamsize>(page.size()));
  file.close();
  if (!file) throw std::runtime_error("cannot write replay page: " + path);
}

}  // namespace kvframe::examples::holdem
