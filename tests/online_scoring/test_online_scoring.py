"""The online path's scoring (bench/accuracy_lib/online_scoring.py, issue 47 item 6) on hand-worked cases:
detection latency from the onset, a missed episode, an alarm in a clean gap counted once however many polls it
lasts, the grace period after an episode, alarms naming the wrong rank (or no rank) during an episode counted as
false alarms, an alarm open since before the onset not detecting it, false alarms per clean hour; and invariants
over random schedules (latency never negative, detected + missed = episodes, every alarm either a true one of an
episode or a false alarm); and every published bench/online_accuracy results file scoring again, from its truth
and polls alone, to the figures it stores."""
import json
import os
import random
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
from accuracy_lib import online_scoring as S  # noqa: E402
from accuracy_lib.online_scoring import JOB  # noqa: E402


def polls(t0, t1, named=lambda t: set(), every=0.5):
    """Polls every `every` s over [t0, t1], each naming named(t)."""
    out, t = [], t0
    while t <= t1 + 1e-9:
        out.append((round(t, 3), set(named(t))))
        t += every
    return out


def ep(start, end, rank=1, extra_ms=6.0):
    return {"rank": rank, "kind": "compute", "start_unix": start, "end_unix": end, "extra_ms": extra_ms}


class HandWorked(unittest.TestCase):
    def test_detection_at_onset_plus_3s(self):
        # Episode 100-130 s on rank 1; rank 1 named from 103 s to 134 s (closing 4 s after the end).
        r = S.score([ep(100, 130)], polls(0, 200, lambda t: {1} if 103 <= t <= 134 else set()), 0, 200)
        e = r["episodes"][0]
        self.assertEqual(e["outcome"], "detected")
        self.assertAlmostEqual(e["latency_s"], 3.0)
        self.assertAlmostEqual(e["cleared_after_s"], 4.0)
        s = r["summary"]
        self.assertEqual((s["detected"], s["missed"], s["false_alarms"]), (1, 0, 0))
        self.assertEqual(s["detected_within"], 1)
        self.assertAlmostEqual(s["share_detected_within"], 1.0)
        # clean time: 200 s observed minus the window 100-140 s
        self.assertAlmostEqual(s["clean_s"], 160.0)
        self.assertEqual(s["false_alarms_per_clean_hour"], 0.0)

    def test_missed_episode(self):
        # Nothing named during 100-130 s; rank 1 named at 145 s: past the 10 s grace, so a miss and a false alarm.
        r = S.score([ep(100, 130)], polls(0, 200, lambda t: {1} if 145 <= t <= 150 else set()), 0, 200)
        self.assertEqual(r["episodes"][0]["outcome"], "missed")
        self.assertIsNone(r["episodes"][0]["latency_s"])
        s = r["summary"]
        self.assertEqual((s["detected"], s["missed"], s["false_alarms"], s["false_alarms_in_clean"]), (0, 1, 1, 1))
        self.assertIsNone(s["latency_median_s"])
        self.assertEqual(s["share_detected_within"], 0.0)

    def test_grace_period(self):
        # Named 8 s after the end (in the grace): detected, late (latency 38 s, so not within 15 s).
        r = S.score([ep(100, 130)], polls(0, 200, lambda t: {1} if 138 <= t <= 142 else set()), 0, 200)
        self.assertEqual(r["episodes"][0]["outcome"], "detected")
        self.assertAlmostEqual(r["episodes"][0]["latency_s"], 38.0)
        self.assertEqual(r["summary"]["detected_within"], 0)
        self.assertEqual(r["summary"]["false_alarms"], 0)
        # The same with no grace: a miss, and the alarm a false one.
        r = S.score([ep(100, 130)], polls(0, 200, lambda t: {1} if 138 <= t <= 142 else set()), 0, 200, grace_s=0)
        self.assertEqual(r["episodes"][0]["outcome"], "missed")
        self.assertEqual(r["summary"]["false_alarms_in_clean"], 1)
        self.assertAlmostEqual(r["summary"]["clean_s"], 170.0)

    def test_clean_gap_alarm_counted_once(self):
        # Rank 0 named for 40 consecutive polls (20 s) in a clean run: one false alarm; then again later: two.
        one = S.score([], polls(0, 3600, lambda t: {0} if 1000 <= t < 1020 else set()), 0, 3600)
        self.assertEqual(one["summary"]["false_alarms"], 1)
        self.assertEqual(one["false_alarms"][0]["polls"], 40)
        self.assertAlmostEqual(one["summary"]["false_alarms_per_clean_hour"], 1.0)
        two = S.score([], polls(0, 1800, lambda t: {0} if 100 <= t < 120 or 500 <= t < 501 else set()), 0, 1800)
        self.assertEqual(two["summary"]["false_alarms"], 2)
        self.assertAlmostEqual(two["summary"]["false_alarms_per_clean_hour"], 4.0)  # 2 in half an hour

    def test_failed_polls_do_not_split_an_alarm(self):
        # The polls between 1005 and 1010 s failed (left out): still one alarm.
        p = [x for x in polls(0, 3600, lambda t: {0} if 1000 <= t < 1020 else set()) if not 1005 <= x[0] <= 1010]
        self.assertEqual(S.score([], p, 0, 3600)["summary"]["false_alarms"], 1)

    def test_wrong_rank_during_episode_is_a_false_alarm(self):
        # Episode on rank 1; rank 0 named at 105-110 s and a rankless finding at 112 s; rank 1 at 115 s.
        def named(t):
            return ({0} if 105 <= t <= 110 else set()) | ({JOB} if 112 <= t <= 113 else set()) | (
                {1} if 115 <= t <= 131 else set())
        r = S.score([ep(100, 130)], polls(0, 200, named), 0, 200)
        self.assertEqual(r["episodes"][0]["outcome"], "detected")
        self.assertAlmostEqual(r["episodes"][0]["latency_s"], 15.0)
        s = r["summary"]
        self.assertEqual((s["false_alarms"], s["false_alarms_in_episodes"], s["false_alarms_in_clean"]), (2, 2, 0))
        self.assertEqual(sorted(str(a["key"]) for a in r["false_alarms"]), ["0", JOB])
        self.assertEqual(s["detected_within"], 1)  # 15 s is within 15 s
        self.assertEqual(s["false_alarms_per_clean_hour"], 0.0)
        self.assertAlmostEqual(s["false_alarms_per_hour_all"], 2 / (200 / 3600))

    def test_alarm_open_since_before_onset_does_not_detect(self):
        # Rank 1 named from 90 s (clean time) through the episode 100-130 s: a false alarm, and the episode missed.
        r = S.score([ep(100, 130)], polls(0, 200, lambda t: {1} if 90 <= t <= 135 else set()), 0, 200)
        self.assertEqual(r["episodes"][0]["outcome"], "missed")
        self.assertIn("before the onset", r["episodes"][0]["note"])
        self.assertEqual(r["summary"]["false_alarms_in_clean"], 1)
        # It closes at 104 s and opens again at 106 s: that second alarm detects it (latency 6 s).
        r = S.score([ep(100, 130)], polls(0, 200, lambda t: {1} if 90 <= t <= 104 or 106 <= t <= 130 else set()), 0, 200)
        self.assertEqual(r["episodes"][0]["outcome"], "detected")
        self.assertAlmostEqual(r["episodes"][0]["latency_s"], 6.0)
        self.assertEqual(r["summary"]["false_alarms"], 1)

    def test_two_episodes_each_scored_on_its_own(self):
        # Episodes 100-120 (rank 1) and 200-230 (rank 1): the first seen at 102 s, the second never; one alarm
        # re-opening within the first's window is the same episode's, not a false alarm.
        def named(t):
            return {1} if 102 <= t <= 110 or 112 <= t <= 121 else set()
        r = S.score([ep(200, 230), ep(100, 120)], polls(0, 300, named), 0, 300)
        self.assertEqual([e["outcome"] for e in r["episodes"]], ["detected", "missed"])  # sorted by onset
        self.assertAlmostEqual(r["episodes"][0]["latency_s"], 2.0)
        self.assertEqual(r["summary"]["false_alarms"], 0)
        self.assertAlmostEqual(r["summary"]["clean_s"], 300 - 30 - 40)
        self.assertAlmostEqual(r["summary"]["latency_median_s"], 2.0)

    def test_percentiles(self):
        self.assertEqual(S.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50), 5.5)
        self.assertAlmostEqual(S.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90), 9.1)
        self.assertEqual(S.percentile([4], 90), 4)
        self.assertIsNone(S.percentile([], 50))

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            S.score([], [], 10, 5)
        with self.assertRaises(ValueError):
            S.score([ep(100, 90)], [], 0, 200)
        with self.assertRaises(ValueError):
            S.alarms([(5, {1}), (4, {1})])
        with self.assertRaises(ValueError):
            S.score([], [], 0, 10, grace_s=-1)


