"""A small TensorFlow image classifier, written against TensorFlow alone: variables, tf.nn and tf.image ops, a
GradientTape training step under tf.function. tests/test_frontend_models.py runs it as it is and with
``import tensorflow as tf`` changed to ``from poolspec.frontends import tf``; it prints its losses and predictions
as JSON."""

import json

import numpy as np
import tensorflow as tf

tf.random.set_seed(0)
rng = np.random.default_rng(0)
data = tf.constant(rng.standard_normal((32, 21, 21, 3)), tf.float32)
labels = tf.constant(rng.integers(0, 10, 32))
w1 = tf.Variable(tf.random.normal((3, 3, 3, 8), stddev=0.3, seed=1))
w2 = tf.Variable(tf.random.normal((8 * 6 * 6, 10), stddev=0.05, seed=2))
variables = [w1, w2]


def model(x):
    x = tf.nn.relu(tf.nn.conv2d(x, w1, strides=1, padding="SAME"))
    x = tf.nn.max_pool2d(x, ksize=3, strides=2, padding="SAME")                  # 11 x 11
    x = tf.nn.avg_pool2d(x, ksize=2, strides=1, padding="VALID")                 # 10 x 10
    x = tf.image.resize(x, (12, 12), method="bilinear", antialias=True)
    x = tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")                 # 6 x 6
    return tf.matmul(tf.reshape(x, (-1, 8 * 6 * 6)), w2)


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
    grads = tape.gradient(loss, variables)
    for v, g in zip(variables, grads):
        v.assign_sub(0.03 * g)
    return loss


losses = []
for _epoch in range(3):
    for i in range(0, 32, 8):
        losses.append(float(step(data[i:i + 8], labels[i:i + 8])))
print(json.dumps({"loss": losses, "prediction": model(data[:4]).numpy().tolist()}))
