// kvframe::cli_options: the model flags every program shares, as a program
// parses them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kvframe/cli_options/fidelity_options.h"
#include "kvframe/cli_options/model_options.h"

namespace {

namespace cli = kvframe::cli;

// Parses `args` (without the program name) into `options`; false on a usage error.
bool parse(cli::ModelOptions& options, const cli::ModelOptionsSpec& which, std::vector<std::string> args) {
  CLI::App app{"test"};
  cli::add_model_options(app, options, which);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError&) {
    return false;
  }
  return true;
}

TEST(CliModelOptions, EveryFlagSetsItsFieldAndTheDefaultsAreTheRuntimes) {
  cli::ModelOptions o;
  EXPECT_EQ(o.model, kvframe::runtime::default_model_path());
  EXPECT_EQ(o.device, "cpu");
  EXPECT_EQ(o.dtype, "");  // auto
  EXPECT_EQ(o.threads, 0);
  EXPECT_EQ(o.lora, "auto");
  EXPECT_EQ(o.context, 0);  // runtime::ModelParams::context's: the short LongRoPE factors
  ASSERT_TRUE(parse(o, {}, {"--model", "m.gguf", "--device", "cuda:1", "--dtype", "fp16", "--threads", "3",
                            "--lora", "none", "--model-context", "8192"}));
  EXPECT_EQ(o.model, "m.gguf");
  EXPECT_EQ(o.device, "cuda:1");
  EXPECT_EQ(o.dtype, "fp16");
  EXPECT_EQ(o.threads, 3);
  EXPECT_EQ(o.lora, "none");
  EXPECT_EQ(o.context, 8192);
}

TEST(CliModelOptions, BadValuesAreUsageErrors) {
  cli::ModelOptions o;
  EXPECT_FALSE(parse(o, {}, {"--dtype", "fp8"}));
  EXPECT_FALSE(parse(o, {}, {"--threads", "-1"}));
  EXPECT_FALSE(parse(o, {}, {"--model-context", "-1"}));
  cli::ModelOptionsSpec cpu_only;
  cpu_only.device = false;  // no --device: the CPU, which has no fp16
  EXPECT_FALSE(parse(o, cpu_only, {"--dtype", "fp16"}));
  EXPECT_FALSE(parse(o, cpu_only, {"--device", "cpu"}));
  EXPECT_TRUE(parse(o, cpu_only, {"--dtype", "bf16"}));
}

TEST(CliModelOptions, ASpecLeavesOutTheFlagsAProgramHasNot) {
  CLI::App app{"test"};
  cli::ModelOptions o;
  cli::ModelOptionsSpec which;
  which.device = which.dtype = which.threads = which.lora = which.context = false;
  cli::add_model_options(app, o, which);
  EXPECT_NE(app.get_option_no_throw("--model"), nullptr);
  for (const char* absent : {"--device", "--dtype", "--threads", "--lora", "--model-context"}) {
    EXPECT_EQ(app.get_option_no_throw(absent), nullptr) << absent;
  }
}

TEST(CliModelOptions, OneHelpTextEachWithTheProgramsNoteAfterIt) {
  CLI::App app{"test"};
  cli::ModelOptions o;
  cli::ModelOptionsSpec which;
  which.lora_note = "also an --adapter NAME";
  cli::add_model_options(app, o, which);
  EXPECT_EQ(app.get_option("--lora")->get_description(),
            "a file, none, or auto (with the default model: the game's shipped adapter, else kvframe's block-tuned "
            "one); also an --adapter NAME");
  EXPECT_EQ(app.get_option("--threads")->get_description(),
            "CPU threads (default 0: the cores other processes leave free)");
  EXPECT_EQ(app.get_option("--dtype")->get_description(),
            "fp32, bf16 or fp16 (fp16: cuda only; default: bf16 on cuda and on cpus with AVX-512-BF16 or AMX, "
            "else fp32)");
  EXPECT_EQ(app.get_option("--model")->get_description(),
            "GGUF model file, or a name scripts/fetch-model.sh fetches (smollm2-135m, gemma3-270m)");
}

// --model NAME is the named model's file in the cache, or an error naming the
// command that fetches it; any other text is a path as given.
TEST(CliModelOptions, ModelNamesMapToTheModelCache) {
  const std::string cache = ::testing::TempDir() + "kvframe_cli_models";
  std::filesystem::remove_all(cache);
  std::filesystem::create_directories(cache);
  setenv("KVFRAME_MODELS", cache.c_str(), 1);
  auto parse = [](const std::string& model) {
    CLI::App app{"test"};
    cli::ModelOptions o;
    cli::add_model_options(app, o);
    std::vector<std::string> args = {"--model", model};
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    app.parse(args);
    return o.model;
  };
  EXPECT_EQ(parse("/some/file.gguf"), "/some/file.gguf");
  try {
    parse("gemma3-270m");
    ADD_FAILURE() << "an absent named model must be an error";
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("scripts/fetch-model.sh gemma3-270m"), std::string::npos) << e.what();
  }
  std::ofstream(cache + "/gemma-3-270m-q4_k_m.gguf") << "x";
  EXPECT_EQ(parse("gemma3-270m"), cache + "/gemma-3-270m-q4_k_m.gguf");
  unsetenv("KVFRAME_MODELS");
}

TEST(CliModelOptions, LoraFileIsResolveLoras) {
  cli::ModelOptions o;
  o.model = "/nowhere/other-model.gguf";
  o.lora = "none";
  EXPECT_EQ(cli::lora_file(o), "");
  o.lora = "adapter.gguf";
  EXPECT_EQ(cli::lora_file(o, "holdem"), "adapter.gguf");
  o.lora = "auto";  // not the default model: kvframe ships no adapter for it
  EXPECT_EQ(cli::lora_file(o, "holdem"), "");
  EXPECT_EQ(cli::lora_file(o, "holdem"), kvframe::runtime::resolve_lora("auto", o.model, "holdem"));
}

// Block mode's fidelity knobs: their defaults (all off), their ranges.
TEST(CliFidelityOptions, TheFlagsSetTheKnobsWithinTheirRanges) {
  auto parse_knobs = [](kvframe::common::BlockFidelity& o, std::vector<std::string> args,
                        cli::KnobLimits limits) {
    CLI::App app{"test"};
    cli::add_fidelity_options(app, o, "for tests", limits);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError&) {
      return false;
    }
    return true;
  };
  kvframe::common::BlockFidelity o;
  EXPECT_EQ(o.block_heads, 0);
  EXPECT_EQ(o.blend_ratio, 0.0f);
  EXPECT_EQ(o.block_temperature, 1.0f);
  ASSERT_TRUE(parse_knobs(o, {"--block-heads", "4", "--blend", "0.25", "--block-temperature", "0.5"},
                          cli::KnobLimits::kServer));
  EXPECT_EQ(o.block_heads, 4);
  EXPECT_FLOAT_EQ(o.blend_ratio, 0.25f);
  EXPECT_FLOAT_EQ(o.block_temperature, 0.5f);
  kvframe::common::BlockFidelity bad;
  EXPECT_FALSE(parse_knobs(bad, {"--blend", "1.5"}, cli::KnobLimits::kServer));
  EXPECT_FALSE(parse_knobs(bad, {"--block-temperature", "8"}, cli::KnobLimits::kServer));
  EXPECT_FALSE(parse_knobs(bad, {"--block-heads", "5000"}, cli::KnobLimits::kServer));
  EXPECT_TRUE(parse_knobs(bad, {"--block-heads", "5000"}, cli::KnobLimits::kEngine));
}

}  // namespace
