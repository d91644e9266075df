// FlightRecorder: the full-detail recording of one job, kept as rotating chunks so that the minutes before
// a detection can be diagnosed in full afterwards. Each chunk is one `strata record --pid ...` run (a
// subprocess of this binary) writing DIR/chunk-<n>/; a new chunk starts when the job's processes change or
// every `rotate_s`. The chunks overlap: while the previous chunk's recorder still runs, a new chunk is
// pending: it becomes the current one (the one the live diagnosis reads) only once its recorder has said
// in its segment that every probe is attached (the `attached` meta record, docs/segment-format.md) and the
// previous recorder has written `handover` seconds past that instant (HandoverSeconds: a few of the job's
// steps, so the step running at the attach, whose start the new recorder missed, ends in the previous chunk
// with the next one begun; the live diagnosis summarizes it from there); then the previous recorder is stopped. A new
// recorder needs seconds to attach (symbols of libtorch, uprobes), and until then it would record nothing of what the
// ranks do: reading it at once left the live window blind for those seconds (a collective entered then was
// seen by no chunk read). Entries the previous chunk saw still open are carried into the new one's window
// (agent/chunk_carry.h).
// A deep-tracing window (deep_tracing.h) is a chunk too: when Update is told the job is (or no longer is) in
// one, a new chunk starts at the deep (or always-on) sampling rates, through the same handover.
// Chunks beyond `retain_s` of age or `retain_mb` in all are deleted, oldest first, never the current or a
// pending one.
// Invariants: at most two recorders per job record at a time (the current and a pending one; the one left by
// a switch, and a pending one replaced before it attached, are stopped at once), each reaped; the current
// chunk changes only to a chunk whose recorder is attached, or when the current recorder has ended (nothing
// is left to overlap with); a recorder that exits by itself (its processes ended) leaves a finished chunk,
// and is not followed by a new chunk for those same processes (seen again while they exit, they have
// nothing left to record: the finished chunk is the job's last); a pending recorder that exits before it
// became current is dropped (its processes ended or it failed: the current chunk holds more).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace strata::agent {

/// How far past a new recorder's attaching the previous one must have written before the switch: 2.5 of the
/// job's steps (`step_s`), at least 1 s and at most 30 s; 0 while no step is known (`step_s` 0, a job's start:
/// no summarized step can be lost, and two recorders overlapping longer only perturb the job).
double HandoverSeconds(double step_s);

struct FlightOptions {
  std::string strata;     // this binary (the recorder runs as `strata record`)
  double rotate_s = 300;  // start a new chunk at least this often
  double retain_s = 900;  // delete chunks that ended longer ago than this
  double retain_mb = 2048;
  unsigned sample_hz = 49;
  unsigned deep_sample_hz = 499;  // in a deep window (and host counters at kDeepCounterHz)
};

class FlightRecorder {
 public:
  FlightRecorder(std::string dir, FlightOptions options) : dir_(std::move(dir)), options_(std::move(options)) {}
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  /// Keeps a recorder on `pids` (starting or rotating one as needed), reaps and prunes. `now_s`: monotonic.
  /// `hold_rotation`: the job may be stalled; the current chunk is kept past `rotate_s` (a new recorder
  /// attaches to running processes and never sees the entries of the collectives its ranks are stuck in, so
  /// rotating would make a hang invisible to the live diagnosis). New processes still start a new chunk.
  /// `deep`: the job is in a deep-tracing window; a chunk of the other kind is replaced by a new one (unless
  /// the rotation is held: a stalled job keeps its chunk, whatever the window).
  void Update(const std::set<int>& pids, double now_s, bool hold_rotation = false, bool deep = false);
  /// Stops every recorder (SIGINT) and waits for them.
  void Stop();

  /// The current chunk's directory (empty before the first) and when it started (monotonic seconds): the
  /// chunk to read. The newest chunk started (the pending one while it attaches, else the current one).
  const std::string& current_chunk() const { return current_.dir; }
  const std::string& newest_chunk() const { return pending_.dir.empty() ? current_.dir : pending_.dir; }
  double current_started_s() const { return current_.started_s; }
  /// The newest chunk's recorder samples at the deep rates.
  bool newest_deep() const { return (pending_.dir.empty() ? current_ : pending_).deep; }
  /// The current chunk (the one read, its recorder attached) records at the deep rates.
  bool current_deep() const { return !current_.dir.empty() && current_.deep; }
  uint64_t restarts() const { return restarts_; }
  /// The handover the next switches wait for (HandoverSeconds of the job's recent steps).
  void set_handover_s(double s) { handover_s_ = s; }
  /// The current chunk's recorder has exited (its processes ended): the chunk is complete.
  bool current_finished() const { return !current_.dir.empty() && current_.pid == 0; }
  const std::string& dir() const { return dir_; }

 private:
  struct Child {
    pid_t pid = 0;
    std::string dir;
    double started_s = 0;
    std::set<int> pids;
    double stop_at_s = 0;  // replaced: stopped (SIGINT) from then on, once the new recorder is attached
    bool signalled = false;
    bool exited_cleanly = false;   // it exited by itself with status 0: every process it recorded had ended
    int64_t attached_unix_ns = 0;  // its segment's `attached` record (0: not seen yet)
    double attached_seen_s = 0;    // when this agent first saw it (monotonic seconds)
    bool deep = false;             // records at the deep rates
  };
  bool Start(const std::set<int>& pids, double now_s, bool deep);
  void Reap();
  void Prune();
  // Makes the pending chunk the current one once its recorder is attached and the current recorder has
  // written `handover_s_` past that instant (or ended); the previous recorder is then stopped.
  void PromotePending(double now_s);
  void StopChild(Child c, double now_s);

  std::string dir_;
  FlightOptions options_;
  Child current_;
  Child pending_;  // started, not attached yet (dir empty: none)
  std::vector<Child> stopping_;
  uint64_t next_chunk_ = 0, restarts_ = 0;
  double handover_s_ = HandoverSeconds(0);
};

}  // namespace strata::agent
