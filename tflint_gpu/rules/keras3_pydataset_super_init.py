from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.rules.base import Fix, Rule, Safety, clean, flagged, with_first_statements

_DATASETS = ("keras.utils.Sequence", "keras.utils.PyDataset")


class Keras3PyDatasetSuperInit(Rule):
    """A Keras 3 `Sequence` subclass whose `__init__` does not call `super().__init__()`.

    ## What it does
    Finds the `__init__` of a class of the file that derives directly (and
    only) from Keras 3's `keras.utils.Sequence` or `keras.utils.PyDataset`
    when its own code makes no `__init__` call (`super().__init__(...)`,
    `Base.__init__(self, ...)`). Not reported: tf_keras classes, classes
    with another base, an `__init__` that calls one.

    ## Why is this bad?
    Keras 3's `Sequence` is its `PyDataset`, whose constructor records the
    loading options (`workers`, `use_multiprocessing`, `max_queue_size`:
    `fit`'s own arguments of those names are gone). Measured under
    TensorFlow 2.21 / Keras 3.15: `fit` on such a dataset warns `UserWarning:
    Your PyDataset class should call super().__init__(**kwargs) in its
    constructor` and trains with the defaults; tf_keras 2.21's `Sequence`
    has no constructor to call and no warning. Keras 2 projects wrote
    `Sequence` subclasses without the call (bubbliiiing/unet-tf2's
    dataloaders).

    ## Example
    ```python
    class Batches(keras.utils.Sequence):
        def __init__(self, files, batch_size):
            self.files = files
            self.batch_size = batch_size
    ```

    Use instead:
    ```python
    class Batches(keras.utils.Sequence):
        def __init__(self, files, batch_size):
            super().__init__()
            self.files = files
            self.batch_size = batch_size
    ```

    ## Fix safety
    Safe: `super().__init__()` with no arguments sets the defaults Keras 3
    used without it (one worker, no multiprocessing, a queue of 10), and
    under tf_keras it calls `object.__init__`. The fix puts the call first
    in `__init__` (after a docstring).

    ## Measured effect
    TensorFlow 2.21, CPU: a one-layer model fit 2 epochs on such a
    `Sequence`: losses 1.5888, 1.3876 under tf_keras 2.21 and under Keras
    3.15 with and without the call; the warning only without it. The fix
    case runs the original under tf_keras and the fix under Keras 3:
    identical losses. examples/TFG930 (`tflint-gpu verify --rule TFG930`):
    equivalent (the same losses, without the warning).
    """

    code = "TFG930"
    name = "keras3-pydataset-super-init"
    message = "Keras 3's `PyDataset` warns when `__init__` does not call `super().__init__()`"
    needs = (("Sequence", "PyDataset"), ("__init__",))
    fix_safety = Safety.SAFE
    migration = True

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        if node.name.value != "__init__" or not isinstance(node.body, cst.IndentedBlock):
            return
        function = ctx.model.scope_of_node.get(node)
        cls = function.parent if function is not None else None
        if cls is None or cls.kind != "class" or not isinstance(cls.node, cst.ClassDef) \
                or len(cls.node.bases) != 1 or ctx.graphs.objects.bases(cls):
            return  # another base, or a base of the file's own: its __init__ decides
        if ctx.graphs.keras_flavour(cls) != KERAS3 or ctx.migration.class_base(cls) not in _DATASETS:
            return
        if any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "__init__"
               for call in ctx.model.nodes_in(function, "Call")):
            return
        call = cst.SimpleStatementLine([cst.Expr(cst.parse_expression("super().__init__()"))])
        fix = Fix("Call `super().__init__()` first", Safety.SAFE, {node.body: with_first_statements(node.body, [call])})
        ctx.report(node.name, "Keras 3's `PyDataset` (its `Sequence`) warns at `fit` when `__init__` does not call "
                              "`super().__init__()`: call it", fix)

    cases = [
        flagged(
            """
            import numpy as np
            from tensorflow import keras


            class Batches(keras.utils.Sequence):
                def __init__(self, n):
                    \"\"\"Two batches.\"\"\"
                    self.n = n

                def __len__(self):
                    return 2

                def __getitem__(self, i):
                    return np.full((4, 2), i, "float32"), np.ones((4, 1), "float32")


            def train():
                keras.utils.set_random_seed(0)
                model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
                model.compile("sgd", "mse")
                return model.fit(Batches(3), epochs=2, verbose=0).history["loss"]
            """,
            fixed="""
            import numpy as np
            from tensorflow import keras


            class Batches(keras.utils.Sequence):
                def __init__(self, n):
                    \"\"\"Two batches.\"\"\"
                    super().__init__()
                    self.n = n

                def __len__(self):
                    return 2

                def __getitem__(self, i):
                    return np.full((4, 2), i, "float32"), np.ones((4, 1), "float32")


            def train():
                keras.utils.set_random_seed(0)
                model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
                model.compile("sgd", "mse")
                return model.fit(Batches(3), epochs=2, verbose=0).history["loss"]
            """,
            at=[(6, 9, "Keras 3's `PyDataset` (its `Sequence`) warns at `fit` when `__init__` does not call "
                       "`super().__init__()`")],
            run="losses = train()",
            keras2_before=True,
            note="the same losses under tf_keras before and Keras 3 after, without the warning",
        ),
        clean(
            """
            import tf_keras
            from tensorflow import keras


            class Called(keras.utils.PyDataset):
                def __init__(self, n, **kwargs):
                    super().__init__(**kwargs)
                    self.n = n


            class Named(keras.utils.Sequence):
                def __init__(self, n):
                    keras.utils.Sequence.__init__(self)
                    self.n = n


            class Old(tf_keras.utils.Sequence):
                def __init__(self, n):
                    self.n = n


            class Mixed(keras.utils.Sequence, dict):
                def __init__(self, n):
                    self.n = n


            class Child(Called):
                def __init__(self, n):
                    self.n = n
            """,
            note="calls super().__init__; calls the base's __init__; tf_keras; another base; a base of the file's own",
        ),
    ]
