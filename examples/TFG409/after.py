"""TFG409: an LSTM whose arguments keep it off the cuDNN kernel on a GPU.

The sequence model uses `activation="relu"` and `recurrent_dropout=0.2`;
Keras runs the cuDNN kernel only for `activation="tanh"`,
`recurrent_activation="sigmoid"`, `recurrent_dropout=0`, `unroll=False`,
`use_bias=True`, so on a GPU this layer runs the generic per-step loop. The
rewrite uses the default activations and `dropout=0.2` on the inputs
instead (another model: the rule offers no fix). No GPU is needed to see the
difference in eligibility: `main` trains the model briefly and returns, with
its loss, whether Keras's own eligibility check accepts the layer (Keras 3:
`_do_lstm_arguments_support_cudnn` in keras/src/backend/tensorflow/rnn.py
and `recurrent_dropout == 0`, as `LSTM.inner_loop` checks; tf_keras:
`layer._could_use_gpu_kernel`). The speed on a GPU is not measured here.
"""
import importlib

import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (256, 2), "large": (2048, 5)}  # (sequences, epochs)


def cudnn_eligible(layer):
    """Keras's own check of the layer's arguments (the GPU itself aside)."""
    if hasattr(layer, "_could_use_gpu_kernel"):  # tf_keras
        return bool(layer._could_use_gpu_kernel)
    rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
    cell = layer.cell
    return bool(rnn._do_lstm_arguments_support_cudnn(cell.activation, cell.recurrent_activation,
                                                     layer.unroll, cell.use_bias)
                and not layer.recurrent_dropout)


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 20, 4)).astype("float32")
    y = x[:, :, 0].sum(axis=1, keepdims=True)
    tf.keras.utils.set_random_seed(0)
    lstm = tf.keras.layers.LSTM(16, dropout=0.2)
    model = tf.keras.Sequential([tf.keras.Input((20, 4)), lstm, tf.keras.layers.Dense(1)])
    model.compile("adam", loss="mse")
    history = model.fit(x, y, epochs=epochs, batch_size=32, verbose=0)
    return np.array([float(cudnn_eligible(lstm)), history.history["loss"][-1]])


def behaviour_changed(before, after):
    """Keras's cuDNN check rejects the layer before and accepts it after."""
    return before[0] == 0.0 and after[0] == 1.0
