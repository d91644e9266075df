#!/usr/bin/env python3
"""Records the bundled example: a small 2-rank DistributedDataParallel job (CPU, gloo) on this machine,
profiled with the PyTorch profiler, one Kineto trace per rank (gzip). Rank 1 does extra compute in every
step (an injected slow_compute fault), so the example has something to find.

usage: /usr/bin/python3 examples/make_ddp_example.py OUT_DIR [--steps N] [--slow-rank R]
"""
import argparse
import gzip
import os
import shutil
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world, port, out_dir, steps, slow_rank):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
    torch.set_num_threads(1)
    try:
        os.sched_setaffinity(0, {rank % os.cpu_count()})
    except OSError:
        pass
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(64, 256)
    y = torch.randint(0, 10, (64,))
    extra = torch.randn(384, 384)
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=steps)
    tmp = tempfile.mkdtemp()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=schedule,
                                on_trace_ready=lambda p: p.export_chrome_trace(os.path.join(tmp, "trace.json"))) as prof:
        for _ in range(steps + 2):
            with torch.profiler.record_function("forward_backward"):
                loss = torch.nn.functional.cross_entropy(ddp(x), y)
                if rank == slow_rank:
                    with torch.profiler.record_function("injected_extra_compute"):
                        for _ in range(12):
                            extra = torch.tanh(extra @ extra)
                opt.zero_grad()
                loss.backward()
                opt.step()
            prof.step()
    with open(os.path.join(tmp, "trace.json"), "rb") as src, gzip.open(
            os.path.join(out_dir, f"rank-{rank}.json.gz"), "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    shutil.rmtree(tmp)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--slow-rank", type=int, default=1)
    ap.add_argument("--world", type=int, default=2)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    mp.spawn(worker, args=(a.world, free_port(), a.out_dir, a.steps, a.slow_rank), nprocs=a.world, join=True)


if __name__ == "__main__":
    sys.exit(main())
