"""A small Flax (linen) image classifier, written against Flax alone, trained with optax-free SGD under jax.jit.
tests/test_frontend_models.py runs it as it is and with ``from flax import linen as nn`` changed to
``from poolspec.frontends.flax import linen as nn``; it prints its losses and predictions as JSON."""

import json

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(8, (3, 3), padding="SAME")(x)
        x = nn.relu(x)
        x = nn.max_pool(x, (2, 2), strides=(2, 2), padding="SAME")
        x = nn.Conv(8, (3, 3))(x)
        x = nn.avg_pool(x, (3, 3), strides=(2, 2), padding=((1, 1), (1, 1)), count_include_pad=False)
        x = nn.max_pool(x, (2, 2)) + nn.pool(x, 0.0, jax.lax.add, (2, 2), (1, 1), "VALID") / 4
        x = x.reshape((x.shape[0], -1))
        return nn.Dense(10)(x)


rng = np.random.default_rng(0)
data = jnp.asarray(rng.standard_normal((32, 23, 23, 3)), jnp.float32)
labels = jnp.asarray(rng.integers(0, 10, 32))
model = CNN()
params = model.init(jax.random.key(0), data[:1])


def loss_fn(params, x, y):
    logits = model.apply(params, x)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


@jax.jit
def step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.02 * g, params, grads), loss


losses = []
for _epoch in range(3):
    for i in range(0, 32, 8):
        params, loss = step(params, data[i:i + 8], labels[i:i + 8])
        losses.append(float(loss))
print(json.dumps({"loss": losses, "prediction": np.asarray(model.apply(params, data[:4])).tolist()}))
