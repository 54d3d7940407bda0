#include "gguf_samples.h"

#include <string>
#include <vector>

namespace kvframe::test {

using runtime::GgmlType;

GgufWriter every_type_sample(uint32_t version, uint64_t alignment) {
  GgufWriter w(version, alignment);
  w.add_string("general.architecture", "llama");
  w.add_u8("u8", 1);
  w.add_i8("i8", -1);
  w.add_u16("u16", 2);
  w.add_i16("i16", -2);
  w.add_u32("llama.block_count", 1);
  w.add_i32("i32", -3);
  w.add_u64("u64", 4);
  w.add_i64("i64", -5);
  w.add_f32("f32", 0.5f);
  w.add_f64("f64", 0.25);
  w.add_bool("bool", true);
  w.add_string_array("tokenizer.ggml.tokens", {"<s>", "</s>", "a", ""});
  w.add_i32_array("tokenizer.ggml.token_type", {3, 3, 1, 1});
  w.add_f32_array("scores", {0.0f, -1.0f});
  w.add_bool_array("bools", {true, false});
  w.add_int_array("u8s", GgufValueType::kU8, {1, 2});
  w.add_int_array("u16s", GgufValueType::kU16, {1, 2});
  w.add_int_array("u64s", GgufValueType::kU64, {3});
  w.add_float_array("f64s", GgufValueType::kF64, {1.0});
  w.add_tensor_f32("f32", {4}, {1, 2, 3, 4});
  w.add_tensor_f32("f16", {4}, {1, 2, 3, 4}, GgmlType::kF16);
  w.add_tensor_f32("bf16", {2, 2}, {1, 2, 3, 4}, GgmlType::kBF16);
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0,
                        GgmlType::kQ5_1, GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ4_K,
                        GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ8_1}) {
    const runtime::GgmlTypeSize size = runtime::ggml_type_size(type);
    w.add_tensor("t." + runtime::ggml_type_name(type), {size.block_size}, type,
                 std::vector<uint8_t>(static_cast<std::size_t>(size.block_bytes), 0x11));
  }
  return w;
}

}  // namespace kvframe::test
