from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.autofix.arguments import append as append_arguments
from tflint_gpu.autofix.replace import replace_nodes
from tflint_gpu.semantic import tfa as tfa_facts
from tflint_gpu.semantic.model import ScopeInfo, dotted_name
from tflint_gpu.rules.base import CLOSE, FIXES_ERROR, Fix, Rule, Safety, clean, flagged

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

    Each use of a tfa name in the file is reported too, with its Keras 3
    counterpart where one is known: the table
    `tflint_gpu/semantic/data/tfa_equivalents.json`, derived by
    `scripts/derive_tfa_equivalents.py`, which runs each tfa object (on
    tf_keras) and its Keras 3 counterpart on the same inputs, weights and
    arguments as mapped, and records the largest difference.

    ## Example
    ```python
    import tensorflow_addons as tfa

    norm = tfa.layers.InstanceNormalization(epsilon=1e-5)
    optimizer = tfa.optimizers.AdamW(learning_rate=1e-3, weight_decay=1e-4)
    ```

    Use instead:
    ```python
    import keras

    norm = keras.layers.GroupNormalization(groups=-1, epsilon=1e-5)
    optimizer = keras.optimizers.AdamW(learning_rate=1e-3, weight_decay=1e-4 / 1e-3)
    ```

    ## Fix safety
    Only uses whose counterpart the table found exact get a fix. When every
    use in the file has one, a single fix on the import rewrites them all and
    removes the import (or puts the `import keras` the rewrites need in its
    place), with the weakest safety among them; otherwise each exact use has
    its own fix, the import stays, and the message of the others names the
    nearest Keras 3 API and the measured difference.
    Under Keras 3 the original fails at its import, so no fix makes a
    running program worse; the safety says how the rewritten program
    compares with what the Keras 2 program computed:

    * safe, identical outputs for the same weights and arguments:
      `InstanceNormalization(...)` -> `GroupNormalization(groups=-1, ...)`,
      `GroupNormalization` (positional arguments written as keywords),
      `AdaptiveMaxPooling2D`, `GELU()` -> `Activation(keras.ops.gelu)`,
      `activations.gelu` -> `keras.ops.gelu` (approximate by default, as
      tfa's; `keras.activations.gelu` is not), `mish`, `tanhshrink`,
      `hardshrink`/`softshrink` (without `lower=`/`upper=`), `RSquare()` ->
      `R2Score()`;
    * unsafe, the same to float32 rounding: `AdaptiveAveragePooling2D`,
      `SpectralNormalization`, `F1Score`/`FBetaScore` (`num_classes`
      dropped), `LAMB` -> `Lamb` (without weight decay; tfa's epsilon 1e-6
      written out);
    * unsafe, `AdamW` -> `keras.optimizers.AdamW` and `SGDW` ->
      `keras.optimizers.SGD` with `weight_decay=wd / lr`: tfa decays by
      `wd * var` each step, Keras 3 by `lr * wd * var`. Offered only where the
      file shows both to be numbers (literals, arithmetic, a name bound to
      them, an `argparse` flag with `type=float`, an absl `DEFINE_float`),
      never a schedule; exact while the learning rate stays constant, which
      a callback or an assignment elsewhere may break;
    * no fix: `SigmoidFocalCrossEntropy` (Keras's `BinaryFocalCrossentropy`
      averages over the classes where tfa sums: a factor of the class
      count), `sparsemax` (Keras 3.15's returns rows that do not sum to 1),
      and every name the table does not hold (`tfa.image`, `tfa.seq2seq`...).

    Removing the import also drops tfa's registration of its custom objects
    (`Addons>...`): a model saved with tfa layers no longer loads, under
    Keras 3 it did not either. Not flagged: projects whose target is Keras 2
    (tfa works with TF 2.15 and older), an import in a `try` whose `except
    ImportError` falls back, the package's own modules.

    ## Measured effect
    TF 2.21 CPU, tensorflow-addons 0.23.0: the import error above under
    Keras 3.15 (emla2805/vision-transformer train.py:5 and model.py:2, the
    project's first crash); the rule's fix cases run the original under
    tf_keras with tfa and the fix under Keras 3: the same values.
    """

    code = "TFG917"
    name = "keras2-only-package"
    message = "This package works with Keras 2 only: its import fails under Keras 3"
    needs = (tuple(_KERAS2_ONLY),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)
    migration = True

    def visit_Import(self, node: cst.Import, ctx) -> None:
        reported = [alias for alias in node.names
                    if self._reportable(node, _package(dotted_name(alias.name)), ctx)]
        if not reported:
            return
        bound = None
        if len(reported) == len(node.names):
            bound = [alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                     else (dotted_name(alias.name) or "").split(".", 1)[0] for alias in node.names]
        self._report(node, reported, bound, ctx)

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx) -> None:
        if node.relative or node.module is None:
            return
        if not self._reportable(node, _package(dotted_name(node.module)), ctx):
            return
        bound = None
        if not isinstance(node.names, cst.ImportStar):
            bound = [alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                     else dotted_name(alias.name) or "" for alias in node.names]
        self._report(node, [node], bound, ctx)

    @staticmethod
    def _reportable(node: cst.CSTNode, package: Optional[str], ctx) -> bool:
        if package is None:
            return False
        return not (ctx.migration.guarded(node, ctx.scope) or _import_guarded(node, ctx)
                    or ctx.own_module(package))  # (tensorflow/addons itself)

    def _report(self, node, reported: List[cst.CSTNode], bound: Optional[List[str]], ctx) -> None:
        """The import, with a fix that rewrites every use and removes it when each use has an exact
        Keras 3 counterpart; and each use, with its own rewrite where exact."""
        release, error = _KERAS2_ONLY["tensorflow_addons"]
        binder = ctx.scope
        uses: List[Tuple[cst.BaseExpression, ScopeInfo]] = []
        for name in bound or ():
            for use in ctx.graphs.uses.uses_of(name, binder):
                uses.append((tfa_facts.use_of(use.name, use.scope.ancestors(use.name)), use.scope))
        qualnames = [ctx.resolver.qualname(chain, scope) for chain, scope in uses]
        rewrites = [_rewrite(chain, qualname, scope, ctx) for (chain, scope), qualname in zip(uses, qualnames)]
        fix = None
        if bound is not None and all(r is not None for r in rewrites):
            fix = _removal(node, binder, [r for r in rewrites if r is not None])
        for (chain, scope), qualname, rewrite in zip(uses, qualnames, rewrites):
            own = None  # (when the import's fix rewrites every use, it is the only one: all or nothing)
            if rewrite is not None and fix is None:
                old, new, safety, imports, what = rewrite
                own = Fix(f"Use `{what}`", safety, {old: new}, imports)
            text = _use_message(qualname)
            entry = tfa_facts.equivalent(qualname)
            if rewrite is None and entry is not None and entry["exact"]:
                text += "; not rewritten here: " + _why_not(chain, entry, scope)
            if fix is not None:
                text += "; the fix offered on the import rewrites it with every other use"
            ctx.report(chain, text, own)
        message = (f"`tensorflow_addons` ({release}) imports Keras 2's internals: under Keras 3 the import fails "
                   f"({error}); ")
        message += "every use has a Keras 3 counterpart: rewrite them and drop the import" if fix is not None \
            else "replace what the file uses from it, or pin Keras 2"
        for i, item in enumerate(reported):
            ctx.report(item, message, fix if i == 0 else None)


_SIMPLE = (cst.Name, cst.Integer, cst.Float)
_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _short(qualname: str) -> str:
    return "tfa" + qualname[len("tensorflow_addons"):]


def _simple(expr: cst.BaseExpression) -> bool:
    """A value that may be written twice: a name, a number, an attribute of names (``args.lr``)."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, _SIMPLE)


def _use_message(qualname: Optional[str]) -> str:
    entry = tfa_facts.equivalent(qualname)
    if qualname is None or not qualname.startswith("tensorflow_addons."):
        return "A use of `tensorflow_addons`, which fails to import under Keras 3"
    name = _short(qualname)
    if entry is None:
        return f"`{name}` comes from `tensorflow_addons`, which fails to import under Keras 3; no Keras 3 " \
               f"counterpart is known here"
    call = entry["keras"] + ("(" + ", ".join(f"{k}={v}" for k, v in entry["add"].items()) + ")"
                             if entry["add"] else "")
    diff = entry["max_abs_diff"]
    if entry["exact"]:
        how = "identical outputs" if entry["identical"] else f"the same to float32 rounding, max abs diff {diff:.1g}"
        text = f"`{name}` (tensorflow_addons, which fails to import under Keras 3) is Keras 3's `{call}` " \
               f"(executed: {how})"
        if entry["divide"]:
            text += "; " + entry.get("note", "")
        return text
    detail = entry.get("note") or (f"max abs diff {diff:.3g}" if diff is not None else entry.get("error", ""))
    return f"`{name}` (tensorflow_addons, which fails to import under Keras 3): the nearest Keras 3 API is " \
           f"`{call}`, not the same ({detail})"


def _why_not(chain: cst.BaseExpression, entry: dict, scope: ScopeInfo) -> str:
    """Why an exact entry's use was left as it is."""
    call = next(iter(scope.ancestors(chain)), None)
    if not (isinstance(call, cst.Call) and call.func is chain):
        return "a class referred to, not made" if entry["kind"] != "function" else "its spelling"
    refused = [arg.keyword.value for arg in call.args if arg.keyword is not None
               and arg.keyword.value in entry["refuse"]]
    if refused:
        return ", ".join(f"`{key}=`" for key in refused) + (" has" if len(refused) == 1 else " have") + \
            " no Keras counterpart in the table"
    if entry["divide"]:
        return "the weight decay and the learning rate must be numbers the file shows (a schedule, a " \
               "parameter or a callable would make Keras's decay follow it)"
    return "its arguments do not map onto the Keras call's"


def _rewrite(chain: cst.BaseExpression, qualname: Optional[str], scope: ScopeInfo, ctx):
    """(old node, new node, safety, imports, what) rewriting one use onto its exact Keras 3
    counterpart, or None."""
    entry = tfa_facts.equivalent(qualname)
    if entry is None or not entry["exact"]:
        return None
    found = ctx.module_expr("keras", entry["keras"][len("keras."):], scope=scope)
    if found is None:
        return None
    func, imports = found
    safety = Safety.SAFE if entry["identical"] and not entry["divide"] else Safety.UNSAFE
    parent = next(iter(scope.ancestors(chain)), None)
    if not (isinstance(parent, cst.Call) and parent.func is chain):
        if entry["kind"] == "function":
            return chain, func, safety, imports, entry["keras"]
        return None  # a class referred to (a base, isinstance): its arguments cannot be mapped
    if entry["kind"] == "function":
        args = _function_args(parent, entry)
    else:
        args = _call_args(parent, entry, scope, ctx)
    if args is None:
        return None
    return parent, parent.with_changes(func=func, args=args), safety, imports, entry["keras"]


def _function_args(call: cst.Call, entry: dict) -> Optional[List[cst.Arg]]:
    """A function of the same signature: positional arguments stay, keywords renamed."""
    args = []
    accepted = set(entry["params"]) | set(entry["keywords"]) | {"x"}
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None:
            if position > len(entry["params"]):
                return None
            args.append(arg)
            continue
        key = arg.keyword.value
        if key in entry["refuse"] or key not in accepted:
            return None
        args.append(arg.with_changes(keyword=cst.Name(entry["keywords"].get(key, key))))
    return args


def _call_args(call: cst.Call, entry: dict, scope: ScopeInfo, ctx) -> Optional[List[cst.Arg]]:
    """Every argument as a keyword of the Keras call (the entry's mapping), its added keywords first."""
    named: Dict[str, cst.Arg] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None:
            if position >= len(entry["params"]):
                return None
            named[entry["params"][position]] = arg
        else:
            if arg.keyword.value in entry["refuse"]:
                return None
            named[arg.keyword.value] = arg
    values = {key: arg.value for key, arg in named.items()}
    for key, text in entry["defaults"].items():
        if key not in values:
            values[key] = cst.parse_expression(text)
    for key, by in entry["divide"].items():
        if key not in values or by not in values or not _simple(values[by]):
            return None
        if not (tfa_facts.constant_number(ctx.graphs, ctx.resolver, values[key], scope)
                and tfa_facts.constant_number(ctx.graphs, ctx.resolver, values[by], scope)):
            return None  # a schedule, a callable, or not known: Keras would scale the decay by it each step
        left = values[key]
        if not isinstance(left, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Call, cst.Subscript)):
            left = left.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        values[key] = cst.BinaryOperation(left, cst.Divide(), values[by])
    args: List[cst.Arg] = []
    appended: List[cst.Arg] = []  # the defaults written out, after the call's own arguments
    for key, text in entry["add"].items():
        if text.startswith("keras."):
            found = ctx.module_expr("keras", text[len("keras."):], scope=scope)
            if found is None or found[1]:
                return None
            value = found[0]
        else:
            value = cst.parse_expression(text)
        args.append(cst.Arg(value, keyword=cst.Name(key), equal=_EQUAL))
    for key, value in values.items():
        if key in entry["drop"]:
            continue
        keyword = cst.Name(entry["keywords"].get(key, key))
        arg = named.get(key)
        if arg is not None and arg.keyword is not None:
            args.append(arg.with_changes(keyword=keyword, value=value))
        elif arg is not None:
            args.append(arg.with_changes(keyword=keyword, equal=_EQUAL, value=value))
        else:
            appended.append(cst.Arg(value, keyword=keyword, equal=_EQUAL))
    return append_arguments(args, appended)


def _removal(node, binder: ScopeInfo, rewrites) -> Optional[Fix]:
    """Every use rewritten and the import removed (replaced by the imports the rewrites need),
    in one replacement of the scope holding the import."""
    holder = binder.node
    if not isinstance(holder, (cst.Module, cst.FunctionDef)):
        return None
    imports = sorted({text for r in rewrites for text in r[3]})
    replacements: Dict[cst.CSTNode, Optional[cst.CSTNode]] = {old: new for old, new, *_ in rewrites}
    if imports:
        parsed = [cst.parse_statement(text).body[0] for text in imports]
        if not all(isinstance(p, cst.Import) for p in parsed):
            return None
        replacements[node] = cst.Import(names=[a for p in parsed for a in p.names])
        replacements[node] = replacements[node].with_changes(
            names=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in replacements[node].names])
    else:
        replacements[node] = None
    safety = Safety.UNSAFE if any(r[2] is Safety.UNSAFE for r in rewrites) else Safety.SAFE
    return Fix("Rewrite every tensorflow_addons use for Keras 3 and drop the import", safety,
               {holder: replace_nodes(holder, replacements)})


Keras2OnlyPackage.cases = [
    flagged(
        """
        import numpy as np
        import tensorflow as tf
        import tensorflow_addons as tfa

        x = np.linspace(-3.0, 3.0, 2 * 4 * 4 * 6, dtype="float32").reshape(2, 4, 4, 6)
        norm = tfa.layers.InstanceNormalization(epsilon=1e-5)
        groups = tfa.layers.GroupNormalization(3)
        dense = tf.keras.layers.Dense(5, activation=tfa.activations.gelu, kernel_initializer="ones")
        instance = norm(x)
        grouped = groups(x)
        activated = dense(x)
        exact = tfa.activations.gelu(x, approximate=False)
        """,
        fixed="""
        import numpy as np
        import tensorflow as tf
        import keras

        x = np.linspace(-3.0, 3.0, 2 * 4 * 4 * 6, dtype="float32").reshape(2, 4, 4, 6)
        norm = keras.layers.GroupNormalization(groups=-1, epsilon=1e-5)
        groups = keras.layers.GroupNormalization(groups=3)
        dense = tf.keras.layers.Dense(5, activation=keras.ops.gelu, kernel_initializer="ones")
        instance = norm(x)
        grouped = groups(x)
        activated = dense(x)
        exact = keras.ops.gelu(x, approximate=False)
        """,
        at=[(3, 8, "`tensorflow_addons` (0.23.0, its last release) imports Keras 2's internals: under Keras 3 the "
                   "import fails (ModuleNotFoundError: No module named 'keras.src.engine'); every use has a Keras 3 "
                   "counterpart"),
            (6, 8, "`tfa.layers.InstanceNormalization` (tensorflow_addons, which fails to import under Keras 3) is "
                   "Keras 3's `keras.layers.GroupNormalization(groups=-1)` (executed: identical outputs)"),
            (7, 10, "`tfa.layers.GroupNormalization` (tensorflow_addons, which fails to import under Keras 3) is "
                    "Keras 3's `keras.layers.GroupNormalization`"),
            (8, 45, "`tfa.activations.gelu` (tensorflow_addons, which fails to import under Keras 3) is Keras 3's "
                    "`keras.ops.gelu`"),
            (12, 9, "`tfa.activations.gelu`")],
        effect=FIXES_ERROR,
        keras2_before=True,
        note="emla2805/vision-transformer model.py:2, 64, 121 (Dense(activation=tfa.activations.gelu)); "
             "InstanceNormalization is GroupNormalization(groups=-1) (table: identical outputs); the original runs "
             "under tf_keras with tfa 0.23, the fix under Keras 3: the same values",
    ),
    flagged(
        """
        import numpy as np
        import tensorflow as tf
        import tensorflow_addons as tfa

        lr = 0.01
        weight_decay = 1e-3
        inputs = tf.keras.Input((3,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(inputs))
        model.compile(optimizer=tfa.optimizers.AdamW(learning_rate=lr, weight_decay=weight_decay), loss="mse")
        x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
        model.fit(x, x.sum(axis=1, keepdims=True) * 0.5, epochs=3, batch_size=4, verbose=0, shuffle=False)
        weights = model.get_weights()
        """,
        fixed="""
        import numpy as np
        import tensorflow as tf
        import keras

        lr = 0.01
        weight_decay = 1e-3
        inputs = tf.keras.Input((3,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(inputs))
        model.compile(optimizer=keras.optimizers.AdamW(learning_rate=lr, weight_decay=weight_decay / lr), loss="mse")
        x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
        model.fit(x, x.sum(axis=1, keepdims=True) * 0.5, epochs=3, batch_size=4, verbose=0, shuffle=False)
        weights = model.get_weights()
        """,
        at=[(3, 8, "`tensorflow_addons` (0.23.0, its last release) imports Keras 2's internals"),
            (9, 25, "`tfa.optimizers.AdamW` (tensorflow_addons, which fails to import under Keras 3) is Keras 3's "
                    "`keras.optimizers.AdamW` (executed: the same to float32 rounding")],
        effect=FIXES_ERROR,
        keras2_before=CLOSE,
        note="emla2805/vision-transformer train.py:61 (AdamW(learning_rate=args.lr, weight_decay=args.weight_decay)): "
             "Keras 3 multiplies the decay by the learning rate, tfa does not; a constant learning rate, so "
             "weight_decay / lr reproduces it (unsafe: a callback may change the rate)",
    ),
    flagged(
        """
        import tensorflow as tf
        import tensorflow_addons as tfa
        from tensorflow_addons.optimizers import AdamW

        schedule = tf.keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9)
        optimizer = AdamW(weight_decay=1e-4, learning_rate=schedule)
        loss = tfa.losses.SigmoidFocalCrossEntropy()
        angle = tfa.image.rotate
        """,
        at=[(2, 8, "`tensorflow_addons` (0.23.0, its last release) imports Keras 2's internals: under Keras 3 the "
                   "import fails (ModuleNotFoundError: No module named 'keras.src.engine'); replace what the file "
                   "uses from it, or pin Keras 2"),
            (3, 1, "`tensorflow_addons` (0.23.0, its last release) imports Keras 2's internals"),
            (6, 13, "`tfa.optimizers.AdamW` (tensorflow_addons, which fails to import under Keras 3) is Keras 3's "
                    "`keras.optimizers.AdamW`"),
            (7, 8, "`tfa.losses.SigmoidFocalCrossEntropy` (tensorflow_addons, which fails to import under Keras 3): "
                   "the nearest Keras 3 API is `keras.losses.BinaryFocalCrossentropy(apply_class_balancing=True, "
                   "reduction=None)`, not the same (tfa sums the focal terms over the last axis"),
            (8, 9, "`tfa.image.rotate` comes from `tensorflow_addons`, which fails to import under Keras 3; no Keras 3 "
                   "counterpart is known here")],
        note="AdamW on a schedule: Keras 3 would scale the decay by the decaying rate (no fix); a loss measured "
             "to differ by the class count; a name with no counterpart: the import stays",
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
