"""The front-ends adopted as users adopt them: real model files written against Flax, Keras and TensorFlow alone
(tests/models/) run as they are and after changing their import prefix to poolspec's, nothing else, with equal
losses; Keras' global image data format and symbolic tensors; what the front-end modules list and pass on.

Each model runs in its own process: Keras reads its backend once per process, and its data format is global."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

MODELS = Path(__file__).parent / "models"


def _installed(*modules: str) -> None:
    for m in modules:
        if importlib.util.find_spec(m) is None:
            pytest.skip(f"{m} is not installed")


def _run(script: str, tmp_path: Path, env: dict[str, str] | None = None) -> dict:
    path = tmp_path / "script.py"
    path.write_text(script)
    proc = subprocess.run([sys.executable, str(path), str(tmp_path)], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ported(name: str, original: str, replacement: str) -> tuple[str, str]:
    text = (MODELS / name).read_text()
    assert text.count(original + "\n") == 1, f"{name} must import {original!r} once"
    return text, text.replace(original + "\n", replacement + "\n")


def _same_training(a: dict, b: dict, rtol: float) -> None:
    np.testing.assert_allclose(b["loss"], a["loss"], rtol=rtol, err_msg="losses")
    np.testing.assert_allclose(np.asarray(b["prediction"]), np.asarray(a["prediction"]), rtol=rtol, atol=rtol,
                               err_msg="predictions")


@pytest.mark.parametrize("keras_backend", ["jax", "torch", "tensorflow"])
def test_keras_model_file_runs_after_the_prefix_change(keras_backend, tmp_path):
    """Functional and subclassing APIs, KerasTensors with an unknown batch, model.fit, save and load, on each
    Keras backend (TensorFlow's tensors through the host bridge)."""
    _installed("keras", keras_backend)
    original, ported = _ported("keras_cnn.py", "from keras import ops", "from poolspec.frontends.keras import ops")
    env = {"KERAS_BACKEND": keras_backend}
    (tmp_path / "original").mkdir()
    (tmp_path / "ported").mkdir()
    want, got = _run(original, tmp_path / "original", env), _run(ported, tmp_path / "ported", env)
    assert want["backend"] == got["backend"] == keras_backend
    assert got["output_shape"] == want["output_shape"]
    assert got["reloaded_equal"] and want["reloaded_equal"]
    _same_training(want, got, 1e-4)


def test_flax_model_file_runs_after_the_prefix_change(tmp_path):
    _installed("flax")
    original, ported = _ported("flax_cnn.py", "from flax import linen as nn",
                               "from poolspec.frontends.flax import linen as nn")
    _same_training(_run(original, tmp_path), _run(ported, tmp_path), 1e-4)


def test_tensorflow_model_file_runs_after_the_prefix_change(tmp_path):
    """Variables, tf.nn and tf.image ops, GradientTape under tf.function: TensorFlow tensors go through the
    front-ends' host bridge (NumPy forward, the gradient by poolspec's bindings)."""
    _installed("tensorflow")
    original, ported = _ported("tf_cnn.py", "import tensorflow as tf", "from poolspec.frontends import tf")
    _same_training(_run(original, tmp_path), _run(ported, tmp_path), 1e-4)


_DATA_FORMAT = textwrap.dedent("""
    import json, os, sys
    os.environ["KERAS_BACKEND"] = "jax"
    import keras
    import numpy as np
    from poolspec.frontends.keras import ops

    keras.config.set_image_data_format("channels_first")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8, 9)).astype("float32")
    calls = [("max_pool", (2, 2), {}), ("average_pool", (3,), {"strides": 2, "padding": "same"}),
             ("adaptive_average_pool", ((3, 4),), {}), ("adaptive_max_pool", ((3, 4),), {})]
    rows = []
    for name, args, kwargs in calls:
        want = np.asarray(getattr(keras.ops, name)(x, *args, **kwargs))
        got = np.asarray(getattr(ops, name)(x, *args, **kwargs))
        rows.append([name, list(want.shape), list(got.shape), float(np.abs(want - got).max())])
    want = np.asarray(keras.ops.image.resize(x, (5, 6)))
    got = np.asarray(ops.image.resize(x, (5, 6)))
    rows.append(["image.resize", list(want.shape), list(got.shape), float(np.abs(want - got).max())])
    symbolic = ops.max_pool(keras.Input((3, 31, 31)), 2, 2)
    rows.append(["symbolic", list(keras.ops.max_pool(keras.Input((3, 31, 31)), 2, 2).shape[1:]),
                 list(symbolic.shape[1:]), 0.0])
    print(json.dumps(rows))
""")


def test_keras_global_data_format_is_read_as_keras_reads_it(tmp_path):
    """After keras.config.set_image_data_format("channels_first"), data_format=None means channels_first."""
    _installed("keras", "jax")
    path = tmp_path / "script.py"
    path.write_text(_DATA_FORMAT)
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name, want_shape, got_shape, err in json.loads(proc.stdout.strip().splitlines()[-1]):
        assert got_shape == want_shape, name
        assert err <= 1e-6, (name, err)


def test_keras_json_is_read_without_importing_keras(tmp_path):
    """Keras loads image_data_format from $KERAS_HOME/keras.json at import; the front-end reads the same file
    while Keras is not imported (and does not import it)."""
    (tmp_path / "keras.json").write_text(json.dumps({"image_data_format": "channels_first"}))
    code = ("import sys, numpy as np; from poolspec.frontends.keras import ops; "
            "y = ops.max_pool(np.zeros((1, 3, 8, 8)), 2); assert 'keras' not in sys.modules; print(y.shape)")
    for content, want in (({"image_data_format": "channels_first"}, "(1, 3, 4, 4)"), ({}, "(1, 1, 4, 8)")):
        (tmp_path / "keras.json").write_text(json.dumps(content))
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "KERAS_HOME": str(tmp_path)})
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.strip() == want


