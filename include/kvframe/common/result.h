// Result<T, E>: a value or a typed error, the return type of every fallible
// public function in kvframe. Nothing is thrown across the public API.
//
// Deliberately tiny because C++17 has no std::expected; each stage defines its
// own Error and aliases Result<T> = common::Result<T, Error>. Operations that
// return nothing return Result<void, E> (aliased Status), which reads like any
// other Result: `if (!status.ok()) return status.error();`. An optional<Error>
// read inverted (a present value meant failure).
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

// Success or an error, for operations that return nothing: `return {};` is
// success, `return error;` a failure.
template <class E>
class Result<void, E> {
 public:
  Result() = default;
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<std::monostate, E> v_;
};

}  // namespace kvframe::common
