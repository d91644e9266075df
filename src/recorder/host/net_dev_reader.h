// Network interface counters, per network namespace: /proc/net/dev for the recorder's own namespace
// (pid -1) and /proc/PID/net/dev for each other namespace a traced process is in (ranks may each have
// their own). Namespaces are told apart by the inode of /proc/PID/ns/net and read once per sample; a
// namespace's series carry the pid of one traced process in it (kept while that process is traced and
// alive), and every traced pid gets a "net.ns_inode" gauge so that any rank can be mapped to its
// namespace's series. Series: net.{rx,tx}_{bytes,packets,errs,drop}, cumulative, label = interface; with
// `links`, each namespace's link capacity and queue statistics too (LinkReader, same pid). SampleBytes reads only the
// byte counters of the namespaces the last Sample read (no namespace lookup per pid): cheap enough to read many times
// between the other counters' samples.
#pragma once

#include <memory>

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "recorder/host/counter_sink.h"
#include "recorder/host/link_reader.h"

namespace strata::recorder {

class NetDevReader {
 public:
  NetDevReader(const std::string& proc_root, bool links)
      : proc_root_(proc_root), links_(links ? std::make_unique<LinkReader>(proc_root) : nullptr) {}
  void Sample(const std::vector<int>& pids, CounterSink& sink);
  /// net.{rx,tx}_bytes of each namespace the last Sample read, into the same series (none before a Sample).
  void SampleBytes(CounterSink& sink);

 private:
  void ReadNetDev(const std::string& path, int32_t pid, CounterSink& sink, bool bytes_only = false);

  std::string proc_root_;
  std::unique_ptr<LinkReader> links_;
  std::unordered_map<uint64_t, int> representative_;        // namespace inode -> pid whose series carry it
  std::vector<std::pair<int32_t, std::string>> read_last_;  // (pid of the series, net/dev path), by the last Sample
  FileReader file_;
  std::vector<std::string_view> fields_;
  std::vector<std::string> interfaces_;  // of the last file read
};

}  // namespace strata::recorder
