"""cgroup v1/v2 handling against fake directory trees (no root, no real cgroup needed).

usage: python3 -m unittest discover -s lab/tests    (from the repository root)
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from injectors.cgroup import Cgroups  # noqa: E402


def put(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def get(path):
    with open(path) as f:
        return f.read()


class FakeTrees(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_detects_pure_v2(self):
        put(f"{self.root}/cgroup.controllers", "cpuset cpu io memory pids\n")
        cg = Cgroups.detect(self.root)
        self.assertEqual((cg.version, cg.root), (2, self.root))

    def test_detects_v1_and_hybrid_without_v2_controllers(self):
        os.makedirs(f"{self.root}/cpu")
        os.makedirs(f"{self.root}/memory")
        put(f"{self.root}/unified/cgroup.controllers", "hugetlb\n")  # this machine: v2 mounted, no controllers
        cg = Cgroups.detect(self.root)
        self.assertEqual((cg.version, cg.root), (1, self.root))

    def test_detects_hybrid_with_v2_controllers(self):
        os.makedirs(f"{self.root}/cpu")
        put(f"{self.root}/unified/cgroup.controllers", "cpu memory\n")
        cg = Cgroups.detect(self.root)
        self.assertEqual((cg.version, cg.root), (2, f"{self.root}/unified"))

    def test_v2_group_quota_limit_and_membership(self):
        put(f"{self.root}/cgroup.controllers", "cpu memory pids\n")
        put(f"{self.root}/cgroup.subtree_control", "")
        cg = Cgroups.detect(self.root)
        g = cg.create("strata-lab-1-cpu-r1", ["cpu", "memory"])
        # the controllers were delegated to children: the kernel takes "+cpu" and "+memory" writes
        self.assertEqual(get(f"{self.root}/cgroup.subtree_control"), "+memory")  # last write (a fake file)
        d = f"{self.root}/strata-lab-1-cpu-r1"
        self.assertTrue(os.path.isdir(d))
        g.add(1234)
        self.assertEqual(get(f"{d}/cgroup.procs"), "1234")
        g.set_cpu_quota(6000, 20000)
        self.assertEqual(get(f"{d}/cpu.max"), "6000 20000")
        g.set_cpu_quota(None, 20000)
        self.assertEqual(get(f"{d}/cpu.max"), "max 20000")
        self.assertEqual(g.cpu_quota_knob(6000, 20000), (f"{d}/cpu.max", "6000 20000", "max 20000"))
        g.set_memory_limit(100 << 20)
        self.assertEqual(get(f"{d}/memory.max"), str(100 << 20))
        g.set_memory_limit(None)
        self.assertEqual(get(f"{d}/memory.max"), "max")
        put(f"{d}/cpu.stat", "usage_usec 900\nuser_usec 800\nsystem_usec 100\nnr_periods 10\nnr_throttled 4\n"
                             "throttled_usec 5000\n")
        self.assertEqual(g.cpu_stat(), {"nr_periods": 10, "nr_throttled": 4, "throttled_us": 5000, "usage_us": 900})
        self.assertEqual(cg.groups_with_prefix("strata-lab-1-"), ["strata-lab-1-cpu-r1"])

    def test_v2_missing_controller_is_an_error(self):
        put(f"{self.root}/cgroup.controllers", "pids\n")
        put(f"{self.root}/cgroup.subtree_control", "")
        with self.assertRaisesRegex(RuntimeError, "lacks the cpu"):
            Cgroups(2, self.root).create("strata-lab-1-x", ["cpu"])

    def test_v1_group_quota_and_limit(self):
        os.makedirs(f"{self.root}/cpu")
        os.makedirs(f"{self.root}/memory")
        cg = Cgroups.detect(self.root)
        g = cg.create("strata-lab-2-g", ["cpu", "memory"])
        g.set_cpu_quota(6000, 20000)
        d = f"{self.root}/cpu/strata-lab-2-g"
        self.assertEqual((get(f"{d}/cpu.cfs_period_us"), get(f"{d}/cpu.cfs_quota_us")), ("20000", "6000"))
        self.assertEqual(g.cpu_quota_knob(6000, 20000), (f"{d}/cpu.cfs_quota_us", "6000", "-1"))
        g.set_memory_limit(None)
        self.assertEqual(get(f"{self.root}/memory/strata-lab-2-g/memory.limit_in_bytes"), "-1")
        g.add(99)
        self.assertEqual(get(f"{self.root}/memory/strata-lab-2-g/cgroup.procs"), "99")
        self.assertEqual(g.dirs(), [d, f"{self.root}/memory/strata-lab-2-g"])

    def test_cpu_weight_is_that_of_one_task_of_the_niceness(self):
        # the kernel's sched_prio_to_weight: nice 0 -> 1024, -10 -> 9548, 5 -> 335 (v1 cpu.shares)
        os.makedirs(f"{self.root}/cpu")
        os.makedirs(f"{self.root}/memory")
        g = Cgroups.detect(self.root).create("strata-lab-3-spin-r1", ["cpu"])
        for nice, kernel in ((0, 1024), (-10, 9548), (5, 335)):
            g.set_cpu_weight(nice)
            shares = int(get(f"{self.root}/cpu/strata-lab-3-spin-r1/cpu.shares"))
            self.assertLess(abs(shares - kernel), 0.02 * kernel, (nice, shares))
        put(f"{self.root}/v2/cgroup.controllers", "cpu\n")
        put(f"{self.root}/v2/cgroup.subtree_control", "")
        g2 = Cgroups(2, f"{self.root}/v2").create("strata-lab-3-spin-r1", ["cpu"])
        g2.set_cpu_weight(0)
        self.assertEqual(get(f"{self.root}/v2/strata-lab-3-spin-r1/cpu.weight"), "100")
        g2.set_cpu_weight(-10)
        self.assertEqual(get(f"{self.root}/v2/strata-lab-3-spin-r1/cpu.weight"), "931")


if __name__ == "__main__":
    unittest.main()
