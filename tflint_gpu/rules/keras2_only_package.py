from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.model import dotted_name
from tflint_gpu.rules.base import Rule, clean, flagged

# Packages that import Keras 2's internals and fail to import where `keras` is Keras 3 (measured under
# TF 2.21 / Keras 3.15 with the newest release of each): package -> (release, error).
_KERAS2_ONLY = {
    "tensorflow_addons": ("0.23.0, its last release",
                          "ModuleNotFoundError: No module named 'keras.src.engine'"),
}


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _import_guarded(node: cst.CSTNode, ctx) -> bool:
    """Is the import in a ``try`` whose handlers catch its ImportError (a fallback follows), or in the
    ``else`` of a feature test (``if hasattr(layers, "GroupNormalization"): ... else: from tfa...``)?"""
    child = node
    for above in ctx.scope.ancestors(node):
        if isinstance(above, cst.If) and child is above.orelse and isinstance(above.test, cst.Call) \
                and isinstance(above.test.func, cst.Name) and above.test.func.value == "hasattr":
            return True
        child = above
        if isinstance(above, cst.Try):
            for handler in above.handlers:
                caught = handler.type
                names = [caught] if not isinstance(caught, cst.Tuple) else [e.value for e in caught.elements]
                if caught is None or any(isinstance(n, cst.Name) and n.value in _IMPORT_ERRORS for n in names):
                    return True
    return False


def _package(name: Optional[str]) -> Optional[str]:
    if name is None:
        return None
    top = name.split(".", 1)[0]
    return top if top in _KERAS2_ONLY else None


class Keras2OnlyPackage(Rule):
    """An import of a package that works with Keras 2 only: TensorFlow Addons.

    ## What it does
    Finds `import tensorflow_addons` and `from tensorflow_addons... import ...`
    (any alias) in a project whose target is Keras 3.

    ## Why is this bad?
    TensorFlow Addons reached its end of life with 0.23.0 (2023) and imports
    Keras 2's internals: where `keras` is Keras 3 (TF 2.16+), importing it
    fails. Measured with tensorflow-addons 0.23.0 under TF 2.21 / Keras 3.15:
    `ModuleNotFoundError: No module named 'keras.src.engine'`, whatever the
    file uses from it; `TF_USE_LEGACY_KERAS=1` does not help, because tfa
    imports the `keras` package itself. The file then fails at its first
    line, before any other breakage shows.

    ## Example
    ```python
    import tensorflow_addons as tfa
    optimizer = tfa.optimizers.AdamW(weight_decay=1e-4, learning_rate=1e-3)
    ```

    Use instead:
    ```python
    optimizer = keras.optimizers.AdamW(weight_decay=1e-4, learning_rate=1e-3)  # see below
    ```

    ## Fix safety
    No fix: the replacements differ. Keras 3's `AdamW` multiplies the weight
    decay by the learning rate and tfa's does not; tfa's `gelu` is
    approximate by default and Keras's is not (`approximate=True`); tfa's
    image ops and losses have different homes or none. Not flagged: projects
    whose target is Keras 2 (tfa works with TF 2.15 and older), an import in
    a `try` whose `except ImportError` falls back, the package's own modules.

    ## Measured effect
    TF 2.21 CPU, tensorflow-addons 0.23.0: the import error above under
    Keras 3.15 (emla2805/vision-transformer train.py:5 and model.py:2, the
    project's first crash).
    """

    code = "TFG917"
    name = "keras2-only-package"
    message = "This package works with Keras 2 only: its import fails under Keras 3"
    needs = (tuple(_KERAS2_ONLY),)
    migration = True

    def visit_Import(self, node: cst.Import, ctx) -> None:
        for alias in node.names:
            package = _package(dotted_name(alias.name))
            if package is not None:
                self._report(alias, package, ctx)

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx) -> None:
        if node.relative or node.module is None:
            return
        package = _package(dotted_name(node.module))
        if package is not None:
            self._report(node, package, ctx)

    @staticmethod
    def _report(node: cst.CSTNode, package: str, ctx) -> None:
        if ctx.migration.guarded(node, ctx.scope) or _import_guarded(node, ctx) or ctx.own_module(package):
            return  # (the package's own code: tensorflow/addons itself)
        release, error = _KERAS2_ONLY[package]
        ctx.report(node, f"`{package}` ({release}) imports Keras 2's internals: under Keras 3 the import fails "
                         f"({error}); replace what the file uses from it, or pin Keras 2")


Keras2OnlyPackage.cases = [
    flagged(
        """
        import tensorflow as tf
        import tensorflow_addons as tfa
        from tensorflow_addons.optimizers import AdamW

        optimizer = tfa.optimizers.AdamW(weight_decay=1e-4, learning_rate=1e-3)
        """,
        at=[(2, 8, "`tensorflow_addons` (0.23.0, its last release) imports Keras 2's internals"),
            (3, 1, "`tensorflow_addons` (0.23.0, its last release) imports Keras 2's internals")],
        note="emla2805/vision-transformer train.py:5 (ModuleNotFoundError under Keras 3, measured with tfa 0.23.0)",
    ),
    clean(
        """
        import tensorflow as tf

        try:
            import tensorflow_addons as tfa
        except ImportError:
            tfa = None

        import tensorflow_addons_extra

        if hasattr(tf.keras.layers, "GroupNormalization"):
            GroupNormalization = tf.keras.layers.GroupNormalization
        else:
            from tensorflow_addons.layers import GroupNormalization
        """,
        note="an import guarded by `except ImportError`; another package whose name starts the same; the "
             "fallback of a feature test (leondgarse/keras_cv_attention_models common_layers.py:271)",
    ),
]
