"""poolspec.frontends.torchvision.ops: the module classes and the list form of the boxes replayed on every backend
against torchvision's own outputs, reprs and input gradients (tests/data/torchvision_modules.*, written by
scripts/torchvision_module_cases.py with torch 2.14.1 + torchvision 0.29.1); torchvision's box rules and their
refusals; the classes without torch and as torch.nn.Module twins. The (K, 5) form of the functions is replayed
from the stored conventions (tests/test_conventions.py); conformance/frontend_checks/torchvision.py runs thousands
of random configurations against the live library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import poolspec
from poolspec.conformance.conventions import close, vjp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "data" / "torchvision_modules"
MANIFEST = json.loads(DATA.with_suffix(".json").read_text())
CASES = MANIFEST["cases"]


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"tuple"}:
        return tuple(_decode(v) for v in value["tuple"])
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        return {k: _decode(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def store() -> Any:
    return np.load(DATA.with_suffix(".npz"))


def test_every_module_class_and_the_list_form_have_cases():
    functions = {c["function"] for c in CASES}
    want = {"torchvision.ops." + n for n in ("roi_align", "roi_pool", "RoIAlign", "RoIPool", "MultiScaleRoIAlign")}
    assert want <= functions
    assert MANIFEST["version"].startswith("torchvision 0.29.1")
    ps = {"torchvision.ops." + n for n in ("ps_roi_align", "ps_roi_pool", "PSRoIAlign", "PSRoIPool")}
    assert ps <= functions, "regenerate: scripts/torchvision_module_cases.py"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_cases_replay(case, backend, store):
    from conformance.frontend_checks import Config
    from conformance.frontend_checks.torchvision import frontend

    cid = case["id"]
    arrays = {k: store[f"{cid}/{k}"] for k in case["arrays"]}
    dtype = str(next(iter(arrays.values())).dtype)
    if not backend.supports(dtype):
        pytest.skip(f"{backend.name} has no {dtype}")
    config = Config(case["function"], arrays, _decode(case["options"]))
    fn = frontend(config)
    xs = [backend.asarray(a) for a in arrays.values()]
    got = fn(*xs)
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == case["outputs"]
    rtol, atol = {"float64": (1e-12, 1e-12), "float16": (2e-2, 2e-3)}.get(dtype, (2e-5, 2e-6))
    for i, g in enumerate(got):
        want = store[f"{cid}/output{i}"]
        ok, err = close(backend.to_numpy(g), want, rtol, atol)
        if i == 1:  # the repr, as int32 bytes
            assert ok, (bytes(backend.to_numpy(g).astype(np.uint8)), bytes(want.astype(np.uint8)))
        assert ok, f"output {i}: max error {err:.3g}"
    if not case["grads"] or backend.name not in ("torch", "jax"):
        return
    names = list(arrays)
    grads = vjp(backend.name, fn, xs, [names.index(n) for n in case["grads"]], [store[f"{cid}/cotangent"]])
    for n, g in zip(case["grads"], grads):
        ok, err = close(np.asarray(g), store[f"{cid}/grad/{n}"], rtol * 10, atol * 10)
        assert ok, f"gradient of {n}: max error {err:.3g}"


def _ops():
    from poolspec.frontends.torchvision import ops

    return ops


def test_box_rules_are_torchvision_s(backend):
    """check_roi_boxes_shape's refusals (AssertionError or IndexError in torchvision) as ValueError naming the
    boxes, a box argument that is no array as TypeError; an empty list fails in torchvision's torch.cat."""
    ops = _ops()
    x = backend.asarray(np.ones((2, 3, 5, 5)))
    four = backend.asarray(np.array([[0.0, 0.0, 2.0, 2.0]]))
    five = backend.asarray(np.array([[0, 0.0, 0.0, 2.0, 2.0]]))
    for fn in (ops.roi_align, ops.roi_pool):
        with pytest.raises(ValueError, match=r"boxes\.shape=\(1, 4\): The boxes tensor shape is not correct"):
            fn(x, four, 2)
        with pytest.raises(ValueError, match=r"boxes\[0\]\.shape=\(1, 5\): The shape of the tensor in the boxes"):
            fn(x, [five], 2)
        with pytest.raises(ValueError, match=r"boxes\.shape=\(4,\)"):
            fn(x, backend.asarray(np.zeros(4)), 2)
        with pytest.raises(ValueError, match="boxes=\\[\\]: an empty list"):
            fn(x, [], 2)
        with pytest.raises(TypeError, match="boxes='str': boxes is expected to be a Tensor"):
            fn(x, "boxes", 2)
        with pytest.raises(ValueError, match="output_size=\\(2, 2, 2\\)"):
            fn(x, five, (2, 2, 2))
        with pytest.raises(TypeError, match="output_size=2.0"):
            fn(x, five, 2.0)
        assert tuple(fn(x, (four, four[:0, :]), 2).shape) == (1, 3, 2, 2)  # a tuple is a list of boxes


