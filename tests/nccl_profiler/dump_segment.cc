// strata_nccl_segment_dump: prints what the harness checks need from segment files, read with strata's own
// reader (src/segments/segment_reader.h), so tests/nccl_profiler/check_plugin.sh can assert single rows and
// meta records without the strata binary: one JSON object per file and line, {"path", "meta": [records in file
// order], "call_enter": [[tid, tgid, probe, ts_ns, comm, count]...], "calls": [[tid, tgid, probe, start_ns,
// end_ns]...], "problems": [...]}. 64-bit values are printed as unsigned integers.
// usage: strata_nccl_segment_dump FILE.sseg...      Exit 1 when a file cannot be read.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "segments/segment_reader.h"

namespace {

nlohmann::json Dump(const strata::segments::SegmentData& d) {
  nlohmann::json out = {{"path", d.path}, {"meta", d.meta}, {"problems", d.problems}};
  out["call_enter"] = nlohmann::json::array();
  for (const auto& r : d.call_enters) out["call_enter"].push_back({r.tid, r.tgid, r.probe, r.ts_ns, r.comm, r.count});
  out["calls"] = nlohmann::json::array();
  for (const auto& r : d.calls) out["calls"].push_back({r.tid, r.tgid, r.probe, r.start_ns, r.end_ns});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: strata_nccl_segment_dump FILE.sseg...\n");
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    auto data = strata::segments::ReadSegment(argv[i]);
    if (!data.ok()) {
      std::fprintf(stderr, "%s\n", data.status().message().c_str());
      status = 1;
      continue;
    }
    std::cout << Dump(data.value()).dump() << '\n';
  }
  return status;
}
