// Importer for per-operation timer tables in CSV (plain or gzip): one row per op with rank, step, op
// type, start and duration, plus optional layout columns (dp_rank, stage, tp_rank, seq_id, mb_id, mc).
// One file may hold many ranks. Column names come from ImportOptions::op_table (user-mappable).
// Invariants: every data row is stored or counted in the input's skipped map by reason; a header that
// lacks a required column is an error naming the file and the missing column.
#pragma once

#include "core/status.h"
#include "importers/byte_source.h"
#include "importers/import_options.h"
#include "store/trace_store.h"

namespace strata {

Expected<TraceStore> ImportOpTable(ByteSource& src, const ImportOptions& options);

}  // namespace strata
