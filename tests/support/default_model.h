// Tests that need kvframe's default model (SmolLM2-135M-Instruct, Q4_1 GGUF)
// are labelled `model` and skip, saying how to get it, when it is absent:
//
//   TEST(Something, WithTheModel) {
//     KVFRAME_REQUIRE_DEFAULT_MODEL(path);   // std::string path, or GTEST_SKIP
//     ...
//   }
//
// The path is found as everywhere else (kvframe/default_model/default_model.h):
// $KVFRAME_MODEL, else $KVFRAME_MODELS/<file>, else ~/.cache/kvframe/models/<file>.
#pragma once

#include <filesystem>
#include <string>

#include "kvframe/default_model/default_model.h"

#define KVFRAME_REQUIRE_DEFAULT_MODEL(path_variable)                                          \
  const std::string path_variable = ::kvframe::runtime::default_model_path();                \
  if (!std::filesystem::exists(path_variable)) {                                              \
    GTEST_SKIP() << "no default model at " << path_variable << ": run scripts/fetch-model.sh"; \
  }