class Invariants(unittest.TestCase):
    def test_random_schedules(self):
        rng = random.Random(4706)
        for trial in range(300):
            eps, t = [], rng.uniform(20, 60)
            ranks = rng.choice([2, 4])
            for _ in range(rng.randint(0, 8)):
                d = rng.uniform(10, 40)
                eps.append(ep(t, t + d, rank=rng.randrange(ranks)))
                t += d + rng.uniform(20, 60)
            end = t + 20
            state = {k: False for k in list(range(ranks)) + [JOB]}

            def named(_t):
                for k in state:  # each key flips now and then
                    if rng.random() < 0.03:
                        state[k] = not state[k]
                return {k for k, on in state.items() if on}
            p = [x for x in polls(0, end, named) if rng.random() > 0.05]  # some polls failed
            r = S.score(eps, p, 0, end, grace_s=rng.choice([0, 5, 10]))
            s = r["summary"]
            self.assertEqual(s["episodes"], len(eps))
            self.assertEqual(s["detected"] + s["missed"], len(eps))
            lat = [e["latency_s"] for e in r["episodes"] if e["outcome"] == "detected"]
            self.assertTrue(all(x >= 0 for x in lat), lat)
            # a detection happens before its window closes
            for e in r["episodes"]:
                if e["outcome"] == "detected":
                    self.assertLessEqual(e["alarm_start"], e["end_unix"] + s["grace_s"] + 1e-9)
            # every alarm is either the first true alarm of an episode, a later true alarm, or a false alarm
            found = S.alarms(p)
            true_starts = {(e["rank"], e["alarm_start"]) for e in r["episodes"] if e["outcome"] == "detected"}
            self.assertLessEqual(len(true_starts) + s["false_alarms"], len(found))
            self.assertEqual(s["false_alarms"], s["false_alarms_in_clean"] + s["false_alarms_in_episodes"])
            self.assertTrue(0 <= s["clean_s"] <= s["observed_s"] + 1e-9)
            if s["latency_median_s"] is not None:
                self.assertLessEqual(s["latency_median_s"], s["latency_p90_s"] + 1e-9)
                self.assertLessEqual(s["latency_p90_s"], s["latency_max_s"] + 1e-9)
            self.assertLessEqual(s["detected_within"], s["detected"])
            # naming nothing at all: every episode missed, no false alarm
            quiet = S.score(eps, [(x[0], set()) for x in p], 0, end)["summary"]
            self.assertEqual((quiet["missed"], quiet["false_alarms"]), (len(eps), 0))
            # naming each episode's rank from its onset to its end detects every one, at latency < one poll
            # (when episodes on one rank do not touch within the grace), with no false alarm
            exact = [(pt, {e["rank"] for e in eps if e["start_unix"] <= pt <= e["end_unix"]}) for pt, _ in
                     polls(0, end)]
            ex = S.score(eps, exact, 0, end, grace_s=0)
            self.assertEqual(ex["summary"]["detected"], len(eps))
            self.assertEqual(ex["summary"]["false_alarms"], 0)
            self.assertTrue(all(e["latency_s"] <= 0.5 + 1e-9 for e in ex["episodes"]))


