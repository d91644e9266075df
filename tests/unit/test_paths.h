// Paths the unit tests read: the repository, ../shared beside it, and the DWARF fixture program (recorder
// builds; empty otherwise). Defined in the build's generated test_paths.cc (CMakeLists.txt), not passed as -D
// flags, so that no test file's compile line names a path of this clone and ccache shares the objects.
#pragma once

namespace strata::test_paths {

extern const char* const kSourceDir;
extern const char* const kSharedDir;
extern const char* const kDwarfFixture;

}  // namespace strata::test_paths
