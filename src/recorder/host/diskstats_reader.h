// /proc/diskstats per block device (label = device name): disk.reads, disk.read_bytes, disk.read_time_ns,
// disk.writes, disk.write_bytes, disk.write_time_ns, disk.io_time_ns (time busy), disk.weighted_io_time_ns
// (cumulative) and disk.in_flight (gauge). Sectors are 512 bytes whatever the device's block size.
// loop and ram devices are skipped, and so are partitions (sys_root/class/block/NAME/partition exists),
// whose I/O is already in their disk's line.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "recorder/host/counter_sink.h"

namespace strata::recorder {

class DiskstatsReader {
 public:
  DiskstatsReader(const std::string& proc_root, const std::string& sys_root)
      : path_(proc_root + "/diskstats"), sys_root_(sys_root) {}
  void Sample(CounterSink& sink);

 private:
  bool Skip(std::string_view device);

  std::string path_;
  std::string sys_root_;
  std::unordered_map<std::string, bool> skip_;  // by device name, decided once
  FileReader file_;
  std::vector<std::string_view> fields_;
};

}  // namespace strata::recorder
