"""The stored cases of other libraries' conventions (``poolspec.conformance.conventions``: outputs and gradients
computed by TensorFlow, Keras, JAX, Flax and the ONNX runtimes themselves) replayed through the front-ends on every
installed backend, the CLI's replay and the porters' export of them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from poolspec.conformance import conventions
from poolspec.conformance.backends import Backend

LIBRARIES = sorted({c.library for c in conventions.cases()})


def test_every_library_has_stored_cases_of_every_function():
    from poolspec.spec import frontend_cards

    assert set(LIBRARIES) >= {"tensorflow", "keras", "jax", "flax", "onnx_reference"}
    stored = {c.function for c in conventions.cases()}
    # torch.nn's module classes are checked against live torch (tests/test_frontend_torch_nn.py): torch is
    # poolspec's reference and a test dependency, and their forward is poolspec's own torch-signature function,
    # whose stored cases are the golden ones
    # torchvision.ops' module classes likewise (conformance/frontend_checks/torchvision.py and
    # tests/test_frontend_torchvision.py check them against live torchvision; their forward is the stored functions')
    def exempt(name: str) -> bool:
        return name.startswith("torch.nn.") or name.startswith("torchvision.ops.") and name[16].isupper()

    missing = sorted(c.name for c in frontend_cards() if c.name not in stored and not exempt(c.name))
    assert not missing, f"front-end functions without a stored case: {missing}"


@pytest.mark.parametrize("library", LIBRARIES)
def test_stored_conventions_pass(library, backend):
    b = Backend(backend.name)
    results = [(c.name, *conventions.check_case(c, b)) for c in conventions.cases([library])]
    failed = [r for r in results if r[1] == "failed"]
    assert not failed, failed[:10]
    assert any(r[1] == "passed" for r in results)
    if backend.name in ("torch", "jax") and library not in ("onnx_reference", "onnxruntime"):
        assert any(r[2] == "with gradients" for r in results), "no gradient was compared"


def test_cli_replays_and_exports(tmp_path):
    run = subprocess.run([sys.executable, "-m", "poolspec", "conformance", "--conventions", "all", "--backend",
                          "numpy"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " 0 failed" in run.stdout
    out = subprocess.run([sys.executable, "-m", "poolspec", "export", "--conventions", "all", "--format", "json",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert len(manifest["cases"]) == len(conventions.cases())
    first = manifest["cases"][0]
    data = json.loads((tmp_path / first["files"][0]).read_text())["arrays"]
    assert set(first["inputs"]) <= set(data) and "output0" in data


def test_onnx_max_mode_regressions_separate_the_two_maxima(backend):
    """The stored RoiAlign max-mode cases (onnxruntime#6146, #14265): the library's output is the maximum of weighted
    corner terms, which the front-end's max_of="samples" (the largest bilinear sample) does not give."""
    import numpy as np

    from poolspec.frontends import onnx

    found = [c for c in conventions.cases(["onnx_reference", "onnxruntime"]) if "regression-max" in c.name]
    assert {c.library for c in found} == {"onnx_reference", "onnxruntime"}
    flags = {c["id"]: c for c in conventions.manifest()["cases"] if "regression-max" in c["id"]}
    for case in found:
        assert any("onnxruntime/issues/6146" in u for u in flags[case.name]["upstream"])
        a = case.arrays()
        arrays = [backend.asarray(a[k]) for k in case.inputs]
        got = backend.to_numpy(case.call(*arrays))
        np.testing.assert_allclose(got, a["output0"], rtol=case.rtol, atol=case.atol)
        other = backend.to_numpy(onnx.RoiAlign(*arrays, **case.options, max_of="samples"))
        assert np.abs(other - a["output0"]).max() > 0.1
