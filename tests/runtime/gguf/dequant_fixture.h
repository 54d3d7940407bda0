// Reference dequantizations from gguf-py, read from
// fixtures/dequant_reference.json (written by make_dequant_fixture.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::test {

struct DequantCase {
  std::string type_name;          // "Q4_K"
  runtime::GgmlType type;
  int64_t n_elements;
  std::vector<uint8_t> data;      // encoded blocks
  std::vector<uint32_t> expected; // fp32 bit patterns
};

struct ModelSample {
  std::string tensor;
  std::string type_name;
  int64_t start;                  // first element (flat index) of the sample
  std::vector<uint32_t> expected; // fp32 bit patterns of consecutive elements
};

// Samples of one real model file's tensors.
struct ModelSamples {
  std::string file;               // empty when generated without the file
  int64_t size = 0;               // the file's bytes; 0 when not recorded
  std::vector<ModelSample> samples;
};

struct DequantFixture {
  std::vector<DequantCase> cases;
  ModelSamples model;             // the default model (SmolLM2-135M, Q4_1)
  ModelSamples gemma3_model;      // Gemma 3 270M, Q4_K_M (Q5_0 tensors)
};

// Throws std::runtime_error when the fixture is missing or malformed.
const DequantFixture& dequant_fixture();

// Whether two floats are the same bits, or both NaN (a NaN's payload and
// quiet bit may legitimately differ between conversions).
bool same_float(float actual, uint32_t expected_bits);

}  // namespace kvframe::test
