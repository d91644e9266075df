// LinkReader: qdisc messages built here are parsed (root only, tbf rate, queue statistics, malformed
// input refused); as root, a real network namespace with a tbf-shaped veth is read through a process
// inside it (capacity = shaping rate, the unshaped end at the veth's link speed) without the test's own
// thread leaving its namespace.
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "recorder/host/host_counters.h"
#include "recorder/host/link_reader.h"

namespace strata::recorder {
namespace {

// One RTM_NEWQDISC message: parent, kind, optional tbf rate (bytes/s) and queue statistics.
std::vector<char> QdiscMessage(uint32_t parent, const char* kind, uint32_t tbf_rate, bool stats) {
  std::vector<char> buffer(4096);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buffer.data());
  nlh->nlmsg_type = RTM_NEWQDISC;
  auto* tcm = static_cast<tcmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(tcmsg)));
  tcm->tcm_ifindex = 7;
  tcm->tcm_parent = parent;
  mnl_attr_put_strz(nlh, TCA_KIND, kind);
  if (tbf_rate) {
    nlattr* options = mnl_attr_nest_start(nlh, TCA_OPTIONS);
    tc_tbf_qopt parms{};
    parms.rate.rate = tbf_rate;
    mnl_attr_put(nlh, TCA_TBF_PARMS, sizeof(parms), &parms);
    mnl_attr_nest_end(nlh, options);
  }
  if (stats) {
    nlattr* nest = mnl_attr_nest_start(nlh, TCA_STATS2);
    gnet_stats_queue queue{.qlen = 3, .backlog = 4500, .drops = 2, .requeues = 0, .overlimits = 41};
    mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(queue), &queue);
    mnl_attr_nest_end(nlh, nest);
  }
  buffer.resize(nlh->nlmsg_len);
  return buffer;
}

TEST(LinkReader, ParsesARootTbfQdisc) {
  const auto message = QdiscMessage(TC_H_ROOT, "tbf", 125'000'000 / 8, true);
  const auto q = ParseQdiscMessage(message.data(), message.size());
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->ifindex, 7);
  EXPECT_EQ(q->kind, "tbf");
  ASSERT_TRUE(q->rate_bps.has_value());
  EXPECT_DOUBLE_EQ(*q->rate_bps, 125e6);
  EXPECT_TRUE(q->has_stats);
  EXPECT_EQ(q->backlog_bytes, 4500u);
  EXPECT_EQ(q->drops, 2u);
  EXPECT_EQ(q->overlimits, 41u);
}

TEST(LinkReader, OtherQdiscsHaveNoRateAndChildrenAreSkipped) {
  const auto fq = QdiscMessage(TC_H_ROOT, "fq_codel", 0, true);
  const auto q = ParseQdiscMessage(fq.data(), fq.size());
  ASSERT_TRUE(q.has_value());
  EXPECT_FALSE(q->rate_bps.has_value());
  const auto child = QdiscMessage(0x10001, "tbf", 1000, true);
  EXPECT_FALSE(ParseQdiscMessage(child.data(), child.size()).has_value());
}

TEST(LinkReader, MalformedMessagesAreRefused) {
  auto message = QdiscMessage(TC_H_ROOT, "tbf", 1000, true);
  EXPECT_FALSE(ParseQdiscMessage(message.data(), 8).has_value());  // shorter than a header
  for (size_t cut = sizeof(nlmsghdr); cut < message.size(); cut += 3)
    EXPECT_FALSE(ParseQdiscMessage(message.data(), cut).has_value()) << cut;  // truncated: nlmsg_len too long
  // An attribute whose length runs past the message.
  auto broken = message;
  auto* nlh = reinterpret_cast<nlmsghdr*>(broken.data());
  auto* first = reinterpret_cast<nlattr*>(broken.data() + MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(tcmsg)));
  first->nla_len = static_cast<uint16_t>(nlh->nlmsg_len);
  EXPECT_FALSE(ParseQdiscMessage(broken.data(), broken.size()).has_value());
}

