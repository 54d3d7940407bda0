// Result<T, E>: a value or a typed error, the return type of every fallible
// public function in kvframe. Nothing is thrown across the public API.
//
// Deliberately tiny because C++17 has no std::expected; each stage defines its
// own Error and aliases Result<T> = common::Result<T, Error>.
#pragma once

#include <utility>
#include <variant>

namespace kvframe::common {

template <class T, class E>
class Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

}  // namespace kvframe::common
