"""A small Keras 3 image classifier, written against Keras alone: functional and subclassing APIs, symbolic
inputs with an unknown batch, ``model.fit``, saving and loading. tests/test_frontend_models.py runs it as it is
and with ``from keras import ops`` changed to ``from poolspec.frontends.keras import ops``; it prints its losses
and predictions as JSON. Usage: python keras_cnn.py OUT_DIR"""

import json
import os
import sys

import keras
import numpy as np
from keras import ops

out_dir = sys.argv[1]
keras.utils.set_random_seed(0)


@keras.saving.register_keras_serializable(package="models")
class PoolBlock(keras.layers.Layer):
    """A subclassed layer whose call uses the pools."""

    def call(self, x):
        y = ops.max_pool(x, 2, strides=2, padding="same")
        return ops.relu(y) + ops.average_pool(x, 3, strides=2, padding="same")


@keras.saving.register_keras_serializable(package="models")
class AdaptiveBlock(keras.layers.Layer):
    """Adaptive pools inside a layer: Keras 3.15's own symbolic shape for them on a KerasTensor is wrong in
    channels_last (the poolspec front-end's is right; see its card)."""

    def call(self, x):
        x = ops.adaptive_average_pool(x, (5, 5))
        return ops.adaptive_max_pool(x, (3, 3)) + ops.average_pool(x, 3, strides=1)


inputs = keras.Input((31, 31, 3))
x = keras.layers.Conv2D(8, 3, padding="same")(inputs)
x = PoolBlock()(x)
x = ops.image.resize(x, (20, 20), interpolation="bilinear")   # on a KerasTensor
x = AdaptiveBlock()(x)
x = ops.max_pool(x, 2, strides=1, padding="same")   # on a KerasTensor
x = keras.layers.Flatten()(x)
outputs = keras.layers.Dense(10)(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer=keras.optimizers.SGD(0.05),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))

rng = np.random.default_rng(0)
data = rng.standard_normal((48, 31, 31, 3)).astype("float32")
labels = rng.integers(0, 10, 48)
history = model.fit(data, labels, batch_size=16, epochs=3, verbose=0, shuffle=False)
path = os.path.join(out_dir, "model.keras")
model.save(path)
loaded = keras.saving.load_model(path)
before, after = model.predict(data[:5], verbose=0), loaded.predict(data[:5], verbose=0)
print(json.dumps({"backend": keras.backend.backend(), "output_shape": list(model.output.shape[1:]),
                  "loss": [float(v) for v in history.history["loss"]],
                  "prediction": np.asarray(before).tolist(),
                  "reloaded_equal": bool(np.array_equal(np.asarray(before), np.asarray(after)))}))
