// Random JSON Schemas inside the subset json_schema.h supports, for property
// tests: seeded, so a failing seed reproduces. Every schema compiles (no
// contradictory bounds, every required name listed in properties).
#pragma once

#include <cstdint>
#include <fstream>
#include <random>
#include <string>

namespace kvframe::test {

struct RandomSchemaOptions {
  int max_depth = 3;        // nested objects / arrays / anyOf
  int max_properties = 4;
  int max_items = 4;        // maxItems drawn up to this (or unbounded)
};

// A schema as compact JSON text.
std::string random_schema(std::mt19937_64& rng, const RandomSchemaOptions& options = {});

// (schema, output) pairs written to a JSONL file, then checked by
// tests/runtime/output/validate_outputs.py: Python's jsonschema, which shares
// no code with ours, is the judge of "every output valid".
class SchemaOutputLog {
 public:
  explicit SchemaOutputLog(std::string path);
  void add(const std::string& schema_json, const std::string& output);
  int size() const { return size_; }
  const std::string& path() const { return path_; }
  // Runs the validator over the pairs: true when every one is valid (it
  // prints the first that is not).
  bool all_valid();

 private:
  std::string path_;
  std::ofstream out_;
  int size_ = 0;
};

}  // namespace kvframe::test
