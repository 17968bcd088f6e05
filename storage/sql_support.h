#pragma once

// What repositories share: nullable columns, bytea, and the check that an UPDATE found its row.
// (libpqxx 6.4 already sends std::optional parameters, std::nullopt as NULL.)
//
// Every statement is parameterised ($1, $2, ...); no SQL is built from values. Times are Unix
// nanoseconds in C++ and go through det_ts()/det_ns() (migration 0002) in SQL.

#include <optional>
#include <pqxx/pqxx>
#include <string>

#include "common/status.h"

namespace det::storage {

// A column that may be NULL.
template <typename T>
std::optional<T> Nullable(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return field.as<T>();
}

// A bytea parameter (sent in binary) and a bytea column.
inline pqxx::binarystring Bytes(const std::string& data) { return pqxx::binarystring(data); }
inline std::optional<std::string> BytesColumn(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return pqxx::binarystring(field).str();
}

// OK when an UPDATE or DELETE touched a row; else NotFound("<what> not found").
inline Status ExpectUpdated(const pqxx::result& result, const std::string& what) {
  return result.affected_rows() == 0 ? NotFound(what + " not found") : Status::Ok();
}

}  // namespace det::storage
