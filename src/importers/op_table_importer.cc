// Op-table CSV importer: streams RFC 4180 records (csv_reader.h), maps header names to columns, one rank per
// distinct rank value; rows with bad values are skipped and counted by reason, exact duplicate rows too.
#include "importers/op_table_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "core/skip_reasons.h"
#include "importers/csv_reader.h"
#include "importers/span_checks.h"

namespace strata {

namespace {

class OpTableImporter {
 public:
  OpTableImporter(ByteSource& src, const ImportOptions& options) : src_(src), cols_(options.op_table) {
    store_.inputs.emplace_back();
    store_.inputs[0].path = src.path();
    store_.inputs[0].format = InputFormat::kOpTable;
    scale_ = 0;
    for (double unit = cols_.time_unit_ns; unit >= 10 && scale_ < 9; unit /= 10) ++scale_;
  }

  Expected<TraceStore> Run() {
    CsvReader csv(src_);
    const std::vector<std::string> expected = {cols_.rank,     cols_.step,       cols_.op,    cols_.start,
                                               cols_.duration, cols_.dp_rank,    cols_.stage, cols_.tp_rank,
                                               cols_.seq_id,   cols_.microbatch, cols_.chunk};
    std::vector<std::string> names;
    if (Status st = csv.ReadHeader(expected, &names); !st.ok()) return st;
    if (Status st = ReadHeader(names); !st.ok()) return st;
    store_.inputs[0].format = InputFormat::kOpTable;
    while (true) {
      auto more = csv.Next(&fields_);
      if (!more.ok()) return more.status();
      if (!more.value()) break;
      ReadRow();
    }
    Finish();
    return std::move(store_);
  }

 private:
  Status ReadHeader(const std::vector<std::string>& names) {
    auto find = [&](const std::string& want) -> int {
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == want) return static_cast<int>(i);
      return -1;
    };
    struct Required {
      const std::string* name;
      int* index;
      const char* option;
    } required[] = {{&cols_.rank, &c_rank_, "--col-rank"},
                    {&cols_.step, &c_step_, "--col-step"},
                    {&cols_.op, &c_op_, "--col-op"},
                    {&cols_.start, &c_start_, "--col-start"},
                    {&cols_.duration, &c_dur_, "--col-duration"}};
    std::vector<const Required*> missing;
    for (auto& r : required) {
      *r.index = find(*r.name);
      if (*r.index < 0) missing.push_back(&r);
    }
    if (!missing.empty()) return MissingColumns(names, missing);
    c_dp_ = find(cols_.dp_rank);
    c_stage_ = find(cols_.stage);
    c_tp_ = find(cols_.tp_rank);
    c_seq_ = find(cols_.seq_id);
    c_mb_ = find(cols_.microbatch);
    c_chunk_ = find(cols_.chunk);
    columns_ = names.size();
    return Status::Ok();
  }

  /// Every required column the header lacks, named at once with the option that maps each.
  template <typename Required>
  Status MissingColumns(const std::vector<std::string>& names, const std::vector<const Required*>& missing) const {
    std::string have, want, how;
    for (const auto& n : names) have += fmt::format("{}'{}'", have.empty() ? "" : ", ", n);
    for (const Required* r : missing) {
      want += fmt::format("{}'{}'", want.empty() ? "" : ", ", *r->name);
      how += fmt::format("{}{} NAME", how.empty() ? "" : ", ", r->option);
    }
    if (missing.size() == 1)
      return Status::BadInput(
          fmt::format("{}: op table has no column {} (columns: {}); map it with {}", src_.path(), want, have, how),
          ErrorPlace::AtLine(src_.path(), 1));
    return Status::BadInput(
        fmt::format("{}: op table has no columns {} (columns: {}); map them with {}", src_.path(), want, have, how),
        ErrorPlace::AtLine(src_.path(), 1));
  }

  void Skip(SkipId reason) { store_.inputs[0].skipped.Add(reason); }

