// NsysSqliteReader: the SQL access of the Nsight Systems importer (nsys_importer.h), through libsqlite3. It
// opens an `nsys export --type sqlite` file read-only, says which tables and columns it has, and runs a query
// row by row; it knows no table's meaning. Every failure (not a database, a damaged or truncated file, a query
// SQLite refuses) is a Status naming the file and what was being read, never an abort: SQLite itself checks the
// file's pages as they are read.
// Invariants: the database is never written (opened SQLITE_OPEN_READONLY, queries are SELECTs the importer
// writes); a row's values are valid only inside the callback that receives it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace strata::nsys {

/// One result row of a query, read by column index (the order of the SELECT's columns).
class SqlRow {
 public:
  explicit SqlRow(sqlite3_stmt* stmt) : stmt_(stmt) {}
  bool IsNull(int column) const;
  int64_t Int(int column) const;            // 0 when NULL
  std::string_view Text(int column) const;  // "" when NULL

 private:
  sqlite3_stmt* stmt_;
};

/// The SQLite file of one Nsight Systems export, open read-only.
class NsysSqliteReader {
 public:
  /// Opens `path` and reads its list of tables: an error when the file is not an SQLite database or its
  /// schema cannot be read (a truncated or damaged file).
  static Expected<std::unique_ptr<NsysSqliteReader>> Open(const std::string& path);
  ~NsysSqliteReader();
  NsysSqliteReader(const NsysSqliteReader&) = delete;
  NsysSqliteReader& operator=(const NsysSqliteReader&) = delete;

  const std::string& path() const { return path_; }
  bool HasTable(std::string_view table) const { return tables_.count(std::string(table)) > 0; }
  /// Whether `table` exists and has a column `column` (case as nsys writes it).
  bool HasColumn(std::string_view table, std::string_view column);
  /// Runs `sql` and hands each row to `on_row`; `what` names what is read, for the error ("reading kernels").
  Status ForEachRow(const std::string& sql, std::string_view what, const std::function<void(const SqlRow&)>& on_row);

 private:
  NsysSqliteReader(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Status Error(std::string_view what, int code) const;

  std::string path_;
  sqlite3* db_;
  std::set<std::string, std::less<>> tables_;
};

}  // namespace strata::nsys