class MachineShare(unittest.TestCase):
    """A false alarm's run-queue excess: the named rank's wait over [start - RQ_LEAD_S, end] beyond its peers'
    median; reported beside the figures, never changing them."""

    def test_excess_over_the_alarm_against_the_peers_median(self):
        rq = [(0.0, {0: 0.0, 1: 0.0, 2: 0.0}), (8.0, {0: 5.0, 1: 6.0, 2: 4.0}),
              (10.0, {0: 45.0, 1: 7.0, 2: 5.0}), (12.0, {0: 50.0, 1: 8.0, 2: 6.0})]
        alarms = [{"key": 0, "start": 10.0, "end": 12.0}, {"key": 1, "start": 10.0, "end": 12.0},
                  {"key": S.JOB, "start": 10.0, "end": 12.0}]
        out, reached, judged = S.machine_share(alarms, rq)
        self.assertEqual(out[0]["rq_excess_ms"], 50.0 - 5.0 - (2.0 + 2.0) / 2)  # from t=8 (10 - 2 s) to 12
        self.assertEqual(out[1]["rq_excess_ms"], 2.0 - (45.0 + 2.0) / 2)
        self.assertIsNone(out[2]["rq_excess_ms"], "a finding naming no rank is not judged")
        self.assertEqual((reached, judged), (1, 2))
        self.assertNotIn("rq_excess_ms", alarms[0], "the input is not changed")

    def test_no_samples_or_no_peers_judge_nothing(self):
        alarm = [{"key": 0, "start": 1.0, "end": 2.0}]
        self.assertEqual(S.machine_share(alarm, [])[1:], (0, 0))
        self.assertEqual(S.machine_share(alarm, [(0.0, {0: 0.0}), (3.0, {0: 99.0})])[1:], (0, 0))

    def test_the_figures_do_not_change(self):
        truth = [{"rank": 1, "start_unix": 100.0, "end_unix": 120.0}]
        polls = [(t, {0} if 50 <= t < 53 else ({1} if 102 <= t < 125 else set())) for t in range(0, 200)]
        plain = S.score(truth, polls, 0, 199)
        shared = S.with_machine_share(S.score(truth, polls, 0, 199),
                                      [[float(t), {"0": 10.0 * t, "1": 0.0}] for t in range(0, 200, 5)])
        share = shared["summary"].pop("false_alarms_machine_share")
        self.assertEqual(shared["summary"], plain["summary"])
        self.assertEqual(share, {"reached": 1, "judged": 1, "threshold_ms": S.MACHINE_RQ_MS})


class PublishedResults(unittest.TestCase):
    """Each bench/results/*-online-*.json (bench/online_accuracy --json) scores again, from its truth and polls
    alone, to the summaries it stores (the figures docs/accuracy.md quotes are the file's)."""

    def test_results_files_rescore_to_their_figures(self):
        res = os.path.join(HERE, "..", "..", "bench", "results")
        files = sorted(f for f in os.listdir(res) if "-online-" in f and f.endswith(".json"))
        self.assertTrue(files, "no bench/results/*-online-*.json (docs/accuracy.md cites one)")
        for name in files:
            with open(os.path.join(res, name)) as f:
                doc = json.load(f)
            for run in doc["runs"]:
                again = S.rescore(run, doc["run"]["grace_s"])
                self.assertTrue(again, f"{name} {run['name']}: nothing scored")
                for view, r in again.items():
                    self.assertEqual(r["summary"], run["scores"][view]["summary"], f"{name} {run['name']} {view}")
                    self.assertEqual(r["summary"]["detected"] + r["summary"]["missed"], len(run["truth"]))


if __name__ == "__main__":
    unittest.main()