  /// The op table's span rule (importers/span_checks.h): an empty or unparsable value is invalid, a value
  /// out of range (checked first, in either column) or an end beyond int64 ns is integer_out_of_range.
  static constexpr SpanRules kSpanRules{
      {SkipId::kInvalidTimestamp, SkipId::kInvalidTimestamp, SkipId::kIntegerOutOfRange},
      {SkipId::kInvalidDuration, SkipId::kInvalidDuration, SkipId::kIntegerOutOfRange},
      SkipId::kIntegerOutOfRange,
      /*range_first=*/true};

  /// The op type as the passes will see it: --op-map's name for it, else its own.
  std::string_view MappedOp(std::string_view name) const {
    if (auto it = cols_.op_map.find(name); it != cols_.op_map.end()) return it->second;
    return name;
  }

  static int64_t OptionalInt(const std::vector<std::string_view>& f, int col) {
    int64_t v;
    if (col < 0 || ParseInt64(f[col], &v) != NumberParse::kOk) return -1;
    return v;
  }

  void ReadRow() {
    if (fields_.size() != columns_) {
      Skip(SkipId::kWrongColumnCount);
      return;
    }
    int64_t rank, step;
    if (ParseInt64(fields_[c_rank_], &rank) != NumberParse::kOk || rank < 0 || rank >= INT32_MAX) {
      Skip(SkipId::kInvalidRank);
      return;
    }
    if (ParseInt64(fields_[c_step_], &step) != NumberParse::kOk || step < INT32_MIN || step > INT32_MAX) {
      Skip(SkipId::kInvalidStep);
      return;
    }
    const TimeField start_field = ReadTimeField(fields_[c_start_], scale_);
    const TimeField dur_field = ReadTimeField(fields_[c_dur_], scale_);
    if (auto why = CheckSpan(start_field, dur_field, kSpanRules)) {
      Skip(*why);
      return;
    }
    const int64_t start = start_field.ns, dur = dur_field.ns;
    const uint32_t rank_index = RankIndex(static_cast<int32_t>(rank));
    RankInfo& r = store_.ranks[rank_index];
    if (r.dp_rank < 0) {
      r.dp_rank = static_cast<int32_t>(OptionalInt(fields_, c_dp_));
      r.pp_stage = static_cast<int32_t>(OptionalInt(fields_, c_stage_));
      r.tp_rank = static_cast<int32_t>(OptionalInt(fields_, c_tp_));
    }
    const StringId op = store_.strings.intern(MappedOp(fields_[c_op_]));
    auto [it, inserted] = tracks_.try_emplace(std::make_pair(rank_index, op), store_.next_track());
    if (inserted) {
      Track t;
      t.rank = rank_index;
      t.kind = TrackKind::kOpTable;
      t.pid = rank;
      t.tid = static_cast<int64_t>(store_.tracks.size());
      t.name = op;
      store_.tracks.push_back(t);
    }
    OpLayout layout;
    layout.seq_id = static_cast<int32_t>(OptionalInt(fields_, c_seq_));
    layout.microbatch = static_cast<int16_t>(OptionalInt(fields_, c_mb_));
    layout.chunk = static_cast<int16_t>(OptionalInt(fields_, c_chunk_));
    const auto args = static_cast<uint32_t>(store_.op_layout.size());
    store_.op_layout.push_back(layout);
    store_.slices.append(start, dur, op, op_category_, it->second, kNoCorrelation,
                         kSliceComplete | kSliceOpLayout | kSliceHasCategory, args);
    store_.slices.step.back() = static_cast<int32_t>(step);
    ++r.events;
    ++r.categories["op"];
    ++store_.inputs[0].events;
  }

  uint32_t RankIndex(int32_t rank) {
    auto [it, inserted] = rank_index_.try_emplace(rank, static_cast<uint32_t>(store_.ranks.size()));
    if (inserted) {
      RankInfo r;
      r.rank = rank;
      r.rank_source = "column";
      r.input = 0;
      store_.ranks.push_back(r);
    }
    return it->second;
  }

