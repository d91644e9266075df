// Writing command output safely, also as root in directories other users can write to:
//  - "" or "-": standard output; every write and the final flush are checked (a full disk or a closed pipe is
//    an error, not exit 0 with a cut report).
//  - a path that names something other than a regular file (a device such as /dev/null, a FIFO, a socket):
//    written directly, never replaced by a regular file.
//  - a regular file or a new name: written to a temporary created in the same directory with
//    O_CREAT|O_EXCL|O_NOFOLLOW (a planted file or symlink is never followed or reused), then renamed over the
//    target, so a reader never sees a half-written report; an existing target keeps its permission bits
//    (a new one gets 0666 minus the umask, as any program's output).
//  - the target may not be one of the command's inputs (compared by device and inode).
//  - a file whose name ends in ".gz" is written gzip-compressed, unless what is written already is gzip (its
//    first bytes 1f 8b: a pprof profile), which is written as it is (never compressed twice).
// Invariant: on error nothing named `path` was changed and no temporary is left behind.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace strata {

/// Writes `content` to `path` as described above; `inputs` are the files the command read.
Status WriteOutput(const std::string& path, const std::string& content, const std::vector<std::string>& inputs = {});

/// The same, for output written as it is made (bounded memory): Open, Write any number of times, Commit. A
/// regular file appears under `path` only at Commit (the temporary is renamed over it); an error from any call,
/// or destruction before Commit, removes the temporary and leaves `path` as it was. Not copyable.
class OutputFile {
 public:
  OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();
  Status Open(const std::string& path, const std::vector<std::string>& inputs = {});
  Status Write(std::string_view bytes);
  Status Commit();

 private:
  enum class Kind { kNone, kStdout, kDevice, kTemporary };
  struct Gzip;           // the deflate stream of a ".gz" target (output.cc)
  Status Fail(int err);  // discards, and returns the error naming the path
  void Discard();
  Status WriteRaw(std::string_view bytes);
  Status Deflate(std::string_view bytes, bool finish);  // through gzip_ to the file
  std::string path_, tmp_;
  int fd_ = -1;
  Kind kind_ = Kind::kNone;
  bool gz_name_ = false, decided_ = false;  // a ".gz" target; whether its first bytes were seen
  std::unique_ptr<Gzip> gzip_;              // set when the content is compressed here
};

/// For a page (`--format html`): an error when `path` is empty, or is "-" on a terminal, or names a terminal
/// device (nobody reads a page's source scrolling by).
Status CheckHtmlTarget(const std::string& path);

/// Creates a new file for writing with O_CREAT|O_EXCL|O_NOFOLLOW and `mode` (minus the umask): never
/// follows or reuses what is there. Returns the descriptor, or an error naming the path.
Expected<int> CreateExclusive(const std::string& path, unsigned mode);

}  // namespace strata