def test_front_end_modules_list_the_mirrored_names_and_pass_on_the_rest():
    import poolspec.frontends.flax.linen as linen
    import poolspec.frontends.jax.image as jax_image
    import poolspec.frontends.keras.ops as keras_ops
    import poolspec.frontends.tf as tf
    from poolspec.frontends import onnx, torchvision

    assert dir(linen) == ["avg_pool", "max_pool", "min_pool", "pool"]
    assert dir(keras_ops) == ["adaptive_average_pool", "adaptive_max_pool", "average_pool", "image", "max_pool"]
    assert dir(keras_ops.image) == ["resize"]  # reachable as an attribute, as keras.ops.image
    assert dir(tf) == ["image", "nn"] and dir(tf.image) == ["crop_and_resize", "resize"]
    assert dir(jax_image) == ["ResizeMethod", "resize", "scale_and_translate"]
    assert dir(onnx) == sorted(onnx.__all__)
    assert dir(torchvision) == ["ops"]
    assert dir(torchvision.ops) == ["MultiScaleRoIAlign", "PSRoIAlign", "PSRoIPool", "RoIAlign", "RoIPool",
                                    "ps_roi_align", "ps_roi_pool", "roi_align", "roi_pool"]
    for module in (linen, keras_ops, keras_ops.image, tf, tf.nn, tf.image, jax_image, torchvision, torchvision.ops):
        assert sorted(module.__all__) == dir(module)
        for name in module.__all__:
            assert getattr(module, name) is not None
    if importlib.util.find_spec("flax") is not None:
        import flax.linen

        assert linen.Conv is flax.linen.Conv and linen.compact is flax.linen.compact
    with pytest.raises(AttributeError, match="nor has flax.linen|flax.linen, whose other names"):
        linen.no_such_layer  # noqa: B018
    with pytest.raises(AttributeError):
        linen._private  # noqa: B018


def test_keras_tensors_get_symbolic_results(tmp_path):
    """On a KerasTensor each front-end returns a KerasTensor of Keras' shape, with None kept where Keras keeps it
    (spatial sizes included), and checks its arguments at once."""
    _installed("keras", "jax")
    code = textwrap.dedent("""
        import json, os
        os.environ["KERAS_BACKEND"] = "jax"
        import keras
        from poolspec.frontends.keras import ops
        out = []
        for shape in [(31, 31, 3), (None, None, 3), (7, 3)]:
            x = keras.Input(shape)
            for name, args in [("max_pool", (2, 2)), ("average_pool", (3, 2, "same"))]:
                want, got = getattr(keras.ops, name)(x, *args), getattr(ops, name)(x, *args)
                out.append([name, list(want.shape), list(got.shape), want.dtype, got.dtype,
                            type(got).__name__])
        x = keras.Input((20, 16, 3), dtype="uint8")
        got = ops.image.resize(x, (5, 7))
        want = keras.ops.image.resize(x, (5, 7))
        out.append(["resize", list(want.shape), list(got.shape), want.dtype, got.dtype, type(got).__name__])
        try:
            ops.max_pool(keras.Input((8, 8, 3)), 2, padding="full")
            out.append(["bad padding accepted"])
        except ValueError as e:
            out.append(["bad padding", str(e)])
        print(json.dumps(out))
    """)
    path = tmp_path / "script.py"
    path.write_text(code)
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    for row in rows[:-1]:
        name, want_shape, got_shape, want_dtype, got_dtype, kind = row
        assert (got_shape, got_dtype, kind) == (want_shape, want_dtype, "KerasTensor"), row
    assert rows[-1][0] == "bad padding" and "padding" in rows[-1][1]


def test_jax_export_with_symbolic_batch_and_channels():
    """jax.export's shape polymorphism: symbolic batch and channel sizes are mapped over (the windows need static
    spatial sizes, which a symbolic one is refused for, naming the axis); the exported program gives the values
    of the original library's own function."""
    _installed("jax", "flax")
    import flax.linen as flax_linen
    import jax
    import jax.numpy as jnp
    from jax import export

    from poolspec.frontends.flax import linen
    from poolspec.frontends.keras import ops

    x = np.random.default_rng(0).standard_normal((5, 9, 9, 4))
    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 9, 9, c"), jnp.float64)
    cases = [(lambda t: linen.max_pool(t, (3, 3), (2, 2), "SAME"),
              lambda t: flax_linen.max_pool(t, (3, 3), (2, 2), "SAME")),
             (lambda t: linen.avg_pool(t, (2, 3), (1, 2), "VALID"),
              lambda t: flax_linen.avg_pool(t, (2, 3), (1, 2), "VALID")),
             (lambda t: ops.max_pool(t, 2, 2, "same", "channels_last"),
              lambda t: flax_linen.max_pool(t, (2, 2), (2, 2), "SAME"))]
    for ours, theirs in cases:
        program = export.export(jax.jit(ours))(spec)
        assert str(program.out_avals[0].shape[0]) == "b"
        np.testing.assert_allclose(np.asarray(program.call(x)), np.asarray(theirs(jnp.asarray(x))), rtol=1e-12)
    with pytest.raises(ValueError, match="spatial axis 1 has a symbolic size"):
        export.export(jax.jit(cases[0][0]))(jax.ShapeDtypeStruct(export.symbolic_shape("b, h, 9, c"), jnp.float64))
