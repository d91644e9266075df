// The recorder's readers of a sleeping thread of a live process: the owner of the lock it waits on
// (recorder/lock_owner.h) and its Python frames read from memory (ReadPythonStack, recorder/python_frames.h).
// On threads of this test whose state is set up to be known, on a fake /proc, and on a Python child.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <linux/futex.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "recorder/lock_owner.h"
#include "recorder/process_info.h"
#include "recorder/python_frames.h"

namespace strata::recorder {
namespace {

using namespace std::chrono_literals;

long Tid() { return ::syscall(SYS_gettid); }

// Waits (up to 5 s) until thread `tid` of this process sleeps in a futex, as /proc says.
bool WaitInFutex(long tid) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
    long nr = -1;
    if (in >> nr && nr == SYS_futex) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Runs `wait` on a new thread, and returns its tid once it sleeps in a futex (0 if it never does).
template <typename Wait>
long StartWaiter(std::thread* t, Wait wait) {
  std::atomic<long> tid{0};
  *t = std::thread([&tid, wait] {
    tid = Tid();
    wait();
  });
  while (!tid) std::this_thread::yield();
  return WaitInFutex(tid) ? tid.load() : 0;
}

TEST(LockOwner, NamesTheThreadHoldingAPthreadMutex) {
  std::mutex m;
  m.lock();
  std::thread t;
  const long waiter = StartWaiter(&t, [&m] { std::lock_guard<std::mutex> g(m); });
  ASSERT_NE(waiter, 0);
  EXPECT_EQ(LockOwnerOf(::getpid(), waiter), Tid());
  m.unlock();
  t.join();
}

TEST(LockOwner, ClaimsNoOwnerForASemaphoreOrACondition) {
  sem_t sem;
  ASSERT_EQ(sem_init(&sem, 0, 0), 0);
  std::thread t1;
  const long on_sem = StartWaiter(&t1, [&sem] { sem_wait(&sem); });
  ASSERT_NE(on_sem, 0);
  EXPECT_FALSE(LockOwnerOf(::getpid(), on_sem).has_value());
  sem_post(&sem);
  t1.join();
  sem_destroy(&sem);

  std::mutex m;
  std::condition_variable cv;
  bool go = false;
  std::thread t2;
  const long on_cv = StartWaiter(&t2, [&] {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return go; });
  });
  ASSERT_NE(on_cv, 0);
  EXPECT_FALSE(LockOwnerOf(::getpid(), on_cv).has_value());
  {
    std::lock_guard<std::mutex> g(m);
    go = true;
  }
  cv.notify_all();
  t2.join();
  // A thread not in a system call (this one, running) waits on nothing.
  EXPECT_FALSE(LockOwnerOf(::getpid(), Tid()).has_value());
}

// A fake /proc whose thread 100 waits in futex op `op` on `address` (of this process's memory), and whose
// threads 100 and `other` exist.
std::string FakeProc(const std::string& name, uint64_t address, uint32_t op, long other) {
  const std::string root = ::testing::TempDir() + "/" + name;
  const std::string task = root + "/" + std::to_string(::getpid()) + "/task/";
  std::filesystem::create_directories(task + "100");
  std::filesystem::create_directories(task + std::to_string(other));
  std::ofstream(task + "100/syscall") << SYS_futex << " 0x" << std::hex << address << " 0x" << op
                                      << " 0x2 0x0 0x0 0x0 0x7ffc0000 0x7f000000\n";
  return root;
}

TEST(LockOwner, ReadsBothLayoutsAndBelievesOnlyThreadsOfTheProcess) {
  struct {
    int32_t lock;
    uint32_t count;
    int32_t owner;
  } mutex{2, 0, 4242};
  const auto address = reinterpret_cast<uint64_t>(&mutex);
  EXPECT_EQ(LockOwnerOf(::getpid(), 100, FakeProc("mutex", address, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 4242)), 4242);
  // The owner must be a thread of the process: 4242 is not one in this fake.
  EXPECT_FALSE(LockOwnerOf(::getpid(), 100, FakeProc("stranger", address, FUTEX_WAIT, 4343)).has_value());
  // A word that is no mutex's locked state (a semaphore at 0): no owner, whatever follows it.
  mutex.lock = 0;
  EXPECT_FALSE(LockOwnerOf(::getpid(), 100, FakeProc("zero", address, FUTEX_WAIT, 4242)).has_value());
  // A priority-inheritance futex holds its owner's tid in the word itself (waiters bit aside).
  mutex.lock = static_cast<int32_t>(FUTEX_WAITERS | 4343);
  EXPECT_EQ(LockOwnerOf(::getpid(), 100, FakeProc("pi", address, FUTEX_LOCK_PI, 4343)), 4343);
  // Another futex command (a wake, a requeue) names nothing.
  EXPECT_FALSE(LockOwnerOf(::getpid(), 100, FakeProc("wake", address, FUTEX_WAKE, 4343)).has_value());
}

