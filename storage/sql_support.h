#pragma once

// What repositories share: nullable columns, bytea, and the check that an UPDATE found its row.
// (libpqxx 6.4 already sends std::optional parameters, std::nullopt as NULL.)
//
// Every statement is parameterised ($1, $2, ...), with one exception: the statements the master's
// store sends many at a time in one message (master/records/store.h Store::Statement), whose values
// go in as literals quoted by the connection (Literal below, libpq's escaping). Times are Unix
// nanoseconds in C++ and go through det_ts()/det_ns() (migration 0002) in SQL.

#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::storage {

// A column that may be NULL.
template <typename T>
std::optional<T> Nullable(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return field.as<T>();
}

// A bytea parameter (sent in binary) and a bytea column.
// PostgreSQL's text form of a bigint[] ("{1,2,3}"), for `= ANY($1::bigint[])`.
inline std::string BigintArray(const std::vector<int64_t>& ids) {
  std::string text = "{";
  for (size_t i = 0; i < ids.size(); ++i) text += (i ? "," : "") + std::to_string(ids[i]);
  return text + "}";
}

inline pqxx::binarystring Bytes(const std::string& data) { return pqxx::binarystring(data); }
inline std::optional<std::string> BytesColumn(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return pqxx::binarystring(field).str();
}

// `value` as an SQL literal quoted by `tx`'s connection; NULL for nothing. Only for statement text
// sent in batches (see above).
template <typename T>
std::string Literal(pqxx::transaction_base& tx, const T& value) {
  return tx.quote(value);
}
template <typename T>
std::string Literal(pqxx::transaction_base& tx, const std::optional<T>& value) {
  return value ? tx.quote(*value) : std::string("NULL");
}

// OK when an UPDATE or DELETE touched a row; else NotFound("<what> not found").
inline Status ExpectUpdated(const pqxx::result& result, const std::string& what) {
  return result.affected_rows() == 0 ? NotFound(what + " not found") : Status::Ok();
}

}  // namespace det::storage
