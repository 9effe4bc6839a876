from __future__ import annotations

import textwrap
from typing import Optional

import libcst as cst

from tflint_gpu.semantic.metric_dtype import label_mixes
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged, with_first_statements


class Keras3MetricDtype(Rule):
    """`y_true * y_pred` in a metric function: Keras 3 no longer casts `y_true` to float32 first.

    ## What it does
    Finds a function given to Keras 3 as a metric — in `compile(metrics=[...])`
    or `weighted_metrics=`, itself or as what a factory called there returns
    (`metrics=[f_score()]`), in the same module or in another module of the
    project — whose body combines its first parameter (the targets) with its
    second (the predictions) in arithmetic (`*`, `+`, `-`, `/`,
    `tf.multiply`...) without casting the targets first. The names are followed
    through subscripts, reductions and element-wise functions
    (`backend.sum(y_true[..., :-1])`); the predictions also through a cast to
    floatx of a threshold of them. Not reported: a body that casts `y_true`
    before it meets `y_pred`, a call handing both to another function (a Keras
    loss casts them itself), a module whose Keras is tf_keras.

    ## Why is this bad?
    tf_keras 2.21's `MeanMetricWrapper.update_state` casts `y_true` and
    `y_pred` to the metric's dtype (floatx, float32) before it calls the
    function; Keras 3.15's calls it with the batch as the data gave it. A
    `keras.utils.Sequence`, generator or `tf.data` pipeline yielding float64
    NumPy targets (or integer masks) then raises `TypeError: Input 'y' of
    'Mul' Op has type float32 that does not match type float64 of argument
    'x'` at the first training step (NumPy arrays given to `fit` directly are
    converted to floatx by Keras 3 and do not fail).

    ## Example
    ```python
    def f_score(threshold=0.5):
        def _f_score(y_true, y_pred):
            y_pred = backend.cast(backend.greater(y_pred, threshold), backend.floatx())
            tp = backend.sum(y_true[..., :-1] * y_pred, axis=[0, 1, 2])
            ...
        return _f_score

    model.compile(loss=loss, optimizer=optimizer, metrics=[f_score()])
    ```

    Use instead: the casts tf_keras applied, at the top of the function.
    ```python
        def _f_score(y_true, y_pred):
            y_true = backend.cast(y_true, backend.floatx())
            y_pred = backend.cast(y_pred, backend.floatx())
            ...
    ```

    ## Fix safety
    Unsafe: under `compile` the fixed function computes what tf_keras computed
    (the same casts, then the same body: identical values, executed in the
    rule's fix cases with the original under tf_keras), but a direct call
    elsewhere (an evaluation script passing float64 arrays) now computes in
    float32. The casts use the file's own `tensorflow.keras.backend` import
    when it has one (`backend.cast(y_true, backend.floatx())`), else
    `tf.cast(y_true, keras.backend.floatx())`. The fix is offered at the
    first finding of a function.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: `fit` on a `Sequence` of float64
    targets with `metrics=[f_score()]` raises the TypeError above under
    Keras 3 and trains under tf_keras 2.21; after the fix Keras 3 trains to the
    weights and metric values tf_keras gave the original (the fix cases).
    examples/TFG928 (`tflint-gpu verify --rule TFG928`, small, CPU):
    fixes-error, the TypeError before, the U-Net-like model trains after.
    bubbliiiing/unet-tf2 `utils/utils_metrics.py:28` and `:30` (its
    `train.py` compiles `metrics=[f_score()]`); its `Iou_score` (`:16`),
    which no script gives to `compile`, is not reported.
    """

    code = "TFG928"
    name = "keras3-metric-dtype"
    message = "Keras 3 calls this metric with `y_true` uncast: float64 targets meet float32 predictions"
    needs = (("def ",),)
    migration = True
    fix_safety = Safety.UNSAFE

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        function = ctx.model.scope_of_node.get(node)
        if function is None or len(node.params.posonly_params + node.params.params) < 2:
            return
        where = ctx.graphs.compile_metric(function)  # asked first: reading the body costs more
        if where is None:
            return
        mixes = label_mixes(node)
        if not mixes:
            return
        given = "here" if where == "this module" else f"in `{where}`"
        true, pred = (p.name.value for p in (node.params.posonly_params + node.params.params)[:2])
        fix = self._fix(node, true, pred, function, ctx)
        for index, mix in enumerate(mixes):
            if index == 0:
                ctx.report(mix, f"Keras 3 calls this metric (given to `compile(metrics=...)` {given}) with "
                                f"`{true}` as the data gives it, where tf_keras cast it to float32: float64 "
                                f"targets meet the float32 `{pred}` here (TypeError); cast both to floatx at the "
                                f"top of the function", fix)
            else:
                ctx.report(mix, f"`{true}` uncast meets `{pred}` here too (Keras 3 metric: TypeError for float64 "
                                f"targets)")

    @staticmethod
    def _fix(node: cst.FunctionDef, true: str, pred: str, function: ScopeInfo, ctx) -> Optional[Fix]:
        if not isinstance(node.body, cst.IndentedBlock):
            return None
        backend = ctx.resolver.module_alias("tensorflow.keras.backend", function, exact=True)
        imports: tuple = ()
        if backend is not None:
            cast, floatx = cst.parse_expression(f"{backend}.cast"), cst.parse_expression(f"{backend}.floatx")
        else:
            spelled = ctx.module_expr("tensorflow", "cast", scope=function)
            keras = ctx.module_expr("keras", "backend.floatx", scope=function)
            if spelled is None or keras is None:
                return None
            (cast, cast_imports), (floatx, keras_imports) = spelled, keras
            imports = tuple(cast_imports) + tuple(keras_imports)
        statements = [cst.SimpleStatementLine([cst.Assign(
            [cst.AssignTarget(cst.Name(name))],
            cst.Call(cast, [cst.Arg(cst.Name(name), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                            cst.Arg(cst.Call(floatx))]))]) for name in (true, pred)]
        return Fix(f"Cast `{true}` and `{pred}` to floatx first (as tf_keras did)", Safety.UNSAFE,
                   {node.body: with_first_statements(node.body, statements)}, imports)


_SEQUENCE = '''


class Batches(tf.keras.utils.Sequence):
    def __len__(self):
        return 3

    def __getitem__(self, index):
        x = np.linspace(-1.0, 1.0, 16).reshape(4, 4) * (index + 1)
        y = np.stack([x[:, 0] > 0, x[:, 1] > 0.2, np.ones(4)], axis=1)
        return x, y.astype("float64")


def train():
    model = tf.keras.Sequential([tf.keras.Input((4,)),
                                 tf.keras.layers.Dense(2, activation="sigmoid", kernel_initializer="ones")])
    model.compile(loss=lambda t, p: tf.reduce_mean(tf.square(tf.cast(t[..., :-1], p.dtype) - p)),
                  optimizer=tf.keras.optimizers.SGD(0.1), metrics=[f_score()])
    history = model.fit(Batches(), epochs=2, verbose=0).history
    return [np.array(history["loss"]), np.array(history["_f_score"])] + model.get_weights()
'''

Keras3MetricDtype.cases = [
    flagged(
        textwrap.dedent('''
        import numpy as np
        import tensorflow as tf
        from tensorflow.keras import backend


        def f_score(beta=1, smooth=1e-5, threshold=0.5):
            def _f_score(y_true, y_pred):
                y_pred = backend.greater(y_pred, threshold)
                y_pred = backend.cast(y_pred, backend.floatx())

                tp = backend.sum(y_true[..., :-1] * y_pred, axis=0)
                fp = backend.sum(y_pred, axis=0) - tp
                fn = backend.sum(y_true[..., :-1], axis=0) - tp
                return ((1 + beta ** 2) * tp + smooth) / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp + smooth)
            return _f_score
        ''') + _SEQUENCE,
        textwrap.dedent('''
        import numpy as np
        import tensorflow as tf
        from tensorflow.keras import backend


        def f_score(beta=1, smooth=1e-5, threshold=0.5):
            def _f_score(y_true, y_pred):
                y_true = backend.cast(y_true, backend.floatx())
                y_pred = backend.cast(y_pred, backend.floatx())
                y_pred = backend.greater(y_pred, threshold)
                y_pred = backend.cast(y_pred, backend.floatx())

                tp = backend.sum(y_true[..., :-1] * y_pred, axis=0)
                fp = backend.sum(y_pred, axis=0) - tp
                fn = backend.sum(y_true[..., :-1], axis=0) - tp
                return ((1 + beta ** 2) * tp + smooth) / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp + smooth)
            return _f_score
        ''') + _SEQUENCE,
        at=[(11, 26, "Keras 3 calls this metric (given to `compile(metrics=...)` here) with `y_true` as the data "
                     "gives it, where tf_keras cast it to float32"),
            (13, 14, "`y_true` uncast meets `y_pred` here too")],
        run="values = train()",
        effect=FIXES_ERROR,
        note="bubbliiiing/unet-tf2's f_score (utils_metrics.py:28/30) on a Sequence of float64 targets: TypeError "
             "under Keras 3; the fixed metric trains under Keras 3 to the losses, scores and weights the original "
             "gave under tf_keras",
        keras2_before=True,
    ),
    flagged(
        '''
        import numpy as np
        import tensorflow as tf


        def dice(y_true, y_pred):
            """Dice over the batch."""
            overlap = tf.reduce_sum(tf.multiply(y_true, y_pred))
            return 2.0 * overlap / (tf.reduce_sum(y_true) + tf.reduce_sum(y_pred) + 1e-6)


        def train():
            model = tf.keras.Sequential([tf.keras.Input((3,)),
                                         tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")])
            model.compile(loss="mse", optimizer="sgd", weighted_metrics=[dice], run_eagerly=True)
            data = tf.data.Dataset.from_tensor_slices((np.ones((8, 3)), np.ones((8, 1)))).batch(4)
            history = model.fit(data, epochs=1, verbose=0).history
            return [np.array(history["loss"]), np.array(history["dice"])] + model.get_weights()
        ''',
        '''
        import numpy as np
        import tensorflow as tf
        import keras


        def dice(y_true, y_pred):
            """Dice over the batch."""
            y_true = tf.cast(y_true, keras.backend.floatx())
            y_pred = tf.cast(y_pred, keras.backend.floatx())
            overlap = tf.reduce_sum(tf.multiply(y_true, y_pred))
            return 2.0 * overlap / (tf.reduce_sum(y_true) + tf.reduce_sum(y_pred) + 1e-6)


        def train():
            model = tf.keras.Sequential([tf.keras.Input((3,)),
                                         tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones")])
            model.compile(loss="mse", optimizer="sgd", weighted_metrics=[dice], run_eagerly=True)
            data = tf.data.Dataset.from_tensor_slices((np.ones((8, 3)), np.ones((8, 1)))).batch(4)
            history = model.fit(data, epochs=1, verbose=0).history
            return [np.array(history["loss"]), np.array(history["dice"])] + model.get_weights()
        ''',
        at=[(7, 29, "Keras 3 calls this metric (given to `compile(metrics=...)` here)"),
            (8, 29, "`y_true` uncast meets `y_pred` here too")],
        run="values = train()",
        effect=FIXES_ERROR,
        note="a function given itself, as a weighted metric, run eagerly (the casts are the wrapper's, not the "
             "graph's); a tf.data pipeline of float64 targets; after a docstring; no tensorflow.keras.backend "
             "import: tf.cast and keras.backend.floatx",
        keras2_before=True,
    ),
    clean(
        '''
        import tensorflow as tf
        from tensorflow.keras import backend as K


        def casts_first(y_true, y_pred):
            y_true = K.cast(y_true, "float32")
            return K.sum(y_true * y_pred)


        def through_a_loss(y_true, y_pred):
            return tf.keras.losses.binary_crossentropy(y_true, y_pred) * 2.0


        def compares(y_true, y_pred):
            return K.mean(K.equal(K.argmax(y_true), K.argmax(y_pred)))


        def pred_only(y_true, y_pred):
            return K.sum(y_pred * y_pred)


        def not_a_metric(y_true, y_pred):
            return y_true * y_pred


        def loss_only(y_true, y_pred):
            return K.mean(K.square(y_true - y_pred))


        class Scale(tf.keras.layers.Layer):
            def call(self, x, y):
                return x * y


        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(loss=loss_only, optimizer="sgd", metrics=[casts_first, through_a_loss, compares, pred_only,
                                                                "accuracy", tf.keras.metrics.AUC()])
        print(not_a_metric(1.0, 2.0))
        ''',
        note="casts y_true first; hands both to a Keras loss (which casts); comparisons of argmaxes; only the "
             "predictions; not given to compile; a loss (Keras 3's loss wrapper converts y_true to y_pred's "
             "dtype); a layer's call",
    ),
    clean(
        '''
        import tensorflow as tf
        import tf_keras
        from tf_keras import backend as K


        def f_score(y_true, y_pred):
            return K.sum(y_true * y_pred)


        model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
        model.compile(loss="mse", optimizer="sgd", metrics=[f_score])
        ''',
        note="tf_keras: its MeanMetricWrapper casts y_true and y_pred first",
    ),
]
