#include "dequant_fixture.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kvframe::test {
namespace {

constexpr const char* kPath =
    KVFRAME_SOURCE_DIR "/tests/runtime/gguf/fixtures/dequant_reference.json";

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> bytes(hex.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
  return bytes;
}

ModelSamples read_samples(const nlohmann::json& json, const char* key) {
  ModelSamples out;
  if (!json.contains(key)) return out;
  const auto& model = json.at(key);
  out.file = model.at("file").get<std::string>();
  out.size = model.value("size", int64_t{0});
  for (const auto& s : model.at("samples")) {
    out.samples.push_back(ModelSample{
        s.at("tensor").get<std::string>(), s.at("type").get<std::string>(),
        s.at("start").get<int64_t>(), s.at("expected_f32_bits").get<std::vector<uint32_t>>()});
  }
  return out;
}

DequantFixture load() {
  std::ifstream in(kPath);
  if (!in) throw std::runtime_error(std::string("cannot read ") + kPath);
  const nlohmann::json json = nlohmann::json::parse(in);
  DequantFixture fixture;
  for (const auto& c : json.at("cases")) {
    fixture.cases.push_back(DequantCase{
        c.at("type").get<std::string>(),
        static_cast<runtime::GgmlType>(c.at("ggml_type").get<uint32_t>()),
        c.at("n_elements").get<int64_t>(), from_hex(c.at("data_hex").get<std::string>()),
        c.at("expected_f32_bits").get<std::vector<uint32_t>>()});
  }
  fixture.model = read_samples(json, "model");
  fixture.gemma3_model = read_samples(json, "gemma3_model");
  return fixture;
}

}  // namespace

const DequantFixture& dequant_fixture() {
  static const DequantFixture fixture = load();
  return fixture;
}

bool same_float(float actual, uint32_t expected_bits) {
  float expected;
  std::memcpy(&expected, &expected_bits, sizeof expected);
  if (std::isnan(expected)) return std::isnan(actual);
  uint32_t actual_bits;
  std::memcpy(&actual_bits, &actual, sizeof actual_bits);
  return actual_bits == expected_bits;
}

}  // namespace kvframe::test
