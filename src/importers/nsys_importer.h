// Importer for Nsight Systems exports (`nsys export --type sqlite`): maps the export's rows into the same
// TraceStore the Kineto importer fills (docs/nsys.md). One rank per (process, GPU) with GPU work in the file,
// ordered by (pid, device); their numbers are left to the job loader (the file name, or the order when the file
// is the only input). Kernels, memcpys and memsets become GPU slices on (rank, stream) tracks with their
// correlation ids; CUDA API calls (CUPTI_ACTIVITY_KIND_RUNTIME) and NVTX ranges CPU slices on (rank, thread)
// tracks, named as Kineto names them (nsys_names.h); an NCCL call's NVTX payload (jsonText: communicator, sequence
// number, size; nsys_nccl_payload.h) becomes its CollectiveArgs, shared with the kernel it launched
// (nsys_nccl_launches.h). Times are the rows' own ns from the session's start; each
// rank's base_time_ns is the session's UTC start (TARGET_INFO_SESSION_START_TIME, 0 when absent), by which the job
// loader puts the files of one job on one clock.
// Invariants: every row read is stored or counted in the input's skipped reasons, exactly once; a file that is
// not an SQLite database, is damaged, or lacks a required table (StringIds, CUPTI_ACTIVITY_KIND_KERNEL) is an
// error naming the file (and the table); an SQLite file without nsys tables is ErrorKind::kNotATrace.
#pragma once

#include <string>

#include "core/status.h"
#include "importers/import_options.h"
#include "store/trace_store.h"

namespace strata {

/// Reads the export at `path` (a regular file: SQLite reads it by path) into a new store.
Expected<TraceStore> ImportNsysSqlite(const std::string& path, const ImportOptions& options);

}  // namespace strata
