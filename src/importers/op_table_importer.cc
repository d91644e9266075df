// Op-table CSV importer: streams lines, maps header names to columns, one rank per distinct rank value.
#include "importers/op_table_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/decimal.h"

namespace strata {

namespace {

constexpr int64_t kMaxDurationNs = 7LL * 24 * 3600 * 1000000000LL;

/// Splits one CSV line into fields (RFC 4180 quotes supported; quotes inside fields are kept simple).
void SplitCsv(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t i = 0;
  while (true) {
    if (i < line.size() && line[i] == '"') {
      const size_t close = line.find('"', i + 1);
      const size_t end = close == std::string_view::npos ? line.size() : close;
      out.push_back(line.substr(i + 1, end - i - 1));
      i = line.find(',', end);
    } else {
      const size_t comma = line.find(',', i);
      out.push_back(line.substr(i, comma == std::string_view::npos ? std::string_view::npos : comma - i));
      i = comma;
    }
    if (i == std::string_view::npos) break;
    ++i;
  }
}

class OpTableImporter {
 public:
  OpTableImporter(ByteSource& src, const ImportOptions& options) : src_(src), cols_(options.op_table) {
    store_.inputs.emplace_back();
    store_.inputs[0].path = src.path();
    store_.inputs[0].format = "op-table-csv";
    scale_ = 0;
    for (double unit = cols_.time_unit_ns; unit >= 10 && scale_ < 9; unit /= 10) ++scale_;
  }

  Expected<TraceStore> Run() {
    std::string buf;
    std::string chunk(1 << 20, '\0');
    bool header_done = false;
    uint64_t line_no = 0;
    for (;;) {
      auto got = src_.Read(chunk.data(), chunk.size());
      if (!got.ok()) return got.status();
      const bool at_end = got.value() == 0;
      buf.append(chunk.data(), got.value());
      size_t start = 0;
      for (;;) {
        size_t nl = buf.find('\n', start);
        if (nl == std::string::npos) {
          if (!at_end || start >= buf.size()) break;
          nl = buf.size();
        }
        std::string_view line(buf.data() + start, nl - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ++line_no;
        start = nl + 1;
        if (line.empty()) continue;
        if (!header_done) {
          if (Status st = ReadHeader(line); !st.ok()) return st;
          header_done = true;
        } else {
          ReadRow(line);
        }
      }
      buf.erase(0, std::min(start, buf.size()));
      if (at_end) break;
    }
    if (!header_done) return Status::Error(fmt::format("{}: empty op table (no header line)", src_.path()));
    Finish();
    return std::move(store_);
  }

 private:
  Status ReadHeader(std::string_view line) {
    std::vector<std::string_view> names;
    SplitCsv(line, names);
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
    for (auto& r : required) {
      *r.index = find(*r.name);
      if (*r.index < 0) {
        std::string have;
        for (auto n : names) have += fmt::format("{}'{}'", have.empty() ? "" : ", ", n);
        return Status::Error(fmt::format("{}: op table has no column '{}' (columns: {}); map it with {} NAME",
                                         src_.path(), *r.name, have, r.option));
      }
    }
    c_dp_ = find(cols_.dp_rank);
    c_stage_ = find(cols_.stage);
    c_tp_ = find(cols_.tp_rank);
    c_seq_ = find(cols_.seq_id);
    c_mb_ = find(cols_.microbatch);
    c_chunk_ = find(cols_.chunk);
    columns_ = names.size();
    return Status::Ok();
  }

  void Skip(const char* reason) { ++store_.inputs[0].skipped[reason]; }

  static int64_t OptionalInt(const std::vector<std::string_view>& f, int col) {
    int64_t v;
    if (col < 0 || ParseInt64(f[col], &v) != NumberParse::kOk) return -1;
    return v;
  }

  void ReadRow(std::string_view line) {
    SplitCsv(line, fields_);
    if (fields_.size() != columns_) {
      Skip("wrong_column_count");
      return;
    }
    int64_t rank, step, start, dur;
    if (ParseInt64(fields_[c_rank_], &rank) != NumberParse::kOk || rank < 0 || rank >= INT32_MAX) {
      Skip("invalid_rank");
      return;
    }
    if (ParseInt64(fields_[c_step_], &step) != NumberParse::kOk || step < INT32_MIN || step > INT32_MAX) {
      Skip("invalid_step");
      return;
    }
    const NumberParse ps = ParseScaledDecimal(fields_[c_start_], scale_, &start);
    const NumberParse pd = ParseScaledDecimal(fields_[c_dur_], scale_, &dur);
    if (ps == NumberParse::kOutOfRange || pd == NumberParse::kOutOfRange) {
      Skip("integer_out_of_range");
      return;
    }
    if (ps != NumberParse::kOk) {
      Skip("invalid_timestamp");
      return;
    }
    if (pd != NumberParse::kOk) {
      Skip("invalid_duration");
      return;
    }
    if (dur < 0) {
      Skip("negative_duration");
      return;
    }
    if (dur > kMaxDurationNs) {
      Skip("absurd_duration");
      return;
    }
    if (start > INT64_MAX - dur) {  // the end would not fit int64 ns
      Skip("integer_out_of_range");
      return;
    }
    const uint32_t rank_index = RankIndex(static_cast<int32_t>(rank));
    RankInfo& r = store_.ranks[rank_index];
    if (r.dp_rank < 0) {
      r.dp_rank = static_cast<int32_t>(OptionalInt(fields_, c_dp_));
      r.pp_stage = static_cast<int32_t>(OptionalInt(fields_, c_stage_));
      r.tp_rank = static_cast<int32_t>(OptionalInt(fields_, c_tp_));
    }
    const StringId op = store_.strings.intern(fields_[c_op_]);
    auto [it, inserted] =
        tracks_.try_emplace(std::make_pair(rank_index, op), static_cast<uint32_t>(store_.tracks.size()));
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

  void Finish() {
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
  std::map<std::pair<uint32_t, StringId>, uint32_t> tracks_;
};

}  // namespace

Expected<TraceStore> ImportOpTable(ByteSource& src, const ImportOptions& options) {
  OpTableImporter importer(src, options);
  return importer.Run();
}

}  // namespace strata
