// SQL access to an Nsight Systems export through libsqlite3 (see nsys_sqlite_reader.h).
#include "importers/nsys_sqlite_reader.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <array>
#include <filesystem>
#include <fstream>

namespace strata::nsys {

bool SqlRow::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

int64_t SqlRow::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string_view SqlRow::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
}

namespace {

uint32_t BigEndian(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

// A file shorter than its header says (a copy or download cut short): SQLite would find it out only on reading
// a missing page, maybe never for the tables read. The header's page count is valid when its change counter
// (offset 24) equals the "version valid for" number (offset 92), as SQLite's file format defines.
Status CheckNotCutShort(const std::string& path) {
  std::array<unsigned char, 100> header{};
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(header.data()), header.size()))
    return Status::BadInput(fmt::format("{}: an SQLite file cut short (under 100 bytes): export it again", path),
                            ErrorPlace{path});
  const uint32_t page_size = BigEndian(&header[16], 2) == 1 ? 65536 : BigEndian(&header[16], 2);
  const uint32_t pages = BigEndian(&header[28], 4);
  if (pages == 0 || BigEndian(&header[24], 4) != BigEndian(&header[92], 4)) return Status::Ok();
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  const uintmax_t expected = uintmax_t{pages} * page_size;
  if (ec || size >= expected) return Status::Ok();
  return Status::BadInput(fmt::format("{}: an SQLite file cut short: {} bytes of the {} its header says (export or "
                                      "copy it again)",
                                      path, size, expected),
                          ErrorPlace::AtOffset(path, size));
}

}  // namespace

Expected<std::unique_ptr<NsysSqliteReader>> NsysSqliteReader::Open(const std::string& path) {
  if (Status whole = CheckNotCutShort(path); !whole.ok()) return whole;
  sqlite3* db = nullptr;
  const int code = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (code != SQLITE_OK) {
    std::string message =
        fmt::format("{}: cannot open as an SQLite database: {}", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(code));
    sqlite3_close(db);
    return Status::Resource(std::move(message));
  }
  std::unique_ptr<NsysSqliteReader> reader(new NsysSqliteReader(path, db));
  Status listed =
      reader->ForEachRow("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')", "its list of tables",
                         [&](const SqlRow& row) { reader->tables_.emplace(row.Text(0)); });
  if (!listed.ok()) return listed;
  return reader;
}

NsysSqliteReader::~NsysSqliteReader() { sqlite3_close(db_); }

Status NsysSqliteReader::Error(std::string_view what, int code) const {
  const bool damaged = code == SQLITE_CORRUPT || code == SQLITE_NOTADB || code == SQLITE_IOERR;
  std::string message = fmt::format("{}: cannot read {}: {}{}", path_, what, sqlite3_errmsg(db_),
                                    damaged ? " (the file is damaged or cut short: export it again)" : "");
  if (damaged) return Status::BadInput(std::move(message), ErrorPlace{path_});
  return Status::Resource(std::move(message));
}

bool NsysSqliteReader::HasColumn(std::string_view table, std::string_view column) {
  if (!HasTable(table)) return false;
  bool found = false;
  // pragma_table_info takes the table's name as a bound value: no name is pasted into SQL text.
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &stmt, nullptr) != SQLITE_OK)
    return false;
  sqlite3_bind_text(stmt, 1, table.data(), static_cast<int>(table.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt, 2, column.data(), static_cast<int>(column.size()), SQLITE_TRANSIENT);
  found = sqlite3_step(stmt) == SQLITE_ROW;
  sqlite3_finalize(stmt);
  return found;
}

Status NsysSqliteReader::ForEachRow(const std::string& sql, std::string_view what,
                                    const std::function<void(const SqlRow&)>& on_row) {
  sqlite3_stmt* stmt = nullptr;
  int code = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (code != SQLITE_OK) {
    Status error = Error(what, code);
    sqlite3_finalize(stmt);
    return error;
  }
  const SqlRow row(stmt);
  while ((code = sqlite3_step(stmt)) == SQLITE_ROW) on_row(row);
  Status result = code == SQLITE_DONE ? Status::Ok() : Error(what, code);
  sqlite3_finalize(stmt);
  return result;
}

}  // namespace strata::nsys
