"""The porter's mapping table (docs/PORTING.md), row by row against the real libraries: OpenCV's
``cv2.resize`` and Pillow's ``Image.resize`` on float32 images in 0-255, against poolspec's interpolate in the
mode the table names. Up-, integer down- and fractional downscales of random sizes; where a row holds only at
integer scale factors, only those."""

from __future__ import annotations

import numpy as np
import pytest

import poolspec

cv2 = pytest.importorskip("cv2")
Image = pytest.importorskip("PIL.Image")

# float32 images in 0-255: both libraries compute in float32, poolspec's reference here in float64
TOL = 2e-4


def _sizes(kinds: tuple[str, ...], n: int = 60) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    rng = np.random.default_rng(7)
    out = []
    for t in range(n):
        kind = kinds[t % len(kinds)]
        H, W = (int(v) for v in rng.integers(4, 40, 2))
        if kind == "up":
            out.append(((H, W), (H * int(rng.integers(2, 4)), W + int(rng.integers(1, 20)))))
        elif kind == "down-int":
            f = int(rng.integers(2, 4))
            out.append(((H * f, W * f), (H, W)))
        else:
            out.append(((H, W), (max(1, H * 2 // 3), max(1, W * 3 // 5))))
    return out


def _cv2(flag: str):
    return lambda img, size: cv2.resize(img, (size[1], size[0]), interpolation=getattr(cv2, flag))


def _pil(flag: str):
    def resize(img, size):
        return np.asarray(Image.fromarray(img, mode="F").resize((size[1], size[0]), getattr(Image.Resampling, flag)))
    return resize


ALL = ("up", "down-int", "down-frac")
ROWS = [
    ("cv2.INTER_LINEAR", _cv2("INTER_LINEAR"), {"mode": "bilinear", "align_corners": False}, ALL),
    ("cv2.INTER_CUBIC", _cv2("INTER_CUBIC"), {"mode": "bicubic", "align_corners": False}, ALL),
    ("cv2.INTER_AREA", _cv2("INTER_AREA"), {"mode": "area"}, ("down-int",)),
    ("cv2.INTER_NEAREST", _cv2("INTER_NEAREST"), {"mode": "nearest"}, ("down-int",)),
    ("cv2.INTER_NEAREST_EXACT", _cv2("INTER_NEAREST_EXACT"), {"mode": "nearest-exact"}, ("down-int",)),
    ("PIL BILINEAR", _pil("BILINEAR"), {"mode": "bilinear", "antialias": True, "align_corners": False}, ALL),
    ("PIL BICUBIC", _pil("BICUBIC"), {"mode": "bicubic", "antialias": True, "align_corners": False}, ALL),
    ("PIL LANCZOS", _pil("LANCZOS"), {"mode": "lanczos", "antialias": True, "align_corners": False}, ALL),
    ("PIL NEAREST", _pil("NEAREST"), {"mode": "nearest-exact"}, ("down-int",)),
]


@pytest.mark.parametrize("name, resize, kw, kinds", ROWS, ids=[r[0] for r in ROWS])
def test_mapping_row(name, resize, kw, kinds):
    rng = np.random.default_rng(11)
    for shape, size in _sizes(kinds):
        img = (rng.random(shape) * 255).astype(np.float32)
        want = resize(img, size).astype(np.float64)
        got = poolspec.interpolate(img[None, None].astype(np.float64), size=size, **kw)[0, 0]
        np.testing.assert_allclose(got, want, rtol=0, atol=TOL, err_msg=f"{name} {shape} -> {size}")