# torchvision 0.29.1's reprs (its __repr__), printed by the live library
REPRS = {
    "RoIAlign(2, 0.5, 2)": "RoIAlign(output_size=2, spatial_scale=0.5, sampling_ratio=2, aligned=False)",
    "RoIPool((2, 3), 1.0)": "RoIPool(output_size=(2, 3), spatial_scale=1.0)",
    "PSRoIAlign(2, 1, -1)": "PSRoIAlign(output_size=2, spatial_scale=1, sampling_ratio=-1)",
    "PSRoIPool(2, 1)": "PSRoIPool(output_size=2, spatial_scale=1)",
    "MultiScaleRoIAlign(['a'], 3, 2)": "MultiScaleRoIAlign(featmap_names=['a'], output_size=(3, 3), sampling_ratio=2)",
}


def test_reprs_are_torchvision_s():
    ops = _ops()
    for call, want in REPRS.items():
        assert repr(eval(call, {}, vars(ops))) == want  # noqa: S307 (the keys above)


def test_classes_are_plain_without_torch_and_modules_with_it():
    code = ("import sys, numpy as np\n"
            "from poolspec.frontends.torchvision import ops\n"
            "m = ops.RoIAlign(1, 1.0, 2, aligned=True)\n"
            "y = m(np.arange(16.0).reshape(1, 1, 4, 4), [np.array([[0.0, 0.0, 2.0, 2.0]])])\n"
            "assert 'torch' not in sys.modules and 'torchvision' not in sys.modules\n"
            "import torch\n"
            "t = ops.MultiScaleRoIAlign(['p2'], 2, 2)\n"
            "assert isinstance(t, torch.nn.Module) and isinstance(t, ops.MultiScaleRoIAlign)\n"
            "s = torch.nn.Sequential(ops.RoIPool(2, 1.0))\n"
            "print(float(y.ravel()[0]), type(m).__name__, type(t).__module__, dict(s.state_dict()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["2.5", "RoIAlign", "poolspec.frontends.torchvision.ops", "{}"]


def test_multiscale_keeps_its_scales_and_refuses_what_torchvision_cannot_pool():
    ops = _ops()
    m = ops.MultiScaleRoIAlign(["p2", "p3"], 2, 2)
    x = {"p2": np.ones((1, 2, 16, 16)), "p3": np.ones((1, 2, 8, 8))}
    boxes = [np.array([[0.0, 0.0, 30.0, 30.0]])]
    assert m(x, boxes, [(64, 64)]).shape == (1, 2, 2, 2)
    assert m.scales == [0.25, 0.125] and (m.map_levels.k_min, m.map_levels.k_max) == (2, 3)
    m(x, boxes, [(128, 128)])  # torchvision infers the scales once
    assert m.scales == [0.25, 0.125]
    with pytest.raises(ValueError, match="images list should not be empty"):
        ops.MultiScaleRoIAlign(["p2"], 2, 2)(x, boxes, [])
    with pytest.raises(ValueError, match="no feature map is named"):
        ops.MultiScaleRoIAlign(["q"], 2, 2)(x, boxes, [(64, 64)])
    with pytest.raises(TypeError, match="must be a dict"):
        m([x["p2"]], boxes, [(64, 64)])


def test_position_sensitive_functions_call_poolspec_s_ops():
    """The front-ends are poolspec.ps_roi_align / ps_roi_pool on the boxes in (K, 5) form: the same values."""
    ops = _ops()
    x = np.random.default_rng(0).standard_normal((2, 8, 5, 6))
    rois = np.array([[1, 0.5, 0.0, 4.0, 3.5], [0, 1.0, 1.0, 2.0, 4.0]])
    np.testing.assert_array_equal(ops.ps_roi_align(x, rois, 2, 0.5), poolspec.ps_roi_align(x, rois, 2, 0.5))
    lists = [rois[rois[:, 0] == i, 1:] for i in range(2)]
    order = np.argsort(rois[:, 0], kind="stable")
    np.testing.assert_array_equal(ops.ps_roi_pool(x, lists, (2, 2)), poolspec.ps_roi_pool(x, rois[order], 2))


JAX_JIT = json.loads((ROOT / "tests" / "data" / "torchvision_jax_jit.json").read_text())["cases"]


@pytest.mark.parametrize("n", range(len(JAX_JIT)))
def test_roi_align_under_xla_on_corners_at_half_cells(n):
    """Two calls found by conformance/frontend_checks/torchvision.py (float64, boxes whose scaled corners fall on
    half cells, spatial_scale 1.845 and 1.999), torchvision's values stored from torchvision 0.29.1: XLA's fused
    multiply-add once put a sample an ulp past the image's edge (-1 or H), where it reads 0; the JAX program now
    keeps each product apart from the add after it (roi_align's sampling._product)."""
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp

    ops = _ops()
    store = np.load(ROOT / "tests" / "data" / "torchvision_jax_jit.npz")
    x, boxes, want = store[f"{n}/input"], store[f"{n}/boxes"], store[f"{n}/output"]
    options = JAX_JIT[n]["options"]
    np.testing.assert_allclose(ops.roi_align(x, boxes, **options), want, rtol=1e-12, atol=1e-12)
    if not jax.config.read("jax_enable_x64"):
        pytest.skip("float64 JAX arrays need jax_enable_x64")
    with jax.disable_jit():
        np.testing.assert_allclose(np.asarray(ops.roi_align(jnp.asarray(x), jnp.asarray(boxes), **options)), want,
                                   rtol=1e-12, atol=1e-12)
    got = np.asarray(ops.roi_align(jnp.asarray(x), jnp.asarray(boxes), **options))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
