from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from tflint_gpu.autofix.arguments import append as append_arguments
from tflint_gpu.semantic.names import short_name
from tflint_gpu.semantic.migration import KERAS3, raw_flavour
from tflint_gpu.semantic.model import IMPORT, dotted_name
from tflint_gpu.semantic.numpy_removals import held_by_try
from tflint_gpu.rules.base import BY_TARGET, FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# Reported by TFG902 (removed methods) with their own messages and fixes.
_ELSEWHERE = frozenset({"keras.backend.learning_phase", "keras.backend.set_learning_phase"})
# optimizers.legacy.X(...) -> optimizers.X(...): (keywords the call may give, how many by position, safety).
# Measured, 50 steps on 5 coordinates with gradient scales 1 to 1e-8, tf_keras 2.21's legacy class vs
# Keras 3.15's: SGD (plain, momentum, nesterov, clipnorm) identical; Adam (amsgrad, epsilon 1e-7, 1e-3, 1)
# within 8.4e-7 of weights moved by 0.06-0.1 (the legacy fused kernel's rounding): not bit-exact.
# RMSprop (epsilon inside the square root) and Adagrad with a set epsilon differ: by hand.
_LEGACY_OPTIMIZERS = {
    "keras.optimizers.legacy.SGD": (frozenset({"learning_rate", "momentum", "nesterov", "name", "clipnorm"}), 3,
                                    Safety.SAFE),
    "keras.optimizers.legacy.Adam": (frozenset({"learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad", "name",
                                                "clipnorm"}), 5, Safety.UNSAFE),
}
# What a removed module or name raises, and the handlers that catch it.
_CATCHES = {
    "import": frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}),
    "attribute": frozenset({"AttributeError", "Exception", "BaseException"}),
}


def _table():
    from tflint_gpu.semantic.migration_table import table

    return table()


def _spelling(raw: str) -> Tuple[Optional[str], str]:
    """(``"keras"``/``"tensorflow.keras"``/``"tensorflow"``, the part of ``raw`` that spelling's root
    is written as), or (None, "") for anything else: tf_keras, ``keras.src`` internals,
    ``tf.compat.v1`` (which keeps TF 1's names on purpose)."""
    from tflint_gpu.semantic.migration_table import spelling_of

    keras = spelling_of(raw)
    if keras is not None:
        if keras == "keras":
            return keras, "keras"
        cut = raw.index("keras") + len("keras")
        return keras, raw[:cut]
    if raw.startswith("tensorflow.compat") or not (raw == "tensorflow" or raw.startswith("tensorflow.")):
        # tf.compat.v1 keeps TF 1's names; tf.compat.v2 is not quite tf (it has enable_v2_behavior)
        return None, ""
    return "tensorflow", "tensorflow"


def _normal(raw: str, root: str, spelling: str) -> str:
    """The table's name for ``raw``: ``keras.…`` for Keras, ``tensorflow.…`` for TensorFlow."""
    return ("keras" if spelling != "tensorflow" else "tensorflow") + raw[len(root):]


def _lookup(qualname: str, spelling: str, how: str):
    """The removal the table records for this module or name, or None."""
    table = _table()
    if spelling == "tensorflow":
        return table.removed_tf_name(qualname, how)
    if qualname in _ELSEWHERE:
        return None
    found = table.removed_module(qualname, spelling, how)
    if found is not None:
        return found
    module, _, name = qualname.rpartition(".")
    return table.removed_name(module, name, spelling, how) if module else None


def _shortest_removed(dotted: str, root: str, spelling: str):
    """(prefix, removal) for the shortest prefix of the dotted module, below its root, that the table
    records as removed (what an import of it fails on), or None."""
    parts = dotted.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        if len(prefix) <= len(root):
            continue
        removal = _lookup(_normal(prefix, root, spelling), spelling, "import")
        if removal is not None:
            return prefix, removal
    return None


def _message(raw: str, removal, spelling: str) -> str:
    what = "TensorFlow 2" if spelling == "tensorflow" else "Keras 3"
    if getattr(removal, "stub", False):
        text = f"{what}'s `{short_name(raw)}` raises {removal.error} when made (a stub left for Keras 2 code)"
    else:
        text = f"{what} has no `{short_name(raw)}` ({removal.error})"
    if removal.replacement:
        if spelling == "tensorflow":
            new = short_name(removal.replacement)
        else:
            new = ("tf." if spelling == "tensorflow.keras" else "") + removal.replacement
        if removal.exact:
            text += f": use `{new}` (the same object)"
        elif spelling == "tensorflow":
            text += f": `{new}` keeps it, with TensorFlow 1's semantics"
        else:
            text += f"; the closest is `{new}` (a different implementation: check its arguments)"
    return text


