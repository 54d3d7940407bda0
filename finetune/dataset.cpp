// Training examples: JSONL records (see dataset.h) and their token ids.
#include "kvframe/finetune/dataset.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

namespace kvframe::finetune {
namespace {

namespace fs = std::filesystem;
// Ordered: a frame keeps the keys' order the game wrote, which is the order
// a session reads its blocks in (a std::map would sort them, and train and
// evaluate on documents no game streams).
using json = nlohmann::ordered_json;

Error bad_record(const std::string& where, const std::string& why) {
  return {ErrorCode::kInvalidArgument, where + ": " + why + " (docs/finetune.md describes the records)"};
}

// An optional string field; empty, and `status` set to an error, when present but not a string.
std::string string_field(const json& record, const char* key, const std::string& where, Status& status) {
  auto it = record.find(key);
  if (it == record.end() || it->is_null()) return {};
  if (!it->is_string()) {
    status = bad_record(where, std::string("\"") + key + "\" must be a string");
    return {};
  }
  return it->get<std::string>();
}

}  // namespace

Result<std::vector<Example>> read_examples(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{ErrorCode::kIo, "cannot read " + path + ": check the path"};
  const fs::path folder = fs::path(path).parent_path();
  std::map<std::string, std::shared_ptr<const json_blocker::Rules>> rules_by_path;
  auto rules_at = [&](const std::string& name, bool required, const std::string& where)
      -> Result<std::shared_ptr<const json_blocker::Rules>> {
    const std::string full = (folder / name).string();
    if (auto found = rules_by_path.find(full); found != rules_by_path.end()) return found->second;
    std::shared_ptr<const json_blocker::Rules> rules = std::make_shared<json_blocker::Rules>();
    if (required || fs::exists(full)) {
      auto loaded = json_blocker::load_rules(full);
      if (!loaded) return bad_record(where, "rules " + full + ": " + loaded.error().to_string());
      rules = std::make_shared<json_blocker::Rules>(std::move(loaded).value());
    }
    rules_by_path[full] = rules;
    return rules;
  };

  std::vector<Example> out;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    const json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object()) return bad_record(where, "not a JSON object");
    Example e;
    Status fields;
    e.id = string_field(record, "id", where, fields);
    if (e.id.empty()) e.id = where;
    e.system = string_field(record, "system", where, fields);
    e.instruction = string_field(record, "instruction", where, fields);
    e.target = string_field(record, "target", where, fields);
    const std::string rules_name = string_field(record, "rules", where, fields);
    if (!fields.ok()) return fields.error();
    auto frame = record.find("frame");
    if (frame == record.end() || !frame->is_object()) {
      return bad_record(where, "\"frame\" must be the game state as a JSON object");
    }
    e.frame = frame->dump();
    if (e.instruction.empty()) return bad_record(where, "\"instruction\" is missing or empty");
    if (auto schema = record.find("schema"); schema != record.end() && !schema->is_null()) {
      if (!schema->is_object()) return bad_record(where, "\"schema\" must be a JSON Schema object");
      e.schema = schema->dump();
    }
    auto rules = rules_at(rules_name.empty() ? "rules.json" : rules_name, !rules_name.empty(), where);
    if (!rules) return rules.error();
    e.rules = *rules;
    out.push_back(std::move(e));
  }
  return out;
}

Status write_examples(const std::string& path, const std::vector<Example>& examples) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    for (const Example& e : examples) {
      json record = {{"id", e.id}, {"frame", json::parse(e.frame)}, {"instruction", e.instruction},
                     {"target", e.target}};
      if (!e.system.empty()) record["system"] = e.system;
      if (!e.schema.empty()) record["schema"] = json::parse(e.schema);
      out << record.dump() << '\n';
    }
    if (!out) return Error{ErrorCode::kIo, "cannot write " + partial};
  }
  std::error_code failed;
  fs::rename(partial, path, failed);
  if (failed) return Error{ErrorCode::kIo, "cannot write " + path + ": " + failed.message()};
  return {};
}

runtime::SessionParams session_params(const Example& example, runtime::AttentionMode mode, bool blocks_after_prefix) {
  runtime::SessionParams params;
  params.mode = mode;
  params.system_prompt = example.system;
  if (example.rules) params.rules = *example.rules;
  params.blocks_after_prefix = blocks_after_prefix;
  return params;
}

std::vector<Result<runtime::PromptSample>> tokenize(const runtime::Engine& engine,
                                                   const std::vector<Example>& examples) {
  std::map<std::pair<std::string, const json_blocker::Rules*>, runtime::PromptRenderer> sessions;
  std::vector<Result<runtime::PromptSample>> out;
  out.reserve(examples.size());
  for (const Example& example : examples) {
    auto key = std::make_pair(example.system, example.rules.get());
    auto session = sessions.find(key);
    if (session == sessions.end()) {
      runtime::PromptRenderer renderer(engine, session_params(example, runtime::AttentionMode::kBlock));
      session = sessions.emplace(key, std::move(renderer)).first;
    }
    auto sample = session->second.render(example.frame, example.instruction);
    if (!sample) {
      out.push_back(Error{ErrorCode::kInvalidArgument, example.id + ": " + sample.error().message});
    } else if (example.target.empty()) {
      out.push_back(Error{ErrorCode::kInvalidArgument,
                          example.id + ": no target (kvframe-finetune distill can fill it)"});
    } else {
      sample->answer = engine.tokenizer().encode(example.target);
      // The answer ends the assistant's turn: the template's end-of-turn token
      // (default_stop_tokens puts it last), or eos.
      if (!engine.stop_tokens().empty()) sample->answer.push_back(engine.stop_tokens().back());
      out.push_back(std::move(sample));
    }
  }
  return out;
}

}  // namespace kvframe::finetune
