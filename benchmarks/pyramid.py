"""The image-pyramid recipe at scale: a float32 image in a Zarr store, 4 OME-Zarr levels written back, on a
dask.distributed LocalCluster (2 worker processes, 1 thread each), against ``da.coarsen`` (block means) and
dask-image's Gaussian filter plus subsampling (the recipe ngff-zarr's dask-image method follows: sigma from the
shrink factor, then every second cell). Prints, per method: wall time, tasks executed, graph layers, the
largest output chunks of the last level and the peak memory of each worker process.

    python benchmarks/pyramid.py --size 16384 --chunk 1024
"""

from __future__ import annotations

import argparse
import math
import shutil
import tempfile
import time
from pathlib import Path

import dask.array as da
import distributed
import numpy as np

from poolspec.pyramid import levels, to_ome_zarr


class Tasks(distributed.diagnostics.plugin.SchedulerPlugin):
    name = "pyramid-task-count"

    def __init__(self) -> None:
        self.count = 0

    def transition(self, key, start, finish, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        if finish == "memory":
            self.count += 1


def _gaussian_levels(image: da.Array, count: int) -> list[da.Array]:
    from dask_image.ndfilters import gaussian_filter

    sigma = math.sqrt(2 ** 2 - 1) / (2 * math.sqrt(2 * math.log(2)))  # FWHM of the shrink factor
    out = [image]
    for _ in range(count - 1):
        prev = out[-1]
        blurred = gaussian_filter(prev, sigma=(0, 0, sigma, sigma))
        out.append(blurred[..., ::2, ::2].rechunk(tuple(max(1, c // 2) if i >= 2 else c
                                                        for i, c in enumerate(prev.chunksize))))
    return out


METHODS = {
    "poolspec area": lambda x, n: levels(x, n),
    "poolspec bilinear antialias": lambda x, n: levels(x, n, mode="bilinear"),
    "da.coarsen mean": lambda x, n: [x] + [da.coarsen(np.mean, x, {2: 2 ** i, 3: 2 ** i}) for i in range(1, n)],
    "dask-image gaussian": _gaussian_levels,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=16384)
    parser.add_argument("--chunk", type=int, default=1024)
    parser.add_argument("--levels", type=int, default=4)
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pyramid-"))
    try:
        src = str(work / "in.zarr")
        n, c = args.size, args.chunk
        da.to_zarr(da.random.default_rng(0).random((1, 1, n, n), chunks=(1, 1, c, c), dtype=np.float32), src)
        print(f"{n}x{n} float32 ({n * n * 4 / 2 ** 30:.2f} GiB) in {c}x{c} chunks, {args.levels} levels, "
              "LocalCluster of 2 worker processes x 1 thread")
        print(f"{'method':30s}{'seconds':>9}{'tasks':>8}{'layers':>8}{'peak MiB/worker':>17}  last level chunks")
        for name in args.methods.split(","):
            with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                          dashboard_address=None, memory_limit="8GiB") as cluster, \
                    distributed.Client(cluster) as client:
                counter = Tasks()
                cluster.scheduler.add_plugin(counter)
                image = da.from_zarr(src)
                pyramid = METHODS[name](image, args.levels)
                layers = sum(len(p.__dask_graph__().layers) for p in pyramid[1:])
                out = str(work / "out.zarr")
                sampler = distributed.diagnostics.MemorySampler()
                start = time.perf_counter()
                with sampler.sample(name, client=client, measure="process", interval=0.1):
                    to_ome_zarr(pyramid, out)
                seconds = time.perf_counter() - start
                peak = max(v for _, v in sampler.samples[name]) / 2 / 2 ** 20  # the sum over 2 workers
                chunks = tuple(max(ch) for ch in pyramid[-1].chunks[2:])
                print(f"{name:30s}{seconds:9.1f}{counter.count:8d}{layers:8d}{peak:17.0f}  {chunks}")
                shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
