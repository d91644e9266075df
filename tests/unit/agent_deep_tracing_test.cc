// Deep tracing on demand (agent/deep_tracing.h): windows that open, extend and close on their own, never longer
// than kMaxDeepS; who may call POST /api/v1/deep (loopback without a token, the token's holders with one), over
// a real HTTP server; and the flight recorder switching its recorder to the deep rates and back through a new
// chunk (the recorder here is a script that writes down its arguments).
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/deep_tracing.h"
#include "agent/flight_recorder.h"
#include "agent/http_front.h"
#include "test_util.h"

namespace strata::agent {
namespace {

TEST(AgentDeepTracing, AWindowOpensExtendsAndClosesOnItsOwn) {
  DeepSchedule d;
  EXPECT_FALSE(d.Active(0));
  EXPECT_TRUE(d.Request(100, 1000, 60, "detection: rank 1 slow_compute"));
  EXPECT_TRUE(d.Active(100));
  EXPECT_TRUE(d.Pending(100)) << "its recorder is not attached yet";
  d.Begin(104, 1004);  // the deep recorder attached 4 s after the request
  EXPECT_FALSE(d.Pending(104));
  EXPECT_TRUE(d.Active(163.9));
  EXPECT_FALSE(d.Active(164)) << "ends 60 s after its recorder attached";
  EXPECT_DOUBLE_EQ(d.until_unix(), 1064);
  EXPECT_EQ(d.opened(), 1u);
  d.Begin(110, 1010);
  EXPECT_FALSE(d.Active(164)) << "Begin moves only a pending window";
  // A shorter request inside the window changes nothing; a longer one extends it without opening another.
  EXPECT_FALSE(d.Request(110, 1010, 10, "requested over HTTP"));
  EXPECT_EQ(d.reason(), "detection: rank 1 slow_compute");
  EXPECT_TRUE(d.Request(150, 1050, 30, "requested over HTTP"));
  EXPECT_TRUE(d.Active(179));
  EXPECT_FALSE(d.Active(180));
  EXPECT_EQ(d.opened(), 1u);
  EXPECT_EQ(d.reason(), "requested over HTTP");
  // After it closed, a request opens a new one; none lasts past kMaxDeepS; nonsense opens nothing.
  EXPECT_TRUE(d.Request(1000, 2000, 1e9, "requested over HTTP"));
  EXPECT_EQ(d.opened(), 2u);
  d.Begin(1000, 2000);
  EXPECT_TRUE(d.Active(1000 + kMaxDeepS - 1));
  EXPECT_FALSE(d.Active(1000 + kMaxDeepS));
  DeepSchedule none;
  EXPECT_FALSE(none.Request(0, 0, 0, "x"));
  EXPECT_FALSE(none.Request(0, 0, -5, "x"));
  EXPECT_FALSE(none.Request(0, 0, std::nan(""), "x"));
  EXPECT_EQ(none.opened(), 0u);
}

// A window's seconds count from its recorder's attaching: a switch that takes most of a short window (CI of
// 8972ac3, agent_deep) still gets the seconds asked. A recorder that never attaches leaves the window open
// kDeepAttachWaitS past its seconds, no longer; one that attaches late gets what is left of that bound; a
// longer request while pending asks more seconds from the attaching.
TEST(AgentDeepTracing, AWindowCountsFromItsRecorderAttaching) {
  DeepSchedule never;
  never.Request(0, 0, 10, "requested over HTTP");
  EXPECT_TRUE(never.Active(10 + kDeepAttachWaitS - 0.1));
  EXPECT_TRUE(never.Pending(10 + kDeepAttachWaitS - 0.1));
  EXPECT_FALSE(never.Active(10 + kDeepAttachWaitS));
  EXPECT_FALSE(never.Pending(10 + kDeepAttachWaitS)) << "an expired window is not pending";
  DeepSchedule slow;  // a switch of 8 s in a 8 s window
  slow.Request(0, 100, 8, "detection: rank 1 gc_pause");
  EXPECT_EQ(slow.began_unix(), 0) << "pending: its seconds have not begun";
  slow.Begin(8, 108);
  EXPECT_TRUE(slow.Active(15.9));
  EXPECT_FALSE(slow.Active(16));
  EXPECT_DOUBLE_EQ(slow.until_unix(), 116);
  EXPECT_DOUBLE_EQ(slow.began_unix(), 108) << "the status shows when its seconds began";
  slow.Request(200, 300, 8, "requested over HTTP");
  EXPECT_EQ(slow.began_unix(), 0) << "a new window is pending again";
  DeepSchedule late;
  late.Request(0, 0, 10, "requested over HTTP");
  late.Begin(35, 35);
  EXPECT_TRUE(late.Active(10 + kDeepAttachWaitS - 0.1));
  EXPECT_FALSE(late.Active(10 + kDeepAttachWaitS)) << "bounded by the request, not by the attaching";
  DeepSchedule more;
  more.Request(0, 0, 10, "detection");
  EXPECT_FALSE(more.Request(2, 2, 10, "requested over HTTP")) << "not longer";
  EXPECT_TRUE(more.Request(5, 5, 20, "requested over HTTP"));
  EXPECT_EQ(more.opened(), 1u);
  more.Begin(8, 8);
  EXPECT_TRUE(more.Active(27.9));
  EXPECT_FALSE(more.Active(28));
}

// A detection opens no window within kDeepRefractoryS of the last one's end (each switch perturbs the job, and
// the perturbation was itself detected); a request by hand does, and a detection inside a window extends it.
TEST(AgentDeepTracing, DetectionsOpenNoWindowRightAfterOne) {
  DeepSchedule d;
  EXPECT_TRUE(d.RequestOnDetection(0, 0, 10, "detection: rank 1 slow_compute")) << "the first opens";
  d.Begin(0, 0);
  EXPECT_TRUE(d.RequestOnDetection(5, 5, 10, "detection: rank 0 unknown")) << "inside the window: extends it";
  EXPECT_FALSE(d.Active(15));
  EXPECT_FALSE(d.RequestOnDetection(16, 16, 10, "detection: rank 0 unknown"));
  EXPECT_FALSE(d.RequestOnDetection(15 + kDeepRefractoryS - 1, 0, 10, "detection"));
  EXPECT_EQ(d.opened(), 1u);
  EXPECT_TRUE(d.RequestOnDetection(15 + kDeepRefractoryS, 0, 10, "detection: rank 1 slow_compute"));
  EXPECT_EQ(d.opened(), 2u);
  DeepSchedule by_hand;
  EXPECT_TRUE(by_hand.Request(0, 0, 10, "requested over HTTP"));
  by_hand.Begin(0, 0);
  EXPECT_TRUE(by_hand.Request(11, 11, 10, "requested over HTTP")) << "by hand: no refractory time";
  by_hand.Begin(11, 11);
  EXPECT_FALSE(by_hand.RequestOnDetection(22, 22, 10, "detection"));
}

TEST(AgentDeepTracing, LoopbackAddresses) {
  for (const char* a : {"127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"}) EXPECT_TRUE(IsLoopbackAddress(a)) << a;
  for (const char* a : {"10.0.0.1", "192.168.1.5", "::ffff:10.0.0.1", "fe80::1", "", "localhost", "128.0.0.1"})
    EXPECT_FALSE(IsLoopbackAddress(a)) << a;
}

TEST(AgentDeepTracing, ControlAccessWithAndWithoutAToken) {
  using V = ControlAccess::Verdict;
  const ControlAccess open;
  EXPECT_EQ(open.Check("127.0.0.1", ""), V::kAllowed);
  EXPECT_EQ(open.Check("10.1.2.3", ""), V::kNotLoopback);
  EXPECT_EQ(open.Check("10.1.2.3", "Bearer anything"), V::kNotLoopback) << "no token: no bearer is right";
  testing::TempDir dir;
  const std::string file = (std::filesystem::path(dir.path()) / "token").string();
  std::ofstream(file) << "  s3cret-token \nsecond line ignored\n";
  auto access = ControlAccess::FromTokenFile(file);
  ASSERT_TRUE(access.ok()) << access.error();
  const ControlAccess& a = access.value();
  EXPECT_EQ(a.Check("10.1.2.3", "Bearer s3cret-token"), V::kAllowed);
  EXPECT_EQ(a.Check("127.0.0.1", ""), V::kNeedsToken) << "with a token, loopback needs it too";
  EXPECT_EQ(a.Check("127.0.0.1", "Bearer s3cret"), V::kWrongToken);
  EXPECT_EQ(a.Check("127.0.0.1", "Bearer s3cret-token2"), V::kWrongToken);
  EXPECT_EQ(a.Check("127.0.0.1", "Basic s3cret-token"), V::kNeedsToken);
  // A file that cannot be read or holds no token is an error naming it.
  std::ofstream(file) << "\n";
  EXPECT_NE(ControlAccess::FromTokenFile(file).error().find(file), std::string::npos);
  EXPECT_NE(ControlAccess::FromTokenFile(file + ".missing").error().find("cannot read"), std::string::npos);
}

// The HTTP status of `request` sent as written to 127.0.0.1:port (-1 when no status line comes back).
int RawStatus(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int status = -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char reply[64] = {};
    if (recv(fd, reply, sizeof reply - 1, MSG_WAITALL) > 12) status = std::atoi(reply + 9);  // "HTTP/1.1 202"
  }
  close(fd);
  return status;
}

// POST /api/v1/deep on a real server: the handler sees only allowed, well-formed requests.
TEST(AgentDeepTracing, DeepEndpointChecksCallerJobAndSeconds) {
  testing::TempDir dir;
  const std::string file = (std::filesystem::path(dir.path()) / "token").string();
  std::ofstream(file) << "tok-123\n";
  std::vector<std::pair<std::string, double>> seen;
  const DeepHandler handler = [&](const std::string& job, std::optional<double> seconds) {
    if (job != "job-a") return ControlReply{404, "{\"error\": \"no job\"}"};
    seen.emplace_back(job, seconds.value_or(-1));
    return ControlReply{202, "{}"};
  };
  for (bool with_token : {false, true}) {
    seen.clear();
    HttpFront front("test");
    front.SetDeepControl(with_token ? ControlAccess::FromTokenFile(file).value() : ControlAccess(), handler);
    ASSERT_TRUE(front.Start("127.0.0.1:0").ok());
    httplib::Client client("127.0.0.1", front.port());
    const httplib::Headers auth = {{"Authorization", "Bearer tok-123"}};
    const httplib::Headers headers = with_token ? auth : httplib::Headers{};
    auto post = [&](const std::string& path, const httplib::Headers& h) {
      auto res = client.Post(path, h, "", "application/x-www-form-urlencoded");
      return res ? res->status : -1;
    };
    EXPECT_EQ(post("/api/v1/deep?job=job-a&seconds=30", headers), 202) << with_token;
    EXPECT_EQ(post("/api/v1/deep?job=job-a", headers), 202) << "seconds default to the agent's";
    EXPECT_EQ(post("/api/v1/deep?job=job-b&seconds=30", headers), 404);
    EXPECT_EQ(post("/api/v1/deep?seconds=30", headers), 400) << "no job";
    EXPECT_EQ(post("/api/v1/deep?job=job-a&seconds=-1", headers), 400);
    EXPECT_EQ(post("/api/v1/deep?job=job-a&seconds=10x", headers), 400);
    auto form = client.Post("/api/v1/deep", headers, "job=job-a&seconds=7", "application/x-www-form-urlencoded");
    ASSERT_TRUE(form);
    EXPECT_EQ(form->status, 202) << "parameters in a form body";
    // `curl -X POST URL`, as docs/agent.md writes it, sends no Content-Length (httplib answered 400).
    EXPECT_EQ(RawStatus(front.port(), "POST /api/v1/deep?job=job-a&seconds=9 HTTP/1.1\r\nHost: x\r\n" +
                                          std::string(with_token ? "Authorization: Bearer tok-123\r\n" : "") +
                                          "Connection: close\r\n\r\n"),
              202)
        << "a POST with no body";
    if (with_token) {
      EXPECT_EQ(post("/api/v1/deep?job=job-a&seconds=30", {}), 401) << "no token";
      EXPECT_EQ(post("/api/v1/deep?job=job-a&seconds=30", {{"Authorization", "Bearer nope"}}), 401);
    }
    EXPECT_EQ(seen,
              (std::vector<std::pair<std::string, double>>{{"job-a", 30}, {"job-a", -1}, {"job-a", 7}, {"job-a", 9}}));
    auto get = client.Get("/api/v1/deep");
    ASSERT_TRUE(get);
    EXPECT_NE(get->status, 202) << "control is POST only";
    front.Stop();
  }
  // Without SetDeepControl (strata serve) there is no such endpoint.
  HttpFront plain("serve");
  ASSERT_TRUE(plain.Start("127.0.0.1:0").ok());
  httplib::Client client("127.0.0.1", plain.port());
  auto res = client.Post("/api/v1/deep?job=job-a", "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  plain.Stop();
}

// The flight recorder starts a chunk at the deep rates when the window opens and one at the always-on rates when
// it closes; a stalled job keeps its chunk whatever the window. The stand-in recorder writes its arguments into
// its chunk (args.txt) and stays alive until stopped.
TEST(AgentDeepTracing, FlightRecorderSwitchesRatesThroughANewChunk) {
  testing::TempDir dir;
  const std::string recorder = testing::WriteStandInRecorder(dir.path());
  FlightOptions o{recorder};
  o.sample_hz = 49;
  o.deep_sample_hz = 499;
  FlightRecorder flight((std::filesystem::path(dir.path()) / "job").string(), o);
  auto args = [&] {
    const std::string path = flight.newest_chunk() + "/args.txt";
    for (int i = 0; i < 300 && !std::filesystem::exists(path); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return testing::ReadFile(path);
  };
  flight.Update({4242}, 0.0, false, false);
  EXPECT_NE(args().find("--sample-hz 49"), std::string::npos) << args();
  EXPECT_FALSE(flight.newest_deep());
  flight.Update({4242}, 1.0, false, true);
  EXPECT_TRUE(flight.newest_deep());
  EXPECT_FALSE(flight.current_deep()) << "the deep recorder has not said it is attached";
  EXPECT_EQ(std::filesystem::path(flight.newest_chunk()).filename(), "chunk-000001");
  EXPECT_NE(args().find("--sample-hz 499 --counter-hz 50"), std::string::npos) << args();
  flight.Update({4242}, 2.0, false, true);
  EXPECT_EQ(std::filesystem::path(flight.newest_chunk()).filename(), "chunk-000001") << "one chunk per window";
  flight.Update({4242}, 3.0, /*hold_rotation=*/true, false);
  EXPECT_TRUE(flight.newest_deep()) << "a stalled job keeps its chunk";
  flight.Update({4242}, 4.0, false, false);
  EXPECT_FALSE(flight.newest_deep());
  EXPECT_EQ(std::filesystem::path(flight.newest_chunk()).filename(), "chunk-000002");
  EXPECT_NE(args().find("--sample-hz 49"), std::string::npos) << args();
  EXPECT_EQ(args().find("--counter-hz"), std::string::npos) << args();
  flight.Stop();
}

}  // namespace
}  // namespace strata::agent

#endif  // STRATA_HAVE_RECORDER
