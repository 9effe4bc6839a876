from __future__ import annotations

from typing import List, Optional

import libcst as cst

from tflint_gpu.semantic.literals import literal_value
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import Rule, clean, flagged

_LAYERS = {"keras.layers.LSTM": "LSTM", "keras.layers.GRU": "GRU"}
# The constructors' first parameters, the same in Keras 3.15 and tf_keras 2.21 (LSTM and GRU).
_POSITIONAL = ("units", "activation", "recurrent_activation", "use_bias")
# Activations the source accepts: the string resolves to keras.activations.tanh / sigmoid.
_ACTIVATIONS = (("activation", "tanh"), ("recurrent_activation", "sigmoid"))
# TensorFlow 2.0 made tf.keras's LSTM/GRU pick the cuDNN kernel; before, it never did.
_FIRST_TF = (2, 0)


class RnnWithoutCudnn(Rule):
    """An `LSTM` or `GRU` layer whose arguments keep it off the cuDNN kernel on a GPU.

    ## What it does
    Finds `keras.layers.LSTM(...)` and `keras.layers.GRU(...)` (spelled
    `tf.keras`, `keras` or `tf_keras`, imported or not, also inside
    `Bidirectional(...)`) whose constructor arguments, as literals or names
    bound once to literals, break one of the conditions Keras checks before it
    runs the cuDNN kernel:
    * `activation` other than `"tanh"` (`"relu"`, `None`...);
    * `recurrent_activation` other than `"sigmoid"` (`"hard_sigmoid"`, the
      Keras 2.2 default, included);
    * `recurrent_dropout` above 0;
    * `unroll=True`;
    * `use_bias=False`;
    * for a GRU, `reset_after=False`.

    Not reported: values the linter cannot read (a parameter, a function
    object such as `tf.nn.relu`, a name bound more than once); `dropout`
    (both flavours apply it to the inputs before the cuDNN call: it does not
    disable the kernel); an explicit `use_cudnn=False` (Keras 3's own opt-out:
    the author chose the generic kernel); `LSTMCell`/`GRUCell` in
    `keras.layers.RNN(cell)` (never cuDNN, whatever the arguments: the generic
    loop is the point of a custom cell, nothing to report); test code; a
    project targeting TensorFlow 1.x, whose `tf.keras` LSTM never used cuDNN.
    Masking (cuDNN needs right-padded masks, checked at run time on the data)
    and the "eager outermost context" condition are not told from the code.

    ## Why is this bad?
    On a GPU, `LSTM` and `GRU` run one fused cuDNN kernel over the whole
    sequence when their arguments allow it, and otherwise a generic loop of
    small per-step ops. The conditions, from the installed sources:
    * Keras 3.15 (`keras/src/backend/tensorflow/rnn.py`,
      `_do_lstm_arguments_support_cudnn` / `_do_gru_arguments_support_cudnn`,
      called by `cudnn_ok`): `activation in (activations.tanh, tf.tanh,
      ops.tanh) and recurrent_activation in (activations.sigmoid, tf.sigmoid,
      ops.sigmoid) and not unroll and use_bias` (GRU: `and reset_after`);
      `LSTM.inner_loop` / `GRU.inner_loop` (`keras/src/layers/rnn/lstm.py`,
      `gru.py`) only try the cuDNN path `if not self.recurrent_dropout`, and
      apply `dropout` as one mask on the inputs before it.
    * tf_keras 2.21 (`tf_keras/src/layers/rnn/lstm.py`, `gru.py`, in
      `__init__`): `self._could_use_gpu_kernel = (self.activation in
      (activations.tanh, tf.tanh) and self.recurrent_activation in
      (activations.sigmoid, tf.sigmoid) and recurrent_dropout == 0 and not
      unroll and use_bias [and reset_after] and
      tf.compat.v1.executing_eagerly_outside_functions())`; when it is False
      and a GPU is present, the layer logs `gru_lstm_utils.
      CUDNN_NOT_AVAILABLE_MSG`: "Layer %s will not use cuDNN kernels since it
      doesn't meet the criteria. It will use a generic GPU kernel as fallback
      when running on GPU."
    * Both layers' docstrings list "The requirements to use the cuDNN
      implementation are: 1. `activation` == `tanh` 2. `recurrent_activation`
      == `sigmoid` 3. `recurrent_dropout` == 0 4. `unroll` is `False` 5.
      `use_bias` is `True`" (GRU adds "6. `reset_after` is `True`"), then the
      masking and eager conditions.

    ## Example
    ```python
    model = tf.keras.Sequential([
        tf.keras.layers.LSTM(64, activation="relu", recurrent_dropout=0.2),
        tf.keras.layers.Dense(1),
    ])
    ```

    Use instead (when the model's quality allows it):
    ```python
    model = tf.keras.Sequential([
        tf.keras.layers.LSTM(64, dropout=0.2),
        tf.keras.layers.Dense(1),
    ])
    ```

    ## Fix safety
    No fix: another activation, no recurrent dropout, a bias or another GRU
    variant is another model (other outputs, other trained weights, maybe
    other accuracy). Whether the speed is worth that is the author's call.

    ## Measured effect
    Not measured: this machine has no GPU, and on a CPU both flavours run the
    generic kernel whatever the arguments, so the speed difference cannot be
    shown here. What was checked (TensorFlow 2.21, Keras 3.15.1, tf_keras
    2.21.0, CPU): the eligibility functions themselves, on the layers the
    arguments make. Keras 3 `_do_lstm_arguments_support_cudnn` /
    `_do_gru_arguments_support_cudnn` (with the cell's activations, `unroll`,
    `use_bias`, `reset_after`, and `recurrent_dropout == 0`) and tf_keras
    `layer._could_use_gpu_kernel`: True for the defaults, `activation="tanh"`,
    `recurrent_activation="sigmoid"`, `tf.nn.tanh`, `keras.activations.tanh`,
    `recurrent_dropout=0.0` and `dropout=0.3`; False for `activation="relu"`,
    `activation=None`, `recurrent_activation="hard_sigmoid"`,
    `recurrent_dropout=0.2`, `unroll=True`, `use_bias=False` and GRU
    `reset_after=False`, in both flavours and both layers. Keras's own
    documentation calls the cuDNN implementation "fast" ("the layer will use a
    fast cuDNN implementation"); its size on a given GPU is not claimed here.
    `examples/TFG409` (an `LSTM(16, activation="relu", recurrent_dropout=0.2)`
    rewritten as `LSTM(16, dropout=0.2)`), `tflint-gpu verify --rule TFG409
    --device cpu --size small`: fixes-behaviour, Keras 3's check False before
    and True after (the same under tf_keras, `TF_USE_LEGACY_KERAS=1`); the
    CPU times of its row are the generic kernel both times and say nothing
    of a GPU.

    On real code: over the eleven checked-out projects, the eight package
    checkouts and installed keras/src and tf_keras/src, 5 findings, all read,
    all true (`Bidirectional(LSTM(units=100, activation="relu"))` in two
    seq2seq notebooks, a DeepSpeech2 `Bidirectional(GRU(..., activation=
    "relu"))`); an `LSTM(32, activation='tanh')` stays silent.
    """

    code = "TFG409"
    name = "rnn-without-cudnn"
    message = "LSTM/GRU arguments keep it off the cuDNN kernel on a GPU"
    needs = (("LSTM", "GRU"),)
    fix_safety = None

    def visit_Call(self, node: cst.Call, ctx) -> None:
        layer = _LAYERS.get(ctx.call_name(node) or "")
        if layer is None or in_test_function(ctx.scope) or ctx.in_test_module:
            return
        if not ctx.target.at_least(_FIRST_TF):
            return
        scope = ctx.scope
        values = _arguments(node)
        use_cudnn = values.get("use_cudnn")
        if use_cudnn is not None and literal_value(use_cudnn, scope) == (False,):
            return
        broken: List[str] = []
        for name, wanted in _ACTIVATIONS:
            given = values.get(name)
            read = literal_value(given, scope) if given is not None else None
            if read is not None and (read[0] is None or isinstance(read[0], str)) and read[0] != wanted:
                shown = "None" if read[0] is None else f'"{read[0]}"'
                broken.append(f"`{name}={shown}` (cuDNN needs \"{wanted}\")")
        dropout = _read(values, "recurrent_dropout", scope)
        if isinstance(dropout, (int, float)) and not isinstance(dropout, bool) and dropout > 0:
            broken.append(f"`recurrent_dropout={dropout}` (cuDNN needs 0)")
        if _read(values, "unroll", scope) is True:
            broken.append("`unroll=True`")
        if _read(values, "use_bias", scope) is False:
            broken.append("`use_bias=False`")
        if layer == "GRU" and _read(values, "reset_after", scope) is False:
            broken.append("`reset_after=False`")
        if not broken:
            return
        ctx.report(node, f"`{layer}` with {', '.join(broken)} cannot use the cuDNN kernel: on a GPU Keras runs "
                         f"the generic per-step loop instead (Keras's listed requirements: activation tanh, "
                         f"recurrent_activation sigmoid, recurrent_dropout 0, unroll False, use_bias True"
                         f"{', reset_after True' if layer == 'GRU' else ''})")

    cases = [
        flagged(
            """
            import tensorflow as tf
            from tensorflow.keras.layers import GRU, LSTM, Bidirectional

            DROP = 0.25
            model = tf.keras.Sequential([
                tf.keras.layers.LSTM(32, activation="relu", return_sequences=True),
                Bidirectional(LSTM(16, recurrent_dropout=DROP, return_sequences=True)),
                GRU(8, reset_after=False, unroll=True),
                tf.keras.layers.Dense(1),
            ])
            """,
            at=[(6, 5, "`LSTM` with `activation=\"relu\"` (cuDNN needs \"tanh\") cannot use the cuDNN kernel"),
                (7, 19, "`LSTM` with `recurrent_dropout=0.25` (cuDNN needs 0) cannot use the cuDNN kernel"),
                (8, 5, "`GRU` with `unroll=True`, `reset_after=False` cannot use the cuDNN kernel")],
            note="tf.keras spelling, an imported name inside Bidirectional with a name bound to a literal, a GRU",
        ),
        flagged(
            """
            import keras
            import tf_keras

            a = keras.layers.LSTM(4, None, "hard_sigmoid")
            b = tf_keras.layers.GRU(4, use_bias=False)
            c = keras.layers.GRU(4, activation="tanh", recurrent_activation="hard_sigmoid")
            """,
            at=[(4, 5, "`LSTM` with `activation=None` (cuDNN needs \"tanh\"), `recurrent_activation=\"hard_sigmoid\"`"),
                (5, 5, "`GRU` with `use_bias=False` cannot use the cuDNN kernel"),
                (6, 5, "`GRU` with `recurrent_activation=\"hard_sigmoid\"` (cuDNN needs \"sigmoid\")")],
            note="Keras 3 and tf_keras spellings; positional activation arguments",
        ),
        clean(
            """
            import tensorflow as tf
            import keras

            def build(act, units):
                return keras.Sequential([
                    keras.layers.LSTM(units),
                    keras.layers.LSTM(units, activation="tanh", recurrent_activation="sigmoid"),
                    keras.layers.LSTM(units, activation=act),
                    keras.layers.LSTM(units, activation=tf.nn.relu),
                    keras.layers.LSTM(units, dropout=0.3, recurrent_dropout=0.0),
                    keras.layers.GRU(units, reset_after=True, use_bias=True, unroll=False),
                    keras.layers.RNN(keras.layers.LSTMCell(units, activation="relu")),
                    keras.layers.LSTM(units, activation="relu", use_cudnn=False),
                ])

            rate = 0.1
            rate = 0.0
            layer = keras.layers.LSTM(4, recurrent_dropout=rate)
            """,
            note="defaults; tanh spelled out; a parameter; a function object; dropout; GRU defaults spelled; "
                 "an LSTMCell; use_cudnn=False; a name bound twice",
        ),
        clean(
            """
            import tensorflow as tf

            def test_relu_lstm():
                layer = tf.keras.layers.LSTM(4, activation="relu")
                assert layer.activation is tf.keras.activations.relu
            """,
            note="test code",
        ),
    ]


def _arguments(node: cst.Call) -> dict:
    """The constructor's arguments by parameter name (the first four also by position)."""
    found = {}
    for index, arg in enumerate(node.args):
        if arg.star:
            break
        if arg.keyword is not None:
            found[arg.keyword.value] = arg.value
        elif index < len(_POSITIONAL):
            found[_POSITIONAL[index]] = arg.value
    for arg in node.args:
        if arg.keyword is not None and not arg.star:
            found[arg.keyword.value] = arg.value
    return found


def _read(values: dict, name: str, scope) -> Optional[object]:
    given = values.get(name)
    if given is None:
        return None
    read = literal_value(given, scope)
    return read[0] if read is not None else None
