// Importer for Chrome-trace JSON as written by the PyTorch profiler (Kineto) and its older and
// vendor variants (PyTorch 1.x bare arrays, AMD ROCm, MTIA). One file = one rank.
// Invariants: every event of the file is either stored or counted in RankInfo::skipped by reason;
// a file that cannot be read as JSON is an error naming the file and byte offset.
#pragma once

#include "core/status.h"
#include "importers/byte_source.h"
#include "importers/import_options.h"
#include "store/trace_store.h"

namespace strata {

/// Reads the whole of `src` into a new store with exactly one RankInfo. The rank number is taken from
/// `distributedInfo.rank` when present (rank_source "distributedInfo"), else left at -1.
Expected<TraceStore> ImportKineto(ByteSource& src, const ImportOptions& options);

/// Frees what this thread's imports kept for its next file (parsers, buffers, row tables): call it once a
/// thread has imported its last file, so that the analysis after a load does not carry them.
void ReleaseImportScratch();

}  // namespace strata
