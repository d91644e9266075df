// Source lines of sampled native frames from DWARF (recorder/dwarf_lines.h), on a fixture built with -g.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <string>

#include "recorder/dwarf_lines.h"
#include "recorder/elf_symbols.h"
#include "recorder/stack_symbolizer.h"
#include "store/stack_frames.h"
#include "test_paths.h"

namespace strata::recorder {
namespace {

TEST(DwarfLines, FunctionOfAFixtureWithDebugInfoHasItsSourceLine) {
  auto elf = ElfSymbols::Load(::strata::test_paths::kDwarfFixture);
  ASSERT_TRUE(elf.ok()) << elf.error();
  auto found = elf.value().Find([](const ElfFunction& f) { return f.name == "strata_fixture_hot"; });
  ASSERT_EQ(found.size(), 1u);
  DwarfLines lines;
  auto at = lines.Lookup(::strata::test_paths::kDwarfFixture, found[0]->address);
  ASSERT_TRUE(at.has_value());
  EXPECT_NE(at->file.find("dwarf_fixture.cc"), std::string::npos) << at->file;
  EXPECT_GE(at->line, 5);
  EXPECT_LE(at->line, 7);
  // A library without debug info (the C library here) gives nothing, and is not reopened.
  EXPECT_FALSE(lines.Lookup("/nonexistent/libfoo.so", 0x1000).has_value());

  // Through the symbolizer: a sampled address inside the function, mapped where a process would map it.
  const auto offset = elf.value().FileOffset(found[0]->address + 4);
  ASSERT_TRUE(offset.has_value());
  const uint64_t start = elf.value().fixed_address() ? 0 : 0x555555554000ull;
  MapEntry map{start, start + (64ull << 20), 0, ::strata::test_paths::kDwarfFixture};
  const uint64_t ip = elf.value().fixed_address() ? found[0]->address + 4 : start + *offset;
  StackSymbolizer symbolizer("/nonexistent");
  const auto frames = symbolizer.User({map}, {ip});
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "strata_fixture_hot");
  EXPECT_NE(frames[0].file.find("dwarf_fixture.cc"), std::string::npos);
  const auto json = frames[0].ToJson();
  EXPECT_TRUE(json.contains("line"));
  // Named for findings with its source line.
  StackFrame f{frames[0].function, frames[0].module, false, frames[0].file, frames[0].line};
  EXPECT_EQ(CulpritFrame({f}).rfind("strata_fixture_hot (dwarf_fixture.cc:", 0), 0u) << CulpritFrame({f});
}

}  // namespace
}  // namespace strata::recorder
#endif  // STRATA_HAVE_RECORDER
