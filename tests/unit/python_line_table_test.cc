// CPython 3.11's location tables decoded (recorder/python_line_table.h) against what the interpreter itself
// says of them: the tables, co_lines() and co_positions() of real code objects, dumped by
// tests/data/python-linetables/dump_linetables.py from Debian 12's python3.11 (committed), and again from this
// machine's python3.11 when it has one.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "recorder/python_line_table.h"
#include "test_paths.h"

namespace strata::recorder {
namespace {

const std::string kDataDir = std::string(::strata::test_paths::kSourceDir) + "/tests/data/python-linetables";

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

std::vector<uint8_t> FromHex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

int OrMinusOne(const nlohmann::json& v) { return v.is_null() ? -1 : v.get<int>(); }

// One code object of a dump: its table decodes whole, the ranges cover the code units in order, each unit
// has the position co_positions() gives and the line co_lines() gives; a frame not yet started is at the
// first line, a unit past the code has none.
void CheckCode(const nlohmann::json& code) {
  const std::vector<uint8_t> table = FromHex(code.at("linetable").get<std::string>());
  const int first_line = code.at("first_line").get<int>();
  const int units = code.at("code_units").get<int>();
  bool complete = false;
  const std::vector<PythonLocationRange> ranges = DecodePythonLocations(table, first_line, &complete);
  EXPECT_TRUE(complete);
  ASSERT_FALSE(ranges.empty());
  EXPECT_EQ(ranges.front().start, 0);
  EXPECT_EQ(ranges.back().end, units);
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_EQ(ranges[i].start, ranges[i - 1].end);
  // co_positions(): one per code unit.
  const auto& positions = code.at("positions");
  ASSERT_EQ(static_cast<int>(positions.size()), units);
  size_t r = 0;
  for (int unit = 0; unit < units; ++unit) {
    while (r < ranges.size() && ranges[r].end <= unit) ++r;
    ASSERT_LT(r, ranges.size());
    const auto& p = positions[static_cast<size_t>(unit)];
    const PythonPosition expected{OrMinusOne(p[0]), OrMinusOne(p[1]), OrMinusOne(p[2]), OrMinusOne(p[3])};
    EXPECT_EQ(ranges[r].position, expected) << "code unit " << unit;
  }
  // co_lines(): byte ranges and their line.
  for (const auto& l : code.at("lines")) {
    const int start = l[0].get<int>() / 2, end = l[1].get<int>() / 2, line = OrMinusOne(l[2]);
    for (int unit = start; unit < end; ++unit) EXPECT_EQ(PythonLineOfCodeUnit(table, first_line, unit), line) << unit;
  }
  EXPECT_EQ(PythonLineOfCodeUnit(table, first_line, -1), first_line);
  EXPECT_EQ(PythonLineOfCodeUnit(table, first_line, units), -1);
}

// Every code object of a dump (CheckCode); how many there were.
size_t CheckDump(const nlohmann::json& dump) {
  for (const auto& code : dump.at("code")) {
    SCOPED_TRACE(code.at("name").get<std::string>() + " (" + code.at("file").get<std::string>() + ")");
    CheckCode(code);
  }
  return dump.at("code").size();
}

TEST(PythonLineTable, DecodesTheTablesOfDebian12sPython311) {
  const nlohmann::json dump = ReadJson(kDataDir + "/cpython-3.11.json");
  ASSERT_TRUE(dump.is_object()) << kDataDir;
  EXPECT_EQ(dump.at("python").get<std::string>().rfind("3.11.", 0), 0u);
  EXPECT_GE(CheckDump(dump), 20u);
  // The data takes every kind of entry (so each branch of the decoder was checked above). Only an entry's
  // first byte has bit 7 set (varint chunks and column bytes stay below 128).
  std::map<int, int> kinds;
  for (const auto& code : dump.at("code"))
    for (uint8_t b : FromHex(code.at("linetable").get<std::string>()))
      if (b & 128) ++kinds[(b >> 3) & 15];
  for (int kind = 0; kind <= 15; ++kind) EXPECT_GT(kinds[kind], 0) << "no entry of kind " << kind;
}

TEST(PythonLineTable, ExecutingLinesOfTheLabsShapes) {
  // The lock call of Holder.method and the one-line spin loop of dump_linetables.py: the unit of the call
  // (a frame blocked in it) and every unit of the loop are on the statement's own line, not the def line.
  const nlohmann::json dump = ReadJson(kDataDir + "/cpython-3.11.json");
  ASSERT_TRUE(dump.is_object());
  std::map<std::string, const nlohmann::json*> by_name;
  for (const auto& code : dump.at("code")) by_name[code.at("name").get<std::string>()] = &code;
  ASSERT_TRUE(by_name.count("Holder.method") && by_name.count("spin"));
  const nlohmann::json& method = *by_name["Holder.method"];
  const std::vector<uint8_t> table = FromHex(method.at("linetable").get<std::string>());
  const int def_line = method.at("first_line").get<int>();
  std::map<int, int> units_per_line;
  for (int unit = 0; unit < method.at("code_units").get<int>(); ++unit)
    ++units_per_line[PythonLineOfCodeUnit(table, def_line, unit)];
  EXPECT_EQ(units_per_line.count(def_line + 1), 1u);  // lock.acquire()
  EXPECT_EQ(units_per_line.count(def_line + 2), 1u);  // return self
  const nlohmann::json& spin = *by_name["spin"];
  const std::vector<uint8_t> spin_table = FromHex(spin.at("linetable").get<std::string>());
  const int spin_def = spin.at("first_line").get<int>();
  const auto ranges = DecodePythonLocations(spin_table, spin_def);
  ASSERT_FALSE(ranges.empty());
  // The loop: every unit from the first on its line to the end (the jump back included) is on that line.
  int loop_start = -1;
  for (const auto& r : ranges)
    if (r.position.line == spin_def + 2 && loop_start < 0) loop_start = r.start;
  ASSERT_GE(loop_start, 0);
  for (int unit = loop_start; unit < ranges.back().end; ++unit)
    EXPECT_EQ(PythonLineOfCodeUnit(spin_table, spin_def, unit), spin_def + 2) << unit;
}

TEST(PythonLineTable, AMalformedTableDecodesAsFarAsItGoes) {
  // def f():\n    x = 1\n    return x  (hand-assembled: a one-line entry, a short form, a cut-short long form)
  const std::vector<uint8_t> good = {
      0x80 | (10 << 3) | 0, 4,    9,   // 1 unit, line +0, columns 4..9
      0x80 | (11 << 3) | 1, 4,    12,  // 2 units, line +1, columns 4..12
      0x80 | (2 << 3) | 0,  0x35,      // 1 unit, same line, column 2*8 + 3 = 19, end 19 + 5
  };
  bool complete = false;
  auto ranges = DecodePythonLocations(good, 10, &complete);
  ASSERT_TRUE(complete);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].position, (PythonPosition{10, 10, 4, 9}));
  EXPECT_EQ(ranges[1].position, (PythonPosition{11, 11, 4, 12}));
  EXPECT_EQ(ranges[2].position, (PythonPosition{11, 11, 19, 24}));
  EXPECT_EQ(ranges[2].start, 3);
  EXPECT_EQ(PythonLineOfCodeUnit(good, 10, 2), 11);
  // Cut inside a long form's varints: what came before stays, the rest is unknown.
  std::vector<uint8_t> cut = good;
  cut.insert(cut.end(), {0x80 | (14 << 3) | 0, 0x44});  // a signed varint whose continuation never comes
  ranges = DecodePythonLocations(cut, 10, &complete);
  EXPECT_FALSE(complete);
  EXPECT_EQ(ranges.size(), 3u);
  EXPECT_EQ(PythonLineOfCodeUnit(cut, 10, 4), -1);
  EXPECT_EQ(PythonLineOfCodeUnit(cut, 10, 3), 11);
  // Garbage (an entry that does not start with bit 7), an empty table, a runaway varint.
  EXPECT_TRUE(DecodePythonLocations(std::vector<uint8_t>{0x12, 0x34}, 1, &complete).empty());
  EXPECT_FALSE(complete);
  EXPECT_EQ(PythonLineOfCodeUnit({}, 7, 0), -1);
  EXPECT_EQ(PythonLineOfCodeUnit({}, 7, -1), 7);
  const std::vector<uint8_t> runaway = {0x80 | (13 << 3), 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01};
  EXPECT_TRUE(DecodePythonLocations(runaway, 1, &complete).empty());
  EXPECT_FALSE(complete);
}

TEST(PythonLineTable, DecodesTheTablesOfThisMachinesPython311) {
  if (!std::filesystem::exists("/usr/bin/python3.11")) GTEST_SKIP() << "no /usr/bin/python3.11 here";
  char path[] = "/tmp/strata-linetables-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string command = "/usr/bin/python3.11 " + kDataDir + "/dump_linetables.py " + path;
  const int rc = std::system(command.c_str());
  const nlohmann::json dump = ReadJson(path);
  std::filesystem::remove(path);
  ASSERT_EQ(rc, 0) << command;
  ASSERT_TRUE(dump.is_object());
  EXPECT_GE(CheckDump(dump), 20u);
}

}  // namespace
}  // namespace strata::recorder
#endif  // STRATA_HAVE_RECORDER