class RemovedApiName(Rule):
    """A module or name Keras 3 or TensorFlow 2 removed: `keras.layers.experimental`, `K.eval`, `tf.Session`...

    ## What it does
    Finds imports and attribute uses of Keras 2 modules and names that Keras
    3 (what `tf.keras` is under TensorFlow 2.16+) no longer has, and of
    TensorFlow 1 names that TensorFlow 2 removed from `tf` (`tf.compat.v1`
    keeps them), as the derived migration table records them
    (`scripts/derive_migration.py`, `tflint_gpu/semantic/data/keras3_migration.json`):

    * `import keras.preprocessing.text`, `from
      tensorflow.keras.layers.experimental.preprocessing import Rescaling`,
      `tf.keras.layers.experimental.preprocessing.Rescaling(...)`;
    * `from keras import backend as K` then `K.eval(x)` (standalone Keras 3;
      `tf.keras.backend` keeps `eval`), `keras.losses.mse`, `from
      tensorflow.keras.utils import OrderedEnqueuer`;
    * `tf.Session()`, `tf.placeholder(...)`, `tf.random_normal(...)`,
      `tf.train.AdamOptimizer`, `from tensorflow import Session`;
    * names Keras 3 keeps only as stubs that raise when made:
      `tf.keras.optimizers.legacy.Adam()` (`ImportError`), also in the `if
      hasattr(tf.keras.optimizers, "legacy"):` branch TF 2.11-2.15 code takes
      (Keras 3 has the attribute), and made through a name (`cls =
      keras.optimizers.legacy.Adam if sys.platform == "darwin" else
      keras.optimizers.Adam`, then `cls(learning_rate=lr)`).

    `tf.keras` and `keras` differ: TensorFlow 2.21's `tf.keras` still has
    `preprocessing.text` and the legacy backend functions; the table records
    each spelling, and the finding follows the one the code uses.

    Not reported: `tf_keras` (Keras 2) and, in a file that mentions
    `TF_USE_LEGACY_KERAS`, `tf.keras` (Keras 2 there); `keras.src` internals;
    `tf.compat.v1.*` and `import tensorflow.compat.v1 as tf` (and TensorFlow
    names through `tf.compat.v2`, which keeps `enable_v2_behavior`); a
    stub referenced but not made (`isinstance(opt,
    tf.keras.optimizers.legacy.Optimizer)`); names used under
    `if hasattr(module, "name"):`, in a `try` whose `except` catches the error
    (`ImportError`/`ModuleNotFoundError` for imports, `AttributeError` for
    attributes, or `Exception`), in an `except AttributeError:` fallback, in a
    branch of a TensorFlow/Keras version comparison that does not run under
    TF 2.16+, and in code a test expects to raise. `K.learning_phase()` and
    `mixed_precision.experimental` are TFG902's.

    ## Why is this bad?
    Measured under TensorFlow 2.21, Keras 3.15 (the table's `outcome` of each
    entry, executed by the derivation script): `ModuleNotFoundError: No
    module named 'tensorflow.keras.layers.experimental'`, `AttributeError:
    module 'keras.backend' has no attribute 'eval'`, `AttributeError: module
    'tensorflow' has no attribute 'Session'`, `ImportError: cannot import
    name 'Session' from 'tensorflow'`.

    ## Example
    ```python
    import tensorflow as tf

    scale = tf.keras.layers.experimental.preprocessing.Rescaling(1 / 255)
    noise = tf.random_normal((2, 2))
    ```

    Use instead:
    ```python
    import tensorflow as tf

    scale = tf.keras.layers.Rescaling(1 / 255)
    noise = tf.random.normal((2, 2))
    ```

    ## Fix safety
    Safe, and only where the table says the replacement is exact: the same
    Keras 2 object published under another path that Keras 3 keeps
    (`layers.experimental.preprocessing.Rescaling` is `layers.Rescaling` in
    tf_keras 2.21; `keras.losses.mse` is `losses.mean_squared_error`), or the
    same TensorFlow object under its TF 2 name (`tf.random_normal` is
    `tf.random.normal`, `tf.diag` is `tf.linalg.tensor_diag`). The original
    raises under Keras 3 / TF 2 and the fix-execution tests run the fixed code.
    An import is rewritten when every name it imports moves to the same module.
    Otherwise no fix: the message names `tf.compat.v1.X` (TensorFlow 1
    semantics: sessions, placeholders need graph mode) or the closest Keras 3
    name (`keras.ops.sum` for `K.sum`: a different function).
    `tf.keras.optimizers.legacy.SGD(...)` → `tf.keras.optimizers.SGD(...)`
    is safe and `legacy.Adam` → `Adam` unsafe, where the call gives only
    arguments both classes take alike (learning rate, momentum, nesterov,
    betas, epsilon, amsgrad, name, clipnorm; at most 3 / 5 by position).
    Measured over 50 steps on coordinates with gradient scales 1 to 1e-8,
    tf_keras 2.21's legacy class vs Keras 3.15's: SGD (plain, momentum,
    nesterov, clipnorm) identical weights (a fix case runs the original
    under tf_keras and the fix under Keras 3); Adam within 8.4e-7 of weights
    moved by 0.06-0.1 (the legacy fused kernel rounds differently; epsilon
    is applied alike: epsilon 1 gives 1.2e-7). No fix for `RMSprop` (the
    legacy kernel adds epsilon inside the square root: 0.136 apart),
    `Adagrad` (9e-5 apart with epsilon 1e-2), `lr=`/`decay=` (TFG901).

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: each entry's error as recorded in the
    table; examples/TFG903 (`tflint-gpu verify --rule TFG903`): fixes-error,
    `AttributeError` before, the fixed preprocessing and noise run after.
    """

    code = "TFG903"
    name = "removed-api-name"
    message = "Keras 3 or TensorFlow 2 removed this name"
    needs = (("keras", "tensorflow"),)
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)
    migration = BY_TARGET  # TF 1 names break under any TF 2 target; Keras 3 names only where it is Keras 3

    def __init__(self) -> None:
        self._done: set = set()

    # -- guards ------------------------------------------------------------------
    def _guarded(self, node: cst.CSTNode, ctx, how: str, raw: str, stub: bool = False) -> bool:
        if ctx.migration.guarded(node, ctx.scope):
            return True
        if stub:  # the name exists: hasattr() is True under Keras 3, making it raises ImportError
            return self._in_try(node, ctx, "import")
        for obj, name, has in ctx.migration.hasattr_guards(node, ctx.scope):
            owner = ctx.resolver.raw_qualname(obj, ctx.scope)
            if has and owner is not None and raw.startswith(f"{owner}.{name}"):
                return True
        return self._and_guarded(node, ctx, raw) or self._in_try(node, ctx, how)

    @staticmethod
    def _and_guarded(node: cst.CSTNode, ctx, raw: str) -> bool:
        """``hasattr(m, "name") and m.name.x``: read only when the attribute exists."""
        child = node
        for parent in ctx.scope.ancestors(node):
            if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And) \
                    and child is parent.right:
                left = parent.left
                tests = []
                while isinstance(left, cst.BooleanOperation) and isinstance(left.operator, cst.And):
                    tests.append(left.right)
                    left = left.left
                tests.append(left)
                for test in tests:
                    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr" \
                            and len(test.args) == 2 and isinstance(test.args[1].value, cst.SimpleString):
                        owner = ctx.resolver.raw_qualname(test.args[0].value, ctx.scope)
                        name = test.args[1].value.evaluated_value
                        if owner is not None and raw.startswith(f"{owner}.{name}"):
                            return True
            if isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return False
            child = parent
        return False

    @staticmethod
    def _in_try(node: cst.CSTNode, ctx, how: str) -> bool:
        """Is ``node`` in the body of a ``try`` one of whose handlers catches what it raises?"""
        return held_by_try(node, ctx.scope, _CATCHES[how])

    def _keras_ok(self, raw: str, spelling: str, ctx) -> bool:
        if spelling == "tensorflow":
            return True  # a TF 1 name breaks under every TF 2 target
        return ctx.target.keras3 and raw_flavour(raw, ctx.migration.legacy_env) == KERAS3

    # -- imports -------------------------------------------------------------------
    def visit_Import(self, node: cst.Import, ctx) -> None:
        for alias in node.names:
            raw = dotted_name(alias.name)
            if raw is None:
                continue
            spelling, root = _spelling(raw)
            if spelling is None or not self._keras_ok(raw, spelling, ctx):
                continue
            found = _shortest_removed(raw, root, spelling)
            if found is not None and not self._guarded(node, ctx, "import", found[0]):
                ctx.report(alias, _message(found[0], found[1], spelling))

    def visit_ImportFrom(self, node: cst.ImportFrom, ctx) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        if module is None:
            return
        spelling, root = _spelling(module)
        if spelling is None or not self._keras_ok(module, spelling, ctx):
            return
        found = _shortest_removed(module, root, spelling)
        if found is not None:
            prefix, removal = found
            if not self._guarded(node, ctx, "import", prefix):
                fix = self._module_fix(node, module, root, spelling) or \
                    self._alias_fix(node, module, root, spelling, ctx)
                ctx.report(node, _message(prefix, removal, spelling), fix)
            return
        normal_module = _normal(module, root, spelling)
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            removal = _lookup(f"{normal_module}.{name}", spelling, "import")
            if removal is None or removal.stub or self._guarded(node, ctx, "import", f"{module}.{name}"):
                continue  # (a stub imported is reported where it is made, not here)
            fix = None
            if len(node.names) == 1 and removal.exact and removal.replacement \
                    and removal.replacement.rsplit(".", 1)[1] == name:
                new_module = root + removal.replacement.rsplit(".", 1)[0][len(_normal(root, root, spelling)):]
                fix = Fix(f"Import from `{short_name(new_module)}`", Safety.SAFE,
                          {node.module: cst.parse_expression(new_module)})
            ctx.report(alias, _message(f"{module}.{name}", removal, spelling), fix)

    def _module_fix(self, node: cst.ImportFrom, module: str, root: str, spelling: str) -> Optional[Fix]:
        """Every imported name moves, as itself, to one module Keras 3 keeps: import from it."""
        normal = _normal(module, root, spelling)
        targets = set()
        for alias in node.names:
            name = dotted_name(alias.name)
            removal = _lookup(f"{normal}.{name}", spelling, "import") if name else None
            if removal is None or not removal.exact or not removal.replacement \
                    or removal.replacement.rsplit(".", 1)[1] != name:
                return None
            targets.add(removal.replacement.rsplit(".", 1)[0])
        if len(targets) != 1:
            return None
        target = targets.pop()
        base = _normal(root, root, spelling)
        new_module = root + target[len(base):]
        return Fix(f"Import from `{short_name(new_module)}`", Safety.SAFE,
                   {node.module: cst.parse_expression(new_module)})

    @staticmethod
    def _alias_fix(node: cst.ImportFrom, module: str, root: str, spelling: str, ctx) -> Optional[Fix]:
        """``from tensorflow.keras.layers.experimental import preprocessing`` whose every use in the file
        is ``preprocessing.X`` with ``X`` the same object as ``layers.X`` (the table's exact replacement):
        import ``layers`` under the same name, so that every ``preprocessing.X`` keeps working."""
        if isinstance(node.names, cst.ImportStar) or len(node.names) != 1:
            return None
        alias = node.names[0]
        name = dotted_name(alias.name)
        bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
            else name
        normal = f"{_normal(module, root, spelling)}.{name}"
        if name is None or bound is None or "." in name \
                or _table().removed_module(normal, spelling, "import") is None:
            return None
        targets = set()
        for use in ctx.graphs.uses.uses_of(bound, ctx.scope):
            if use.kind not in ("attribute", "method") or not use.attribute:
                return None  # the module itself handed on, tested, starred...
            removal = _lookup(f"{normal}.{use.attribute}", spelling, "attribute")
            if removal is None or not removal.exact or not removal.replacement \
                    or removal.replacement.rsplit(".", 1)[1] != use.attribute:
                return None
            targets.add(removal.replacement.rsplit(".", 1)[0])
        if len(targets) != 1:
            return None
        base = _normal(root, root, spelling)
        parent, _, last = (root + targets.pop()[len(base):]).rpartition(".")
        if not parent:
            return None
        new_alias = cst.ImportAlias(cst.Name(last), asname=None if last == bound else cst.AsName(cst.Name(bound)))
        return Fix(f"Import `{short_name(parent)}.{last}` as `{bound}`", Safety.SAFE,
                   {node: node.with_changes(module=cst.parse_expression(parent), names=[new_alias])})

    # -- attribute chains -------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        if id(node) in self._done:
            return
        chain = self._chain(node)
        for inner in chain:
            self._done.add(id(inner))
        # chain: innermost first, up to node; report at the shortest removed prefix
        root_name = chain[0].value
        if not isinstance(root_name, cst.Name):
            return
        base_raw = ctx.resolver.raw_qualname(root_name, ctx.scope)
        if base_raw is None or not base_raw.startswith(("keras", "tensorflow")) \
                or not self._plain_root(root_name, ctx):
            return
        # Each part's qualified name is the root's and its attributes (``raw_qualname``, spelt out).
        raws, raw = [], base_raw
        for part in chain:
            raw = f"{raw}.{part.attr.value}"
            raws.append(raw)
        spelling, root = _spelling(raws[-1])
        if spelling is None or not self._keras_ok(raws[-1], spelling, ctx):
            return
        base_spelling, _ = _spelling(base_raw)
        if base_spelling is not None and len(base_raw) > len(root) and \
                _lookup(_normal(base_raw, root, spelling), spelling, "import") is not None:
            return  # the import that bound the root is reported
        for index, (part, raw) in enumerate(zip(chain, raws)):
            if raw is None or len(raw) <= len(root):
                continue
            removal = _lookup(_normal(raw, root, spelling), spelling, "attribute")
            if removal is None:
                continue
            if removal.stub and not ctx.graphs.uses.value_called(part, ctx.scope):
                return  # a stub raises only when made: a reference (isinstance, a base) works
            if self._guarded(part, ctx, "attribute", raw, removal.stub) or isinstance(
                    next(iter(ctx.scope.ancestors(chain[-1])), None), (cst.ImportFrom, cst.ImportAlias)):
                return  # guarded, or the module of an import statement (reported as an import)
            target, fixed = self._attribute_fix(chain, raws, index, root, spelling)
            if fixed is None and removal.stub:
                legacy = self._legacy_optimizer_fix(chain, raws, index, root, spelling, ctx)
                if legacy is not None:
                    target, fixed = legacy
                    ctx.report(chain[target], f"Keras 3's `{short_name(raw)}` raises {removal.error} when made (a "
                                              f"stub left for Keras 2 code): {fixed.message[0].lower()}"
                                              f"{fixed.message[1:]}", fixed)
                    return
            use = ""
            if fixed is None:
                target, fixed = self._call_fix(chain, raws, index, root, spelling, ctx)
                use = f": {fixed.message[0].lower()}{fixed.message[1:]} (the same computation)" if fixed else ""
            message_raw = raw if fixed is None else raws[target]
            message_removal = removal if fixed is None else _lookup(
                _normal(raws[target], root, spelling), spelling, "attribute")
            ctx.report(chain[target] if fixed is not None else part,
                       _message(message_raw, message_removal, spelling) + use, fixed)
            return

    @staticmethod
    def _chain(node: cst.Attribute) -> List[cst.Attribute]:
        chain = []
        current: cst.BaseExpression = node
        while isinstance(current, cst.Attribute):
            chain.append(current)
            current = current.value
        return list(reversed(chain))

    @staticmethod
    def _plain_root(name: cst.Name, ctx) -> bool:
        """The chain's root is an import bound once (not `tf = tf.compat.v1` after `import tensorflow as tf`)."""
        found = ctx.binding(name.value)
        if found is None:
            return True  # a star import, resolved by the resolver
        if found.kind != IMPORT:
            return True  # an alias assigned once (the resolver follows it)
        return not found.also_assigned and name.value not in found.scope.globals

    def _attribute_fix(self, chain, raws, index: int, root: str, spelling: str):
        """(index of the chain part reported, Fix or None): the longest part whose table entry has an
        exact replacement, rewritten onto the longest live prefix of that replacement."""
        for target in range(len(chain) - 1, index - 1, -1):
            raw = raws[target]
            if raw is None:
                continue
            removal = _lookup(_normal(raw, root, spelling), spelling, "attribute")
            if removal is None or not removal.exact or not removal.replacement:
                continue
            base = "keras" if spelling != "tensorflow" else "tensorflow"
            new_raw = root + removal.replacement[len(base):]
            expr = self._spelt(chain, raws, index, new_raw)
            if expr is not None:
                return target, Fix(f"Use `{short_name(new_raw)}`", Safety.SAFE, {chain[target]: expr})
            return index, None
        return index, None

    @staticmethod
    def _spelt(chain, raws, index: int, new_raw: str) -> Optional[cst.BaseExpression]:
        """``new_raw`` written onto the longest prefix of the chain below ``index`` that it extends (or
        onto the chain's root name), or None."""
        for keep in range(index - 1, -1, -1):
            kept = raws[keep]
            if kept is not None and new_raw.startswith(kept + "."):
                expr: cst.BaseExpression = chain[keep]
                for attr in new_raw[len(kept) + 1:].split("."):
                    expr = cst.Attribute(value=expr, attr=cst.Name(attr))
                return expr
        root_raw = raws[0].rsplit(".", 1)[0] if raws[0] else None
        if root_raw is not None and new_raw.startswith(root_raw + "."):
            expr = chain[0].value
            for attr in new_raw[len(root_raw) + 1:].split("."):
                expr = cst.Attribute(value=expr, attr=cst.Name(attr))
            return expr
        return None

    def _legacy_optimizer_fix(self, chain, raws, index: int, root: str, spelling: str, ctx):
        """``optimizers.legacy.SGD(...)``/``Adam(...)`` made with arguments the Keras 3 class takes alike:
        (index reported, Fix) onto ``optimizers.X``, or None."""
        if spelling == "tensorflow" or raws[-1] is None:
            return None
        found = _LEGACY_OPTIMIZERS.get(_normal(raws[-1], root, spelling))
        call = next(iter(ctx.scope.ancestors(chain[-1])), None)
        if found is None or not isinstance(call, cst.Call) or call.func is not chain[-1]:
            return None
        keywords, positional, safety = found
        if any(arg.star for arg in call.args) \
                or sum(arg.keyword is None for arg in call.args) > positional \
                or any(arg.keyword is not None and arg.keyword.value not in keywords for arg in call.args):
            return None
        new_raw = raws[-1].replace(".legacy.", ".")
        expr = self._spelt(chain, raws, index, new_raw)
        if expr is None:
            return None
        name = short_name(new_raw)
        if safety == Safety.SAFE:
            text = f"Use `{name}` (the same updates, measured)"
        else:
            text = f"Use `{name}` (updates within 1e-6 of the legacy kernel's, not bit-identical)"
        return len(chain) - 1, Fix(text, safety, {chain[-1]: expr})

    def _call_fix(self, chain, raws, index: int, root: str, spelling: str, ctx):
        """A removed class made by the call the chain ends in, whose replacement is another class made
        with an added keyword (``migration_table.CALL_REPLACEMENTS``: ``SyncBatchNormalization(...)`` ->
        ``BatchNormalization(..., synchronized=True)``): (index reported, Fix or None)."""
        from tflint_gpu.semantic.migration_table import CALL_REPLACEMENTS

        if spelling == "tensorflow" or raws[-1] is None:
            return index, None
        found = CALL_REPLACEMENTS.get(_normal(raws[-1], root, spelling))
        call = next(iter(ctx.scope.ancestors(chain[-1])), None)
        if found is None or not isinstance(call, cst.Call) or call.func is not chain[-1]:
            return index, None
        replacement, added = found
        new_raw = root + replacement[len("keras"):]
        expr = self._spelt(chain, raws, index, new_raw)
        given = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        if expr is None or any(arg.star for arg in call.args) or given & {key for key, _ in added}:
            return index, None
        args = append_arguments(call.args, [
            cst.Arg(cst.parse_expression(value), keyword=cst.Name(key),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))) for key, value in added])
        text = ", ".join(f"{key}={value}" for key, value in added)
        return len(chain) - 1, Fix(f"Use `{short_name(new_raw)}({text})`", Safety.SAFE,
                                   {call: call.with_changes(func=expr, args=args)})

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            scale = tf.keras.layers.experimental.preprocessing.Rescaling(1 / 255)
            images = scale(np.full((1, 2, 2, 1), 255.0, "float32"))
            tf.random.set_seed(0)
            noise = tf.random_normal((2, 2), seed=1)
            diagonal = tf.diag([1.0, 2.0])
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            scale = tf.keras.layers.Rescaling(1 / 255)
            images = scale(np.full((1, 2, 2, 1), 255.0, "float32"))
            tf.random.set_seed(0)
            noise = tf.random.normal((2, 2), seed=1)
            diagonal = tf.linalg.tensor_diag([1.0, 2.0])
            """,
            at=[(4, 9, "Keras 3 has no `tf.keras.layers.experimental.preprocessing.Rescaling` (AttributeError): "
                       "use `tf.keras.layers.Rescaling` (the same object)"),
                (7, 9, "TensorFlow 2 has no `tf.random_normal` (AttributeError): use `tf.random.normal`"),
                (8, 12, "TensorFlow 2 has no `tf.diag` (AttributeError): use `tf.linalg.tensor_diag`")],
            effect=FIXES_ERROR,
            note="a Keras 2 alias Keras 3 keeps under its core path; TF 1 names that are the same objects as TF 2's",
        ),
        flagged(
            """
            import numpy as np
            from tensorflow.keras.layers.experimental.preprocessing import Normalization, Rescaling

            norm = Normalization(mean=0.0, variance=1.0)
            out = Rescaling(0.5)(norm(np.ones((2, 1), "float32")))
            """,
            fixed="""
            import numpy as np
            from tensorflow.keras.layers import Normalization, Rescaling

            norm = Normalization(mean=0.0, variance=1.0)
            out = Rescaling(0.5)(norm(np.ones((2, 1), "float32")))
            """,
            at=[(2, 1, "Keras 3 has no `tf.keras.layers.experimental` (ModuleNotFoundError)")],
            effect=FIXES_ERROR,
            note="every imported name moves to tf.keras.layers: the import is rewritten; the uses are not reported "
                 "again",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf
            from tensorflow.keras.layers.experimental import preprocessing

            augment = tf.keras.Sequential([preprocessing.Rescaling(1 / 255), preprocessing.RandomFlip("horizontal")])
            images = np.arange(2 * 3 * 3 * 1, dtype="float32").reshape(2, 3, 3, 1)
            scaled = augment(images, training=False)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf
            from tensorflow.keras import layers as preprocessing

            augment = tf.keras.Sequential([preprocessing.Rescaling(1 / 255), preprocessing.RandomFlip("horizontal")])
            images = np.arange(2 * 3 * 3 * 1, dtype="float32").reshape(2, 3, 3, 1)
            scaled = augment(images, training=False)
            """,
            at=[(3, 1, "Keras 3 has no `tf.keras.layers.experimental` (ModuleNotFoundError)")],
            effect=FIXES_ERROR,
            keras2=True,
            keras2_before=True,
            note="beresandras/contrastive-classification-keras train.py:9 (and its notebook): the module imported "
                 "under a name, then preprocessing.X; every X used is layers.X itself in tf_keras 2.21 (the table's "
                 "exact replacement) and exists in Keras 3: layers imported under the same name",
        ),
        flagged(
            """
            from tensorflow.keras.layers.experimental import preprocessing

            flip = preprocessing.RandomFlip("horizontal")
            base = preprocessing.PreprocessingLayer
            module = preprocessing
            """,
            at=[(1, 1, "Keras 3 has no `tf.keras.layers.experimental` (ModuleNotFoundError)")],
            note="the module handed on, and a name Keras 3's layers do not have under the same name: the import "
                 "is not rewritten",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
            x = np.linspace(-2.0, 3.0, 8 * 3, dtype="float32").reshape(8, 3)
            x[4:] *= 3.0
            with strategy.scope():
                inputs = tf.keras.Input((3,))
                norm = tf.keras.layers.experimental.SyncBatchNormalization(-1, 0.5)
                model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(norm(inputs)))
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
            model.fit(x, x.sum(axis=1, keepdims=True), batch_size=8, epochs=1, verbose=0, shuffle=False)
            weights = model.get_weights()
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
            x = np.linspace(-2.0, 3.0, 8 * 3, dtype="float32").reshape(8, 3)
            x[4:] *= 3.0
            with strategy.scope():
                inputs = tf.keras.Input((3,))
                norm = tf.keras.layers.BatchNormalization(-1, 0.5, synchronized=True)
                model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(norm(inputs)))
                model.compile(tf.keras.optimizers.SGD(0.1), "mse")
            model.fit(x, x.sum(axis=1, keepdims=True), batch_size=8, epochs=1, verbose=0, shuffle=False)
            weights = model.get_weights()
            """,
            at=[(9, 12, "Keras 3 has no `tf.keras.layers.experimental.SyncBatchNormalization` (AttributeError): use "
                        "`tf.keras.layers.BatchNormalization(synchronized=True)` (the same computation)")],
            effect=FIXES_ERROR,
            keras2_before=True,
            note="under a MirroredStrategy; at two replicas (scripts/measure_sync_batchnorm.py, each run in its own "
                 "process) the weights and moving statistics are identical too, and an unsynchronized "
                 "BatchNormalization differs by 5.5. One replica here: in the fix-execution child, which runs many "
                 "sources, tf_keras's synchronized statistics under two replicas after other cases' collectives "
                 "raised InvalidArgumentError (a collective instance of another shape)",
        ),
        flagged(
            """
            import numpy as np
            import keras

            loss = keras.losses.mse(np.ones((2, 1), "float32"), np.zeros((2, 1), "float32"))
            """,
            fixed="""
            import numpy as np
            import keras

            loss = keras.losses.mean_squared_error(np.ones((2, 1), "float32"), np.zeros((2, 1), "float32"))
            """,
            at=[(4, 8, "Keras 3 has no `keras.losses.mse` (AttributeError): use `keras.losses.mean_squared_error`")],
            effect=FIXES_ERROR,
        ),
        flagged(
            """
            import tensorflow as tf
            import keras
            from keras import backend as K
            from keras.preprocessing.text import Tokenizer
            import keras.preprocessing.text
            from tensorflow import Session

            sess = tf.Session()
            x = tf.placeholder(tf.float32, (None, 2))
            value = K.eval(x)
            opt = tf.train.AdamOptimizer(0.1)
            enq = keras.utils.OrderedEnqueuer
            total = K.sum(x)
            """,
            at=[(4, 1, "Keras 3 has no `keras.preprocessing.text` (ModuleNotFoundError)"),
                (5, 8, "Keras 3 has no `keras.preprocessing.text` (ModuleNotFoundError)"),
                (6, 24, "TensorFlow 2 has no `tf.Session` (ImportError): `tf.compat.v1.Session` keeps it"),
                (8, 8, "TensorFlow 2 has no `tf.Session` (AttributeError): `tf.compat.v1.Session` keeps it"),
                (9, 5, "TensorFlow 2 has no `tf.placeholder` (AttributeError)"),
                (10, 9, "Keras 3 has no `keras.backend.eval` (AttributeError)"),
                (11, 7, "TensorFlow 2 has no `tf.train.AdamOptimizer` (AttributeError)"),
                (12, 7, "Keras 3 has no `keras.utils.OrderedEnqueuer` (AttributeError)"),
                (13, 9, "Keras 3 has no `keras.backend.sum` (AttributeError); the closest is `keras.ops.sum`")],
            note="no exact replacement: tf.compat.v1 (graph-mode semantics), keras.ops (a different function), "
                 "none",
        ),
        flagged(
            """
            import tensorflow as tf

            if hasattr(tf.keras.optimizers, "legacy"):
                opt = tf.keras.optimizers.legacy.Adam(learning_rate=0.1)
            else:
                opt = tf.keras.optimizers.Adam(learning_rate=0.1)
            try:
                sgd = tf.keras.optimizers.legacy.SGD()
            except ImportError:
                sgd = tf.keras.optimizers.SGD()
            LegacyOptimizer = tf.keras.optimizers.legacy.Optimizer
            legacy = isinstance(sgd, tf.keras.optimizers.legacy.Optimizer)
            behaviour = tf.compat.v2.enable_v2_behavior
            """,
            fixed="""
            import tensorflow as tf

            if hasattr(tf.keras.optimizers, "legacy"):
                opt = tf.keras.optimizers.Adam(learning_rate=0.1)
            else:
                opt = tf.keras.optimizers.Adam(learning_rate=0.1)
            try:
                sgd = tf.keras.optimizers.legacy.SGD()
            except ImportError:
                sgd = tf.keras.optimizers.SGD()
            LegacyOptimizer = tf.keras.optimizers.legacy.Optimizer
            legacy = isinstance(sgd, tf.keras.optimizers.legacy.Optimizer)
            behaviour = tf.compat.v2.enable_v2_behavior
            """,
            at=[(4, 11, "Keras 3's `tf.keras.optimizers.legacy.Adam` raises ImportError when made (a stub left for "
                        "Keras 2 code): use `tf.keras.optimizers.Adam` (updates within 1e-6")],
            effect=FIXES_ERROR,
            note="Keras 3 keeps optimizers.legacy by name (hasattr is True) with stubs that raise ImportError when "
                 "made (executed by the derivation): the TF 2.11-2.15 idiom breaks; a try catching ImportError, a "
                 "reference (isinstance, tensorflow/addons' KerasLegacyOptimizer) are fine; tf.compat.v2 has "
                 "enable_v2_behavior (not read against tf's names)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def train(make):
                w = tf.Variable([1.0, -2.0, 3e-4])
                opt = make()
                for g in np.linspace(-1.0, 1.0, 30, dtype="float32").reshape(10, 3):
                    opt.apply_gradients([(tf.constant(g), w)])
                return w.numpy()

            plain = train(lambda: tf.keras.optimizers.legacy.SGD(0.1))
            heavy = train(lambda: tf.keras.optimizers.legacy.SGD(learning_rate=0.05, momentum=0.9, nesterov=True))
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def train(make):
                w = tf.Variable([1.0, -2.0, 3e-4])
                opt = make()
                for g in np.linspace(-1.0, 1.0, 30, dtype="float32").reshape(10, 3):
                    opt.apply_gradients([(tf.constant(g), w)])
                return w.numpy()

            plain = train(lambda: tf.keras.optimizers.SGD(0.1))
            heavy = train(lambda: tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True))
            """,
            at=[(11, 23, "Keras 3's `tf.keras.optimizers.legacy.SGD` raises ImportError when made (a stub left for "
                         "Keras 2 code): use `tf.keras.optimizers.SGD` (the same updates, measured)"),
                (12, 23, "Keras 3's `tf.keras.optimizers.legacy.SGD` raises ImportError when made")],
            effect=FIXES_ERROR,
            keras2_before=True,
            note="legacy SGD (Keras 2's OptimizerV2) and Keras 3's SGD: identical updates (the original runs under "
                 "tf_keras, the fix under Keras 3)",
        ),
        flagged(
            """
            import tensorflow as tf

            rms = tf.keras.optimizers.legacy.RMSprop(1e-3)
            old = tf.keras.optimizers.legacy.SGD(lr=0.1, decay=1e-4)
            named = tf.keras.optimizers.legacy.Adam(0.1, 0.9, 0.999, 1e-7, False, "adam")
            """,
            at=[(3, 7, "Keras 3's `tf.keras.optimizers.legacy.RMSprop` raises ImportError when made (a stub left "
                       "for Keras 2 code); the closest is `tf.keras.optimizers.RMSprop` (a different implementation"),
                (4, 7, "Keras 3's `tf.keras.optimizers.legacy.SGD` raises ImportError when made (a stub left for "
                       "Keras 2 code); the closest"),
                (5, 9, "Keras 3's `tf.keras.optimizers.legacy.Adam` raises ImportError when made (a stub left for "
                       "Keras 2 code); the closest")],
            note="no fix: RMSprop's epsilon sits inside the square root in the legacy kernel (weights 0.136 apart "
                 "after 50 steps); lr=/decay= (TFG901's); a sixth positional argument (name there, weight_decay "
                 "in Keras 3)",
        ),
        flagged(
            """
            import sys
            from tensorflow import keras

            def train(classifier, schedule):
                optimizer_cls = keras.optimizers.legacy.Adam if sys.platform == "darwin" else keras.optimizers.Adam
                classifier.compile(optimizer=optimizer_cls(learning_rate=schedule), loss="mse")
                base = keras.optimizers.legacy.Optimizer if sys.platform == "darwin" else keras.optimizers.Optimizer
                kind = keras.optimizers.legacy.SGD
                kind = keras.optimizers.SGD
                return isinstance(classifier.optimizer, base), kind()
            """,
            at=[(5, 21, "Keras 3's `tf.keras.optimizers.legacy.Adam` raises ImportError when made")],
            note="kahst/BirdNET-Analyzer model.py:732: the class chosen by a conditional expression is made "
                 "through the name (ImportError under Keras 3.15, run by hand); a class only given to isinstance, "
                 "or rebound before the call, is not made",
        ),
        clean(
            """
            import tensorflow as tf
            import keras
            from tensorflow.keras.preprocessing.text import Tokenizer
            from tensorflow.keras import backend as K

            scale = keras.layers.Rescaling(1 / 255)
            noise = tf.random.normal((2, 2))
            tok = tf.keras.preprocessing.text.Tokenizer()
            value = K.eval(tf.ones(2))
            loss = tf.keras.losses.MSE
            """,
            note="Keras 3 code already migrated; tf.keras under TF 2.21 keeps preprocessing.text, the legacy "
                 "backend's eval and losses.MSE (standalone keras has none of them)",
        ),
        clean(
            """
            import tf_keras
            import tensorflow.compat.v1 as tf1
            from tf_keras.layers.experimental import preprocessing
            from keras.src import backend
            from keras.src.legacy.preprocessing import text

            scale = tf_keras.layers.experimental.preprocessing.Rescaling(1 / 255)
            sess = tf1.Session()
            x = tf1.placeholder(tf1.float32)
            value = backend.eval
            """,
            note="tf_keras (Keras 2) keeps them; tf.compat.v1 keeps TF 1's names; keras.src internals",
        ),
        clean(
            """
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import tensorflow as tf

            scale = tf.keras.layers.experimental.preprocessing.Rescaling(1 / 255)
            """,
            note="TF_USE_LEGACY_KERAS: tf.keras may be Keras 2 here",
        ),
        clean(
            """
            import tensorflow as tf

            try:
                from keras.preprocessing.text import Tokenizer
            except ImportError:
                from tensorflow.keras.preprocessing.text import Tokenizer
            try:
                Rescaling = tf.keras.layers.experimental.preprocessing.Rescaling
            except AttributeError:
                Rescaling = tf.keras.layers.Rescaling
            if hasattr(tf, "Session"):
                sess = tf.Session()
            if tf.__version__.startswith("1."):
                x = tf.placeholder(tf.float32)
            else:
                x = tf.keras.Input((2,))
            if hasattr(tf.keras.layers, "experimental"):
                scale = tf.keras.layers.experimental.preprocessing.Rescaling(0.5)
            if hasattr(tf.keras.optimizers, "experimental") and tf.keras.optimizers.Optimizer.__module__ \\
                    == tf.keras.optimizers.experimental.Optimizer.__module__:
                pass
            """,
            note="guards: a try whose except catches the error, hasattr (also `hasattr(...) and ...`: "
                 "tensorflow/addons optimizers/constants.py), a version test for TF 1",
        ),
        clean(
            """
            import tensorflow as tf

            if tf.__version__ < "2":
                pass
            tf = tf.compat.v1
            sess = tf.Session()
            """,
            note="the module name rebound to tf.compat.v1: the file's tf is TF 1's API",
        ),
    ]
