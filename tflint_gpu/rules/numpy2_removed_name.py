from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic import numpy_removals
from tflint_gpu.semantic.model import dotted_name
from tflint_gpu.rules.base import BY_TARGET, FIXES_ERROR, Fix, Rule, Safety, clean, flagged


def _tf_of(numpy: tuple) -> str:
    """The first TensorFlow whose wheels install a NumPy without the name (``numpy_removals.installed_numpy``)."""
    if numpy <= (1, 24):
        return "TF 2.13+"
    if numpy < (2, 0):
        return "TF 2.14+"
    return "TF 2.18+" if numpy == (2, 0) else "TF 2.21"


def _where(entry: dict) -> str:
    removed = tuple(int(p) for p in entry["removed_in"].split("."))
    return f"NumPy {entry['removed_in']} (installed with {_tf_of(removed)})"


_KINDS = {"same object": "the same object under NumPy 1", "same value": "the same value under NumPy 1",
          "forwards": "NumPy 1's function only forwarded to it"}


def _message(name: str, entry: dict) -> str:
    text = f"`np.{name}` was removed in {_where(entry)}: AttributeError"
    replacement = entry["replacement"]
    if replacement:
        if entry["exact"]:
            text += f"; use `{replacement}` ({_KINDS[entry['kind']]})"
        else:
            text += f"; the closest is `{replacement}` ({entry['difference']})"
    elif entry.get("advice"):
        text += f"; NumPy says: {entry['advice'].strip()}"
    return text


