"""Scale-out on a dask.distributed LocalCluster: an 8192 x 8192 float32 image in 16 chunks through max_pool2d,
avg_pool2d, adaptive_avg_pool2d and a bilinear resize. The results stay lazy until persisted, equal NumPy's on
the same data bit for bit, and a scheduler plugin records every task's input bytes: none exceeds one chunk
plus its halo (the poolspec Dask path reads, per output group, only the cells its taps reach)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import poolspec

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

N, C = 8192, 2048  # 16 chunks of 2048 x 2048
HALO = 8  # cells: more than any of these ops' windows reach past a chunk


class InputProbe(distributed.diagnostics.plugin.SchedulerPlugin):
    """The largest total size of a task's inputs, read when the task starts processing."""

    name = "poolspec-input-probe"

    def __init__(self, scheduler) -> None:
        self.scheduler = scheduler
        self.largest, self.worst, self.tasks = 0, None, 0

    def transition(self, key, start, finish, *args, **kwargs) -> None:
        if finish != "processing":
            return
        ts = self.scheduler.tasks.get(key)
        if ts is None:
            return
        self.tasks += 1
        size = sum(dep.nbytes for dep in ts.dependencies if dep.nbytes is not None and dep.nbytes > 0)
        if size > self.largest:
            self.largest, self.worst = size, key

    def reset(self) -> None:
        self.largest, self.worst, self.tasks = 0, None, 0


OPS = {
    "max_pool2d": lambda a: poolspec.max_pool2d(a, 3, stride=2, padding=1),
    "avg_pool2d": lambda a: poolspec.avg_pool2d(a, 3, stride=2, padding=1, count_include_pad=False),
    "adaptive_avg_pool2d": lambda a: poolspec.adaptive_avg_pool2d(a, (1000, 1000)),
    "bilinear": lambda a: poolspec.interpolate(a, size=(6000, 6000), mode="bilinear", antialias=False),
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # distributed's notes about ports and large graphs
def test_cluster_runs_chunk_local_and_equals_numpy(capsys):
    with distributed.LocalCluster(n_workers=4, threads_per_worker=1, processes=False, dashboard_address=None,
                                  # no memory limit: in-process workers would measure the whole pytest
                                  # worker's memory and pause once it passes 80% of the limit (a hang)
                                  memory_limit=0) as cluster, distributed.Client(cluster) as client:
        probe = InputProbe(cluster.scheduler)
        cluster.scheduler.add_plugin(probe)
        x = da.random.default_rng(0).standard_normal((1, 1, N, N), chunks=(1, 1, C, C), dtype=np.float32)
        x = x.persist()
        distributed.wait(x)
        assert x.npartitions == 16
        host = x.compute()
        chunk = C * C * 4
        allowed = (C + HALO) * C * 4
        lines = [f"{N}x{N} float32, {x.npartitions} chunks of {C}x{C}, {len(cluster.workers)} workers"]
        for name, fn in OPS.items():
            probe.reset()
            y = fn(x)
            assert isinstance(y, da.Array) and probe.tasks == 0, f"{name} computed before it was asked to"
            start = time.perf_counter()
            y = y.persist()
            distributed.wait(y)
            seconds = time.perf_counter() - start
            largest, worst, tasks = probe.largest, probe.worst, probe.tasks
            assert largest <= allowed, (name, largest / chunk, worst)
            got = y.compute()  # the client gathers the result: not a task of the op
            want = fn(host)
            np.testing.assert_array_equal(got, want, err_msg=name)
            lines.append(f"{name}: {tasks} tasks, {seconds:.2f} s, largest task input "
                         f"{largest / 2**20:.1f} MiB = {largest / chunk:.3f} chunks")
        # the backward passes run on the cluster too
        g = da.ones((1, 1, 4096, 4096), chunks=(1, 1, 1024, 1024), dtype=np.float32)
        small = x[:, :, :4096, :4096]
        dx = poolspec.avg_pool2d_backward(g[:, :, :2048, :2048], small, 2).compute()
        np.testing.assert_array_equal(dx, poolspec.avg_pool2d_backward(np.ones((1, 1, 2048, 2048), np.float32),
                                                                       host[:, :, :4096, :4096], 2))
        dx = poolspec.interpolate_backward(g, small[:, :, :2048, :2048], scale_factor=2, mode="bilinear").compute()
        np.testing.assert_array_equal(dx, poolspec.interpolate_backward(np.ones((1, 1, 4096, 4096), np.float32),
                                                                        host[:, :, :2048, :2048], scale_factor=2,
                                                                        mode="bilinear"))
        client.cancel([x])
    with capsys.disabled():
        print("\n" + "\n".join(lines))
