#include "moba/value_locator.h"

#include <simdjson.h>

namespace kvframe::examples::moba {

struct ValueLocator::Impl {
  explicit Impl(std::string_view json) : text(json) {}
  simdjson::padded_string text;
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document document;
  bool parsed = false;
};

ValueLocator::ValueLocator(std::string_view json) : impl_(std::make_unique<Impl>(json)) {
  impl_->parsed = !impl_->parser.iterate(impl_->text).get(impl_->document);
}

ValueLocator::~ValueLocator() = default;

std::optional<std::size_t> ValueLocator::offset_of(std::string_view pointer) {
  if (!impl_->parsed) return std::nullopt;
  // at_pointer on a document rewinds it first, so lookups are independent.
  simdjson::ondemand::value value;
  if (impl_->document.at_pointer(pointer).get(value)) return std::nullopt;
  return static_cast<std::size_t>(value.raw_json_token().data() - impl_->text.data());
}

}  // namespace kvframe::examples::moba