// As root: a namespace with a veth pair, one end shaped by tbf at 100 Mbit/s, and a process inside it.
class RealNamespace : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (std::system("command -v ip >/dev/null && command -v tc >/dev/null") != 0) GTEST_SKIP() << "needs ip and tc";
    name_ = "strata-lrt-" + std::to_string(::getpid());
    const std::string ns = " -n " + name_ + " ";
    ASSERT_EQ(std::system(("ip netns add " + name_).c_str()), 0);
    created_ = true;
    ASSERT_EQ(std::system(("ip" + ns + "link add va type veth peer name vb").c_str()), 0);
    ASSERT_EQ(std::system(("tc" + ns + "qdisc add dev va root tbf rate 100mbit burst 64kb latency 5ms").c_str()), 0);
    child_ = ::fork();
    ASSERT_GE(child_, 0);
    if (child_ == 0) {
      ::execlp("ip", "ip", "netns", "exec", name_.c_str(), "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Wait until the child is inside the namespace (its ns/net differs from ours).
    struct stat own, theirs;
    ::stat("/proc/self/ns/net", &own);
    for (int i = 0; i < 200; ++i) {
      if (::stat(("/proc/" + std::to_string(child_) + "/ns/net").c_str(), &theirs) == 0 && theirs.st_ino != own.st_ino)
        return;
      ::usleep(10000);
    }
    FAIL() << "the child never entered " << name_;
  }
  void TearDown() override {
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, nullptr, 0);
    }
    if (created_) std::system(("ip netns del " + name_).c_str());
  }
  std::string name_;
  bool created_ = false;
  pid_t child_ = -1;
};

TEST_F(RealNamespace, ReadsCapacityAndQueueOfEachInterface) {
  struct stat before, after;
  ::stat("/proc/thread-self/ns/net", &before);
  HostCounterSampler::Options options;
  options.nvml = false;
  HostCounterSampler sampler(options);
  sampler.SetPids({child_});
  std::vector<CounterSample> samples;
  sampler.Sample(1, &samples);
  sampler.Sample(2, &samples);
  ::stat("/proc/thread-self/ns/net", &after);
  EXPECT_EQ(before.st_ino, after.st_ino) << "the sampling thread changed namespace";

  auto value = [&](const std::string& name, const std::string& label) -> std::optional<double> {
    std::optional<double> v;
    for (const CounterSample& s : samples) {
      const CounterSeries& series = sampler.series()[s.series];
      if (series.name == name && series.pid == child_ && series.label == label) v = s.value;
    }
    return v;
  };
  ASSERT_TRUE(value("net.link_capacity_bps", "va").has_value()) << "no capacity for the shaped end";
  EXPECT_DOUBLE_EQ(*value("net.link_capacity_bps", "va"), 100e6);
  ASSERT_TRUE(value("net.link_capacity_bps", "vb").has_value());
  EXPECT_DOUBLE_EQ(*value("net.link_capacity_bps", "vb"), 10e9);  // veth's reported speed
  EXPECT_TRUE(value("net.qdisc.backlog_bytes", "va").has_value());
  EXPECT_TRUE(value("net.qdisc.overlimits", "va").has_value());
  EXPECT_FALSE(value("net.link_capacity_bps", "lo").has_value());
  for (const auto& w : sampler.TakeWarnings()) EXPECT_EQ(w.find("namespace"), std::string::npos) << w;
}

// A namespace first reached through a process that has left by the time it is entered (a short-lived helper of
// a rank) is read through the next process named for it, not skipped for the rest of the recording.
TEST_F(RealNamespace, ANamespaceWhoseProcessLeftIsReadThroughTheNext) {
  struct stat theirs;
  ASSERT_EQ(::stat(("/proc/" + std::to_string(child_) + "/ns/net").c_str(), &theirs), 0);
  const pid_t gone = ::fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);  // reaped: /proc/<gone> no longer exists
  SeriesTable table;
  Diagnostics diag;
  std::vector<CounterSample> samples;
  LinkReader reader("/proc");
  CounterSink first(&table, &diag, 1, &samples);
  reader.Sample(theirs.st_ino, gone, {"va"}, first);
  EXPECT_TRUE(samples.empty());
  CounterSink second(&table, &diag, 2, &samples);
  reader.Sample(theirs.st_ino, child_, {"va"}, second);
  bool capacity = false;
  for (const CounterSample& s : samples)
    capacity |= table.series()[s.series].name == "net.link_capacity_bps" && s.value == 100e6;
  EXPECT_TRUE(capacity) << "the namespace was not read through its live process";
  for (const auto& w : diag.Take()) EXPECT_EQ(w.find("not read for a network namespace"), std::string::npos) << w;
}

}  // namespace
}  // namespace strata::recorder
