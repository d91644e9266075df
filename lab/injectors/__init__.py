"""Faults the lab injects from outside the rank's code, each with a real mechanism (see base.py for the
protocol). The intermittent_* variants switch the same mechanism on only in ProfilerSteps whose number is a
multiple of --every."""
from .base import PREFIX, Context, Undo, device_ms_per_step, outside_fault_on_unrecorded, send_line  # noqa: F401
from .cpu import CpuContention, CpuThrottling
from .memory import MemoryPressure
from .network import NetworkContention, SlowCommunication, Topology  # noqa: F401

EXTERNAL = {
    "cpu_contention": CpuContention,
    "cpu_throttling": CpuThrottling,
    "memory_pressure": MemoryPressure,
    "slow_communication": SlowCommunication,
    "network_contention": NetworkContention,
    "intermittent_cpu_contention": CpuContention,
    "intermittent_cpu_throttling": CpuThrottling,
    "intermittent_network_contention": NetworkContention,
}
NETWORK = ("slow_communication", "network_contention", "intermittent_network_contention")