def _replacement_expr(replacement: str, module: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``replacement`` (``np.inf``, ``-np.inf``, ``np.lib.add_newdoc``, ``0.0``) with ``np`` written as the
    expression the code used for the module; parenthesised when it is a negation."""
    negative = replacement.startswith("-")
    text = replacement[1:] if negative else replacement
    if text.startswith("np."):
        expr: cst.BaseExpression = module
        for part in text[3:].split("."):
            expr = cst.Attribute(value=expr, attr=cst.Name(part))
    elif text.replace(".", "", 1).isdigit():
        expr = cst.Float(text)
    else:
        return None
    if negative:
        return cst.UnaryOperation(operator=cst.Minus(), expression=expr, lpar=[cst.LeftParen()],
                                  rpar=[cst.RightParen()])
    return expr


class Numpy2RemovedName(Rule):
    """`np.Inf`, `np.float_`, `np.int`, `np.product`...: names NumPy 2 (which TF 2.18+ installs) removed.

    ## What it does
    Finds attributes of the `numpy` module (`np.Inf` after `import numpy as
    np`, `numpy.NaN`, an alias assigned once) and `from numpy import Inf`
    names that the installed NumPy no longer has, from a table derived and
    executed by `scripts/derive_numpy_removals.py`
    (`tflint_gpu/semantic/data/numpy2_removed.json`, 115 names): NumPy 2's
    own list of expired attributes (`numpy._expired_attrs_2_0`: `Inf`,
    `NaN`, `float_`, `complex_`, `string_`, `unicode_`, `alltrue`,
    `sometrue`, `round_`...), its list of removed builtin aliases
    (`numpy.__former_attrs__`: `int`, `float`, `complex`, `object`, `str`,
    gone since NumPy 1.24), and the public names of NumPy 1.23.5 that NumPy
    2.4.6 lacks (`product`, `cumproduct`, `NAN`, `in1d`, `trapz`, the
    `bool8`-style aliases, the warnings moved to `np.exceptions`). Each was
    executed: `getattr(numpy, name)` raises AttributeError under NumPy 2.4.6.
    `np.bool` is not reported: NumPy 2 has it again (NumPy's `bool_`).

    Which NumPy the project gets follows from its TensorFlow target (the
    wheels' pins): TF 2.18 is the first built against NumPy 2 and every
    later release installs NumPy 2 (TF 2.21 requires only `numpy>=1.26.0`,
    so pip takes the newest: every NumPy 2.x removal counts); TF 2.16 and
    2.17 still pin `numpy<2.0.0` (as 2.14 and 2.15 do), so NumPy 2's removals
    are not reported for them, only the builtin aliases NumPy 1.24 removed
    (TF 2.13+ installs NumPy 1.24 or later; TF 2.12 pins `numpy<1.24`, where
    nothing is reported). For TF 2.18-2.20 only NumPy 2.0's removals count;
    an uncapped or unpinned TensorFlow (`latest`) gets all of them. A
    project that pins `numpy<2` itself is not read: select the rule off there.

    Not reported: a local name `np` that is not the module, an assignment
    that puts the name back (`np.object = object`), names guarded by
    `hasattr(np, "Inf")`, in a `try` whose handler catches AttributeError or
    ImportError (or a bare `except`), in an `except AttributeError:`
    fallback, and in code a test expects to raise.

    ## Why is this bad?
    Measured with NumPy 2.4.6 (TF 2.21's): `np.Inf` raises
    `AttributeError: `np.Inf` was removed in the NumPy 2.0 release. Use
    `np.inf` instead.`, `np.int` raises `AttributeError: module 'numpy' has
    no attribute 'int'`, and `from numpy import Inf` raises ImportError. The
    program stops at the first one it reaches.

    ## Example
    ```python
    import numpy as np

    best = np.Inf
    labels = y.astype(np.int)
    ```

    Use instead:
    ```python
    import numpy as np

    best = np.inf
    labels = y.astype(int)
    ```

    ## Fix safety
    Safe where the table records the replacement as exact: under NumPy
    1.23.5, 1.24.4 and 1.26.4 (each installed and executed) the old name is
    the replacement object itself (`np.Inf is np.inf`, `np.NaN is np.nan`,
    `np.float_ is np.float64`, `np.string_ is np.bytes_`, `np.int is int`),
    equal to it (`np.NINF == -np.inf`, written parenthesised), or a function
    whose body only forwards its arguments to it (`np.product` to `np.prod`,
    `np.alltrue` to `np.all`, `np.round_` to `np.around`), and NumPy 2 has the
    same replacement: the fixed code computes what NumPy 1 computed, under
    both. A builtin replacement (`np.int` -> `int`) is written only where the
    builtin's name is not rebound. `from numpy import Inf` becomes `from numpy
    import inf as Inf` (the local name kept).
    Unsafe, with the difference in the message, where the replacement is not
    the same: `np.in1d` -> `np.isin` (keeps the first argument's shape where
    `in1d` flattened it), `np.trapz` -> `np.trapezoid` (absent before NumPy
    2.0), `np.AxisError` -> `np.exceptions.AxisError` (absent before NumPy
    1.25). No fix where NumPy names no one-expression replacement
    (`np.asfarray`, `np.find_common_type`...): the message quotes NumPy's
    advice.

    ## Measured effect
    NumPy 2.4.6: each entry's AttributeError as recorded in the table.
    examples/TFG922 (`tflint-gpu verify --rule TFG922`): fixes-error, the
    early-stopping bookkeeping of a Keras callback (`best = np.Inf`, labels
    cast with `np.int`) raises before and runs after.
    """

    code = "TFG922"
    name = "numpy2-removed-name"
    message = "NumPy 2 removed this name"
    needs = (("numpy",),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)
    migration = BY_TARGET  # the target's TensorFlow decides which NumPy is installed

    def _numpy(self, ctx):
        return numpy_removals.installed_numpy(ctx.target)

    def _guarded(self, node: cst.CSTNode, name: str, ctx) -> bool:
        if ctx.migration.guarded(node, ctx.scope) or numpy_removals.held_by_try(node, ctx.scope):
            return True
        for obj, attr, has in ctx.migration.hasattr_guards(node, ctx.scope):
            if has and attr == name and ctx.resolver.raw_qualname(obj, ctx.scope) == "numpy":
                return True
        return False

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        name = node.attr.value
        entry = numpy_removals.removed(name, self._numpy(ctx))
        if entry is None or ctx.resolver.raw_qualname(node.value, ctx.scope) != "numpy":
            return
        parent = next(iter(ctx.scope.ancestors(node)), None)
        if isinstance(parent, (cst.ImportFrom, cst.ImportAlias)) or self._guarded(node, name, ctx):
            return
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.Del)) \
                and getattr(parent, "target", None) is node:
            return  # `np.object = object`: a shim that puts the name back, not a read
        ctx.report(node, _message(name, entry), self._fix(node, name, entry, ctx))

    def _fix(self, node: cst.Attribute, name: str, entry: dict, ctx) -> Optional[Fix]:
        replacement = entry["replacement"]
        if not replacement:
            return None
        safety = Safety.SAFE if entry["exact"] else Safety.UNSAFE
        if replacement.isidentifier():  # a builtin: np.int -> int
            if ctx.binding(replacement) is not None:
                return None
            new: Optional[cst.BaseExpression] = cst.Name(replacement)
        else:
            new = _replacement_expr(replacement, node.value)
        if new is None:
            return None
        return Fix(f"Use `{replacement}`", safety, {node: new})

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar) \
                or dotted_name(node.module) != "numpy":
            return
        numpy = self._numpy(ctx)
        for alias in node.names:
            name = dotted_name(alias.name)
            entry = numpy_removals.removed(name, numpy) if name else None
            if entry is None or self._guarded(node, name, ctx):
                continue
            fix = None
            replacement = entry["replacement"] or ""
            if entry["exact"] and replacement.startswith("np.") and replacement[3:].isidentifier():
                local = alias.asname.name if alias.asname is not None else alias.name
                new_alias = alias.with_changes(name=cst.Name(replacement[3:]),
                                               asname=cst.AsName(name=local))
                fix = Fix(f"Import `{replacement[3:]}` as `{name if alias.asname is None else dotted_name(local)}`",
                          Safety.SAFE, {alias: new_alias})
            ctx.report(alias, _message(name, entry).replace("AttributeError", "ImportError", 1), fix)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class EarlyStopping:
                def __init__(self, mode="min"):
                    if mode == "min":
                        self.best = np.Inf
                    else:
                        self.best = -np.Inf
                    self.missing = np.NaN

            stopper = EarlyStopping()
            labels = np.array([0.7, 1.2, 2.9]).astype(np.int)
            scores = np.array([1.0, 2.0], dtype=np.float_)
            total = np.product([2, 3, 4])
            floor = 2 * np.NINF
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            class EarlyStopping:
                def __init__(self, mode="min"):
                    if mode == "min":
                        self.best = np.inf
                    else:
                        self.best = -np.inf
                    self.missing = np.nan

            stopper = EarlyStopping()
            labels = np.array([0.7, 1.2, 2.9]).astype(int)
            scores = np.array([1.0, 2.0], dtype=np.float64)
            total = np.prod([2, 3, 4])
            floor = 2 * (-np.inf)
            """,
            at=[
                (7, 25, "`np.Inf` was removed in NumPy 2.0 (installed with TF 2.18+): AttributeError; use `np.inf` (the same object under NumPy 1)"),
                (9, 26, "`np.Inf` was removed in NumPy 2.0"),
                (10, 24, "`np.NaN` was removed in NumPy 2.0 (installed with TF 2.18+): AttributeError; use `np.nan`"),
                (13, 43, "`np.int` was removed in NumPy 1.24 (installed with TF 2.13+): AttributeError; use `int`"),
                (14, 37, "`np.float_` was removed in NumPy 2.0"),
                (15, 9, "`np.product` was removed in NumPy 2.0"),
                (16, 13, "`np.NINF` was removed in NumPy 2.0"),
            ],
            run="""
            best = stopper.best
            missing = stopper.missing
            assert best == float("inf") and missing != missing
            assert labels.dtype == np.dtype(int) and labels.tolist() == [0, 1, 2]
            assert scores.dtype == np.float64 and total == 24 and floor == float("-inf")
            """,
            effect=FIXES_ERROR,
            note="bubbliiiing/unet-tf2 utils/callbacks.py:234-244 (np.Inf), utils/utils_metrics.py:128 (np.int); "
                 "the originals raise AttributeError under NumPy 2.4.6, the run checks the values NumPy 1 gave "
                 "(np.Inf is np.inf, np.int is int, np.float_ is np.float64, product forwards to prod: "
                 "scripts/derive_numpy_removals.py executed each under NumPy 1.23.5, 1.24.4 and 1.26.4)",
        ),
        flagged(
            """
            import numpy
            import tensorflow as tf
            from numpy import Inf, NaN as missing

            low = -Inf
            values = numpy.array([1.0, missing, 3.0])
            found = numpy.in1d(numpy.array([[1, 2], [3, 4]]), [2, 3])
            """,
            fixed="""
            import numpy
            import tensorflow as tf
            from numpy import inf as Inf, nan as missing

            low = -Inf
            values = numpy.array([1.0, missing, 3.0])
            found = numpy.isin(numpy.array([[1, 2], [3, 4]]), [2, 3])
            """,
            at=[
                (3, 19, "`np.Inf` was removed in NumPy 2.0 (installed with TF 2.18+): ImportError; use `np.inf`"),
                (3, 24, "`np.NaN` was removed in NumPy 2.0"),
                (7, 9, "`np.in1d` was removed in NumPy 2.4 (installed with TF 2.21): AttributeError; the closest "
                       "is `np.isin` (`np.isin` keeps the shape of its first argument"),
            ],
            run="""
            count = int(numpy.isnan(values).sum())
            shape = found.shape
            """,
            effect=FIXES_ERROR,
            note="from-imports keep their local name; in1d -> isin is unsafe: the result keeps the 2-D shape "
                 "(in1d returned a flat array)",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            best = np.inf
            missing = np.nan
            dtype = np.float64
            flag = np.bool_(True)
            mask = np.zeros(3, dtype=np.bool)
            total = np.prod([2, 3])
            """,
            note="the current spellings; np.bool exists again in NumPy 2 (NumPy's bool_)",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            class Namespace:
                Inf = 1
                int = 2

            def scale(np):
                return np.Inf * np.int

            np2 = Namespace()
            value = np2.Inf

            if hasattr(np, "float_"):
                dtype = np.float_
            if not hasattr(np, "object"):
                np.object = object
            try:
                big = np.Inf
            except AttributeError:
                big = np.inf
            """,
            note="a parameter named np is not the module; hasattr and try/except AttributeError guards; a shim "
                 "assigning the name back (keras/src/export/tf2onnx_lib.py)",
        ),
    ]
