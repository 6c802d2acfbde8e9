"""uint8 interpolate against torch 2.13 on every installed backend: bilinear and bicubic with and without
antialias, lanczos with antialias (torch's CPU integer pipeline: int16 weights, per-pass rounding and clamping),
bit for bit, on random sizes, scale factors, channel counts and memory formats; and what stays refused."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec

torch = pytest.importorskip("torch")
F = torch.nn.functional
oracle = pytest.importorskip("oracle")


def _configs(seed: int, count: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        c = int(rng.choice([1, 3, 4, 5]))
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        mode = str(rng.choice(["bilinear", "bicubic", "lanczos"]))
        aa = True if mode == "lanczos" else bool(rng.integers(2))
        kw: dict = dict(mode=mode, antialias=aa, align_corners=None if mode == "lanczos" else bool(rng.integers(2)))
        if rng.random() < 0.5:
            kw["size"] = tuple(int(v) for v in rng.integers(1, 40, 2))
        else:
            kw["scale_factor"] = float(rng.choice([0.5, 2.0, 1.7, 0.3, 3.0, 1.0, round(rng.uniform(0.2, 3), 3)]))
            kw["recompute_scale_factor"] = bool(rng.random() < 0.2) or None
        x = rng.integers(0, 256, (2, c, h, w)).astype(np.uint8)
        if rng.random() < 0.2:  # saturated edges: where the clamps act
            x = np.where(x > 127, 255, 0).astype(np.uint8)
        out.append(dict(x=x, channels_last=bool(rng.random() < 0.3), **kw))
    return out


def _torch(cfg: dict) -> np.ndarray | str | None:
    """torch's uint8 result (``oracle.uint8_interpolate``); None where torch refuses the call, "skip" on a CPU
    without AVX2 (torch's single-column bug for every channel count)."""
    kw = {k: v for k, v in cfg.items() if k not in ("x", "channels_last")}
    try:
        F.interpolate(torch.from_numpy(cfg["x"]).float(), **kw)
    except Exception:
        return None
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        return "skip"
    return oracle.uint8_interpolate(cfg["x"], kw, cfg["channels_last"])


@pytest.mark.parametrize("seed", range(4))
def test_uint8_matches_torch_bit_for_bit(backend, seed):
    checked = 0
    for cfg in _configs(seed, 60 if backend.name in ("numpy", "torch") else 15):
        ref = _torch(cfg)
        if isinstance(ref, str):
            continue
        kw = {k: v for k, v in cfg.items() if k not in ("x", "channels_last")}
        if ref is None:
            with pytest.raises((ValueError, TypeError)):
                poolspec.interpolate(backend.asarray(cfg["x"]), **kw)
            continue
        y = backend.to_numpy(poolspec.interpolate(backend.asarray(cfg["x"]), **kw))
        assert y.dtype == np.uint8 and y.shape == ref.shape, (kw, y.shape, ref.shape)
        diff = np.argwhere(y != ref)
        assert diff.size == 0, (kw, cfg["x"].shape, len(diff), diff[:3], y[tuple(diff[0])], ref[tuple(diff[0])])
        checked += 1
    assert checked >= 10


def test_uint8_large_downscale_and_identity_axes():
    """Many taps (precision up to 22 bits), an axis left as is (skipped, as torch), and a plain copy."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, (1, 3, 700, 9)).astype(np.uint8)
    for kw in (dict(size=(3, 9), mode="bilinear", antialias=True), dict(size=(2, 9), mode="bicubic", antialias=True),
               dict(size=(700, 9), mode="bicubic"), dict(scale_factor=1.0, mode="bilinear", align_corners=False),
               dict(size=(5, 4), mode="lanczos", antialias=True)):
        y = poolspec.interpolate(x, **kw)
        np.testing.assert_array_equal(y, F.interpolate(torch.from_numpy(x), **kw).numpy(), err_msg=str(kw))
        assert not np.shares_memory(y, x)


@pytest.mark.parametrize("kw", [dict(scale_factor=2, mode="linear"), dict(size=(3, 3), mode="area"),
                                dict(size=(3, 3, 3), mode="trilinear"), dict(size=(3, 3), mode="lanczos")])
def test_uint8_refused_where_torch_refuses(kw):
    shape = {"linear": (1, 2, 5), "trilinear": (1, 2, 4, 4, 4)}.get(kw["mode"], (1, 2, 5, 5))
    x = np.zeros(shape, np.uint8)
    with pytest.raises((RuntimeError, NotImplementedError, ValueError)):
        F.interpolate(torch.from_numpy(x), **kw)
    with pytest.raises(TypeError, match="x.dtype='uint8'"):
        poolspec.interpolate(x, **kw)


def test_uint8_has_no_gradient():
    x = np.zeros((1, 1, 4, 4), np.uint8)
    with pytest.raises(TypeError):
        poolspec.interpolate_backward(np.zeros((1, 1, 8, 8), np.uint8), x, size=8, mode="bilinear")


def test_deviation_uint8_single_column_holds():
    """deviation interpolate_uint8_single_column: torch's generic uint8 kernel (5 channels) gives every row of a
    width-1 output the first row's value; poolspec gives each row its own, the values torch's kernel for fewer
    channels gives."""
    assert "interpolate_uint8_single_column" in poolspec.spec.card("interpolate").deviations
    x = np.random.default_rng(2).integers(0, 256, (1, 5, 20, 6)).astype(np.uint8)
    kw = dict(size=(9, 1), mode="bilinear", align_corners=False)
    theirs = F.interpolate(torch.from_numpy(x), **kw).numpy()
    assert (theirs == theirs[:, :, :1]).all()  # every row is row 0
    ours = poolspec.interpolate(x, **kw)
    assert not (ours == ours[:, :, :1]).all()
    if torch.backends.cpu.get_cpu_capability() != "DEFAULT":
        np.testing.assert_array_equal(ours[:, :4], F.interpolate(torch.from_numpy(x[:, :4]), **kw).numpy())
