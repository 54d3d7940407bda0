#include "full_walk.h"

namespace kvframe::bench {

bool touch_every_value(simdjson::ondemand::value value, std::size_t& checksum) {
  simdjson::ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return false;
  switch (type) {
    case simdjson::ondemand::json_type::object: {
      simdjson::ondemand::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return false;
      for (auto field : object) {
        std::string_view key;
        simdjson::ondemand::value child;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS ||
            field.value().get(child) != simdjson::SUCCESS || !touch_every_value(child, checksum)) {
          return false;
        }
        checksum += key.size();
      }
      return true;
    }
    case simdjson::ondemand::json_type::array: {
      simdjson::ondemand::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      for (auto element : array) {
        simdjson::ondemand::value child;
        if (element.get(child) != simdjson::SUCCESS || !touch_every_value(child, checksum))
          return false;
      }
      return true;
    }
    case simdjson::ondemand::json_type::number: {
      double number;
      if (value.get_double().get(number) != simdjson::SUCCESS) return false;
      checksum += number != 0;
      return true;
    }
    case simdjson::ondemand::json_type::string: {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) return false;
      checksum += text.size();
      return true;
    }
    case simdjson::ondemand::json_type::boolean: {
      bool flag;
      if (value.get_bool().get(flag) != simdjson::SUCCESS) return false;
      checksum += flag;
      return true;
    }
    case simdjson::ondemand::json_type::null: {
      bool is_null = false;
      return value.is_null().get(is_null) == simdjson::SUCCESS && is_null;
    }
  }
  return false;
}

}  // namespace kvframe::bench
