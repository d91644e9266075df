// strata_pprof_fixture OUT.sseg: writes the pprof tests' hand-made recording (recording_fixture.h) as a
// segment file, for the CLI test of `strata export --format pprof` (no `strata record` run needed).
#include <cstdio>

#include "recording_fixture.h"
#include "segments/segment_writer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: strata_pprof_fixture OUT.sseg\n");
    return 2;
  }
  const strata::segments::SegmentData data = strata::pprof_fixture::PprofFixtureRecording();
  strata::segments::SegmentWriter writer;
  strata::segments::FileHeader header;
  header.created_unix_ns = 1'790'000'000'000'000'000;
  header.realtime_minus_monotonic_ns = 1'790'000'000'000'000'000;
  strata::Status st = writer.Open(argv[1], header);
  if (st.ok()) {
    for (const auto& record : data.meta) writer.AppendMeta(record);
    for (const auto& row : data.samples) writer.Append(row);
    for (const auto& row : data.py_samples) writer.Append(row);
    for (const auto& row : data.off_cpu) writer.Append(row);
    for (const auto& row : data.calls) writer.Append(row);
    st = writer.Close();
  }
  if (!st.ok()) {
    std::fprintf(stderr, "strata_pprof_fixture: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}
