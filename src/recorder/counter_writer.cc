// A recording's host counters written into its segment (see counter_writer.h).
#include "recorder/counter_writer.h"

namespace strata::recorder {

void CounterWriter::Sample(uint64_t now_ns, const std::vector<int>& pids, segments::SegmentWriter* writer,
                           const std::function<void(const std::string&)>& note) {
  sampler_.SetPids(pids);
  std::vector<CounterSample> samples;
  sampler_.Sample(now_ns, &samples);
  Write(samples, writer, note);
}

void CounterWriter::SampleLinks(uint64_t now_ns, segments::SegmentWriter* writer,
                                const std::function<void(const std::string&)>& note) {
  std::vector<CounterSample> samples;
  sampler_.SampleLinks(now_ns, &samples);
  Write(samples, writer, note);
}

void CounterWriter::Write(const std::vector<CounterSample>& samples, segments::SegmentWriter* writer,
                          const std::function<void(const std::string&)>& note) {
  const auto& series = sampler_.series();
  for (; series_written_ < series.size(); ++series_written_) {
    const CounterSeries& s = series[series_written_];
    writer->AppendMeta({{"type", "series"},
                        {"id", series_written_},
                        {"name", s.name},
                        {"pid", s.pid},
                        {"index", s.index},
                        {"label", s.label},
                        {"unit", s.unit},
                        {"cumulative", s.cumulative}});
  }
  for (const CounterSample& s : samples) writer->Append(CounterRow{s.ts_ns, s.series, s.value});
  for (const std::string& w : sampler_.TakeWarnings()) note(w);
}

}  // namespace strata::recorder
