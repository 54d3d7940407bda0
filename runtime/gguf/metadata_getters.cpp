// GgufFile's typed metadata getters: kMissingKey / kWrongKeyType errors that
// name the key, what it holds and what was expected.
#include <limits>
#include <optional>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {
namespace {

std::string describe(const GgufValue& value) {
  struct Describe {
    std::string operator()(int64_t v) const { return "the integer " + std::to_string(v); }
    std::string operator()(uint64_t v) const { return "the integer " + std::to_string(v); }
    std::string operator()(double v) const { return "the float " + std::to_string(v); }
    std::string operator()(bool v) const { return v ? "the bool true" : "the bool false"; }
    std::string operator()(const std::string&) const { return "a string"; }
    std::string operator()(const GgufArray& array) const {
      static const char* const kinds[] = {"integers", "floats", "bools", "strings"};
      return std::string("an array of ") + kinds[array.index()];
    }
  };
  return std::visit(Describe{}, value);
}

// Looks `key` up and converts it with `convert` (a std::optional<T> from a
// GgufValue; nullopt when the value does not fit the request).
template <class T, class Convert>
Result<T> get_as(const GgufFile& file, std::string_view key, const char* wanted, Convert convert) {
  const GgufValue* value = file.find(key);
  if (value == nullptr) {
    return Error{ErrorCode::kMissingKey, file.path() + ": metadata key '" + std::string(key) +
                                             "' is missing; the file is not a model kvframe "
                                             "can use (or a newer llama.cpp conversion)"};
  }
  std::optional<T> converted = convert(*value);
  if (!converted) {
    return Error{ErrorCode::kWrongKeyType, file.path() + ": metadata key '" + std::string(key) +
                                               "' holds " + describe(*value) + ", expected " +
                                               wanted};
  }
  return std::move(*converted);
}

// The variant's T alternative (GgufValue or GgufArray), if it holds that.
template <class T, class Variant = GgufValue>
std::optional<T> alternative(const Variant& value) {
  if (const auto* v = std::get_if<T>(&value)) return *v;
  return std::nullopt;
}

template <class T>
std::optional<std::vector<T>> array_of(const GgufValue& value) {
  if (const auto* array = std::get_if<GgufArray>(&value)) {
    return alternative<std::vector<T>, GgufArray>(*array);
  }
  return std::nullopt;
}

std::optional<int64_t> as_int(const GgufValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&value)) {
    if (*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return static_cast<int64_t>(*u);
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::string> GgufFile::get_string(std::string_view key) const {
  return get_as<std::string>(*this, key, "a string", alternative<std::string>);
}

Result<int64_t> GgufFile::get_int(std::string_view key) const {
  return get_as<int64_t>(*this, key, "an integer within int64", as_int);
}

Result<double> GgufFile::get_float(std::string_view key) const {
  return get_as<double>(*this, key, "a number",
                        [](const GgufValue& value) -> std::optional<double> {
                          if (const auto* d = std::get_if<double>(&value)) return *d;
                          if (const auto* i = std::get_if<int64_t>(&value))
                            return static_cast<double>(*i);
                          if (const auto* u = std::get_if<uint64_t>(&value))
                            return static_cast<double>(*u);
                          return std::nullopt;
                        });
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  return get_as<bool>(*this, key, "a bool", alternative<bool>);
}

Result<std::vector<std::string>> GgufFile::get_string_array(std::string_view key) const {
  return get_as<std::vector<std::string>>(*this, key, "an array of strings", array_of<std::string>);
}

Result<std::vector<int64_t>> GgufFile::get_int_array(std::string_view key) const {
  return get_as<std::vector<int64_t>>(*this, key, "an array of integers", array_of<int64_t>);
}

Result<std::vector<double>> GgufFile::get_float_array(std::string_view key) const {
  return get_as<std::vector<double>>(
      *this, key, "an array of numbers",
      [](const GgufValue& value) -> std::optional<std::vector<double>> {
        if (auto floats = array_of<double>(value)) return floats;
        if (auto ints = array_of<int64_t>(value))
          return std::vector<double>(ints->begin(), ints->end());
        return std::nullopt;
      });
}

}  // namespace kvframe::runtime