  /// Drops rows that repeat an earlier row exactly (same rank, op, step, start, duration and layout), counted
  /// as skipped "duplicate_row": a table concatenated twice, or rows written again by a retried writer. One
  /// sort of row indices (4 bytes a row), no hash of every row.
  void DropExactDuplicates() {
    SliceTable& s = store_.slices;
    const size_t n = s.size();
    auto key = [&](uint32_t i) {
      const OpLayout& l = store_.op_layout[s.args[i]];
      return std::make_tuple(s.track[i], s.ts_ns[i], s.dur_ns[i], s.step[i], l.seq_id, l.microbatch, l.chunk);
    };
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return key(a) < key(b) || (key(a) == key(b) && a < b); });
    std::vector<uint8_t> drop(n, 0);
    size_t dropped = 0;
    for (size_t k = 1; k < n; ++k)
      if (key(order[k]) == key(order[k - 1])) drop[order[k]] = 1, ++dropped;
    if (dropped == 0) return;
    size_t out = 0;
    for (size_t i = 0; i < n; ++i) {
      if (drop[i]) {
        RankInfo& r = store_.ranks[store_.track(s.track[i]).rank];
        --r.events;
        --r.categories["op"];
        continue;
      }
      s.ts_ns[out] = s.ts_ns[i];
      s.dur_ns[out] = s.dur_ns[i];
      s.correlation[out] = s.correlation[i];
      s.name[out] = s.name[i];
      s.category[out] = s.category[i];
      s.track[out] = s.track[i];
      s.step[out] = s.step[i];
      s.flags[out] = s.flags[i];
      store_.op_layout[out] = store_.op_layout[s.args[i]];
      s.args[out] = static_cast<uint32_t>(out);
      ++out;
    }
    for (auto* v : {&s.ts_ns, &s.dur_ns, &s.correlation}) v->resize(out);
    s.name.resize(out);
    s.category.resize(out);
    s.track.resize(out);
    s.args.resize(out);
    s.step.resize(out);
    s.flags.resize(out);
    store_.op_layout.resize(out);
    store_.inputs[0].events -= dropped;
    store_.inputs[0].skipped.Add(SkipId::kDuplicateRow, dropped);
  }

  void Finish() {
    DropExactDuplicates();
    // Ranks in ascending order make output stable whatever the row order was.
    std::vector<uint32_t> order(store_.ranks.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return store_.ranks[a].rank < store_.ranks[b].rank; });
    std::vector<uint32_t> new_index(order.size());
    std::vector<RankInfo> sorted;
    for (uint32_t i = 0; i < order.size(); ++i) {
      new_index[order[i]] = i;
      sorted.push_back(std::move(store_.ranks[order[i]]));
    }
    store_.ranks = std::move(sorted);
    for (auto& t : store_.tracks) t.rank = new_index[t.rank];
    store_.shrink_to_fit();
  }

  ByteSource& src_;
  const ImportOptions::OpTableColumns& cols_;
  int scale_;
  TraceStore store_;
  StringId op_category_ = store_.strings.intern("op");
  size_t columns_ = 0;
  int c_rank_ = -1, c_step_ = -1, c_op_ = -1, c_start_ = -1, c_dur_ = -1;
  int c_dp_ = -1, c_stage_ = -1, c_tp_ = -1, c_seq_ = -1, c_mb_ = -1, c_chunk_ = -1;
  std::vector<std::string_view> fields_;
  std::map<int32_t, uint32_t> rank_index_;
  std::map<std::pair<uint32_t, StringId>, TrackId> tracks_;
};

}  // namespace

Expected<TraceStore> ImportOpTable(ByteSource& src, const ImportOptions& options) {
  OpTableImporter importer(src, options);
  return importer.Run();
}

}  // namespace strata
