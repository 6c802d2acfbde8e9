"""Three small models, each with its pooling and resampling ops from poolspec or from torch.nn.functional,
timed forward+backward eagerly, eagerly with poolspec's eager fusion, and compiled (``poolspec bench
--models``): a ResNet-style classifier (max pool stem, adaptive average head), a SegNet-style
encoder-decoder (pool indices, unpool, bilinear) and a spatial transformer (affine_grid, grid_sample,
average pool). Batch 16, 3x64x64, float32, one thread by default; the ratio is poolspec's time over
torch's in the same run. Numbers only.
"""

from __future__ import annotations

import statistics
import time
from typing import Any


def _models(torch: Any, lib: Any) -> dict[str, Any]:
    nn = torch.nn
    module: Any = nn.Module  # torch is optional: no stubs at type-check time

    class ResNetStyle(module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, 32, 7, 2, 3)
            self.block = nn.Sequential(nn.Conv2d(32, 32, 3, 1, 1), nn.ReLU(), nn.Conv2d(32, 32, 3, 1, 1))
            self.head = nn.Linear(32, 10)

        def forward(self, x: Any) -> Any:
            x = lib.max_pool2d(torch.relu(self.stem(x)), 3, 2, 1)
            x = torch.relu(x + self.block(x))
            return self.head(lib.adaptive_avg_pool2d(x, 1).flatten(1))

    class SegNetStyle(module):
        def __init__(self) -> None:
            super().__init__()
            self.e1, self.e2 = nn.Conv2d(3, 16, 3, 1, 1), nn.Conv2d(16, 32, 3, 1, 1)
            self.d2, self.d1 = nn.Conv2d(32, 16, 3, 1, 1), nn.Conv2d(16, 8, 3, 1, 1)

        def forward(self, x: Any) -> Any:
            a, i1 = lib.max_pool2d(torch.relu(self.e1(x)), 2, return_indices=True)
            b, i2 = lib.max_pool2d(torch.relu(self.e2(a)), 2, return_indices=True)
            b = torch.relu(self.d2(lib.max_unpool2d(b, i2, 2, output_size=a.shape[-2:])))
            a = torch.relu(self.d1(lib.max_unpool2d(b, i1, 2, output_size=x.shape[-2:])))
            return lib.interpolate(a, scale_factor=2, mode="bilinear", align_corners=False)

    class SpatialTransformer(module):
        def __init__(self) -> None:
            super().__init__()
            self.loc = nn.Sequential(nn.Conv2d(3, 8, 5, 2, 2), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                                     nn.Linear(128, 6))
            self.conv = nn.Conv2d(3, 16, 3, 1, 1)

        def forward(self, x: Any) -> Any:
            theta = self.loc(x).view(-1, 2, 3) + torch.eye(2, 3, device=x.device)
            warped = lib.grid_sample(x, lib.affine_grid(theta, x.shape, align_corners=False), align_corners=False)
            return lib.avg_pool2d(torch.relu(self.conv(warped)), 2)

    return {"resnet-style": ResNetStyle, "segnet-style": SegNetStyle, "spatial-transformer": SpatialTransformer}


MODES = ("eager", "eager-fused", "compiled")


def run(repeat: int = 20, threads: int = 1, batch: int = 16,
        modes: tuple[str, ...] = MODES) -> list[dict[str, Any]]:
    """Per model and mode (``eager``; ``eager-fused``: eager with :func:`poolspec.set_eager_fusion`, torch's
    side plain eager; ``compiled``: ``torch.compile`` of the whole model), the median step time of each side.
    The two sides' steps alternate, so that the machine's drifts fall on both."""
    import torch

    import poolspec

    torch.set_num_threads(threads)
    x = torch.randn(batch, 3, 64, 64, generator=torch.Generator().manual_seed(0))
    rows = []
    for name in _models(torch, poolspec):
        row: dict[str, Any] = {"model": name}
        for mode in modes:
            steps = {}
            for who, lib in (("poolspec", poolspec), ("torch", torch.nn.functional)):
                torch.manual_seed(0)
                model = _models(torch, lib)[name]()
                torch._dynamo.reset()
                fn = torch.compile(model) if mode == "compiled" else model
                fused = mode == "eager-fused" and who == "poolspec"

                def step(fn: Any = fn, model: Any = model, fused: bool = fused) -> None:
                    before = poolspec.set_eager_fusion(fused)
                    try:
                        model.zero_grad(set_to_none=True)
                        fn(x).square().mean().backward()
                    finally:
                        poolspec.set_eager_fusion(before)

                start = time.perf_counter()
                step()
                if mode != "eager":
                    row[f"{mode}_first_call_s_{who}"] = time.perf_counter() - start
                step()
                steps[who] = step
            times: dict[str, list[float]] = {who: [] for who in steps}
            for _ in range(repeat):
                for who, step in steps.items():
                    start = time.perf_counter()
                    step()
                    times[who].append(time.perf_counter() - start)
            ps, native = statistics.median(times["poolspec"]), statistics.median(times["torch"])
            row[f"{mode}_ms_poolspec"], row[f"{mode}_ms_torch"] = ps * 1e3, native * 1e3
            row[f"{mode}_ratio"] = ps / native
        rows.append(row)
        print(f"{name:<20}" + "   ".join(f"{m} {row[f'{m}_ms_poolspec']:7.2f} / {row[f'{m}_ms_torch']:7.2f} ms "
                                        f"({row[f'{m}_ratio']:.2f})" for m in modes), flush=True)
    return rows
