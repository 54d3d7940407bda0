// Published shapes of real models (config.json of each) for the benchmarks'
// random-weight runs: Model::with_random_weights(model_shape("llama3-8b")).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kvframe/runtime/model.h"

namespace kvframe::bench {

// The names model_shape() knows, for CLI11's IsMember check.
std::vector<std::string> model_shape_names();
// The shape called `name` (one of model_shape_names()), named "<name> (random weights)".
runtime::ModelConfig model_shape(const std::string& name);
// A model of shape `name` with random weights on `device` in `dtype` (empty: the device's default).
Result<std::unique_ptr<runtime::Model>> random_weight_model(const std::string& name, const std::string& device,
                                                            const std::string& dtype);

}  // namespace kvframe::bench