// A Python child with a thread asleep in a function of a known name, at a known line, called from another at
// a known line; its main thread asleep at a known line of the module. Kills it when done.
class SleepingPython {
 public:
  SleepingPython() {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      const char* script =
          "import threading, time\n"                                                  // 1
          "def sleeper_in_known_function():\n"                                        // 2
          "    print(threading.get_native_id(), flush=True)\n"                        // 3
          "    squares = [i * i for i in range(3)]\n"                                 // 4
          "    time.sleep(60 + squares[0])\n"                                         // 5
          "def caller_in_known_function():\n"                                         // 6
          "    sleeper_in_known_function()\n"                                         // 7
          "threading.Thread(target=caller_in_known_function, daemon=True).start()\n"  // 8
          "time.sleep(60)\n";                                                         // 9
      ::execl("/usr/bin/python3", "python3", "-c", script, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    if (FILE* out = ::fdopen(fds[0], "r")) {
      if (std::fscanf(out, "%ld", &tid_) != 1) tid_ = 0;
      std::fclose(out);
    }
  }
  ~SleepingPython() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  long tid() const { return tid_; }

 private:
  pid_t pid_ = -1;
  long tid_ = 0;
};

TEST(PythonStackReader, ReadsTheFramesOfAnotherThreadAsleep) {
  SleepingPython child;
  ASSERT_GT(child.pid(), 0);
  ASSERT_GT(child.tid(), 0) << "the Python child did not report its thread";
  std::this_thread::sleep_for(200ms);  // from its print into time.sleep
  std::string why;
  const auto offsets = PythonOffsetsOf(ReadProcessInfo(child.pid()), &why);
  ASSERT_TRUE(offsets.has_value()) << "no frame layout for /usr/bin/python3: " << why;
  const std::vector<PythonFrameAddress> frames =
      ReadPythonStack(child.pid(), static_cast<pid_t>(child.tid()), *offsets);
  ASSERT_GE(frames.size(), 3u);
  PythonCodeNames names;
  // Each frame at the line it executes (its call, for the caller), its first line beside it: the frame's
  // last instruction and the code object's location table read at 3.11's offsets.
  const PythonCode& sleeper = names.Name(child.pid(), frames[0].code);
  EXPECT_EQ(sleeper.function, "sleeper_in_known_function");
  EXPECT_EQ(sleeper.file, "<string>");
  EXPECT_EQ(sleeper.first_line, 2);
  EXPECT_EQ(names.Line(child.pid(), frames[0]), 5);
  const PythonCode& caller = names.Name(child.pid(), frames[1].code);
  EXPECT_EQ(caller.function, "caller_in_known_function");
  EXPECT_EQ(caller.first_line, 6);
  EXPECT_EQ(names.Line(child.pid(), frames[1]), 7);
  EXPECT_EQ(names.Name(child.pid(), frames[2].code).function, "Thread.run");  // threading.py, below it
  EXPECT_NE(names.Line(child.pid(), frames[2]), names.Name(child.pid(), frames[2].code).first_line);
  // Asked again, the same (cached per code object and instruction); no instruction read: the first line.
  EXPECT_EQ(names.Line(child.pid(), frames[0]), 5);
  EXPECT_EQ(names.Line(child.pid(), {frames[0].code, 0}), 2);
  // Its main thread is elsewhere (module level), and a thread the interpreter does not know has no frames.
  const std::vector<PythonFrameAddress> main = ReadPythonStack(child.pid(), child.pid(), *offsets);
  ASSERT_FALSE(main.empty());
  EXPECT_EQ(names.Name(child.pid(), main.front().code).function, "<module>");
  EXPECT_EQ(names.Line(child.pid(), main.front()), 9);
  EXPECT_TRUE(ReadPythonStack(child.pid(), 1, *offsets).empty());
}

}  // namespace
}  // namespace strata::recorder
#endif  // STRATA_HAVE_RECORDER
