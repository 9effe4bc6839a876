from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import libcst as cst

from tflint_gpu.autofix.replace import replace_nodes
from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.semantic.run_once import ARG, CONTAINER, SCALAR, VARIABLE, outlives_trace
from tflint_gpu.rules.base import CHANGES, GRAPH_TEXT, Fix, Rule, Safety, clean, flagged

# Methods of builtin containers (list, dict, set, collections.deque) that
# change the container in place.
MUTATING_METHODS = frozenset(
    {
        # list
        "append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
        # dict
        "update", "setdefault", "popitem",
        # set
        "add", "discard", "intersection_update", "difference_update", "symmetric_difference_update",
        # collections.deque
        "appendleft", "extendleft", "popleft", "rotate",
    }
)
_NUMBER = (cst.Integer, cst.Float)
# Calls whose argument may be the fixed global: they give the same value for a
# Python number and for a tf.Variable holding it.
_SAME_VALUE_READS = frozenset({"int", "float"})
# TensorFlow calls in graph code that accept a tf.Variable where a number was.
_GRAPH_READS = frozenset({"tensorflow.print", "tensorflow.identity", "tensorflow.cast"})


class TraceTimeSideEffect(Rule):
    """A Python side effect in graph code: it runs once per trace, not once per call.

    ## What it does
    In code that runs traced as a graph (a `tf.function`, a function given to
    `tf.data.Dataset.map` and friends, a Keras `call`/`train_step`, a loss
    or metric Keras runs (`compile(loss=..., metrics=...)`, a Loss's `call`,
    a Metric's `update_state`/`result`), a `Lambda` function, a function
    `tf.map_fn`/`tf.while_loop`/`tf.cond`... run from graph code, or a
    function those call), finds Python statements that change state living
    longer than the call:

    * rebinding a `global` or `nonlocal` name (`counter += 1`, `cache = x`);
    * `self.attr += ...`, and `self.attr = <expression reading self.attr>`,
      where the class sets `self.attr` to a Python value (number, string,
      list, dict, set) or, in `__init__`, to a constructor argument
      (`self.beta = beta`; then `self.beta *= decay` in `call`);
    * item assignment (`stats["n"] += 1`, `stats[k] = v`) and in-place methods
      (`append`, `extend`, `insert`, `remove`, `pop`, `clear`, `sort`,
      `reverse`, `update`, `setdefault`, `popitem`, `add`, `discard`,
      `*_update`, `appendleft`, `extendleft`, `popleft`, `rotate`) on a list,
      dict, set or deque bound at module level, in an eager enclosing
      function, or to `self.attr`;
    * a weight (`self.w = self.add_weight(...)` or a `tf.Variable`) rebound
      in graph code to a tensor: `self.w = tf.reshape(self.w, ...)`.

    Not flagged: local variables and containers (also those of an enclosing
    graph function, which live only for one trace); `tf.Variable` methods
    (`assign`, `assign_add`) and globals or attributes holding a `tf.Variable`;
    plain `self.attr = value` caching in a Keras `call`, and its dict form
    `self.endpoints["head"] = x` (one literal key); per-call scratch state:
    `self.endpoints = {}` (or `[]`, `dict()`, a number) as a statement of the
    function's own body, before anything there touches it, and then filled in
    that function (every call and every trace starts afresh); code that runs
    once on purpose: a lazy block (`if self.v is None:`, `if not
    self._built:`, `if self.counter == 0:`, `if not hasattr(self, "a"):`, on
    state outliving the call) whose body, or a same-module helper it calls,
    sets that state (`self._build_from_signature(query)` setting
    `self._built_from_signature = True`), a `build` method called from graph
    code, and helpers that only `build` or lazy blocks call (transitively);
    `__init__`/`build` and other eager code; functions handed to
    `tf.py_function`/`tf.numpy_function`; `print` (it too runs once per
    trace; not reported here: use `tf.print`); counters named for traces
    (`num_traces += 1`, `self.tracing_count += 1`), which count traces on
    purpose, as TensorFlow's guide does.

    ## Why is this bad?
    TensorFlow runs the Python body of a graph function only while tracing it;
    later calls with the same input signature replay the graph and skip the
    Python. A counter in a `tf.function` called 3 times is 1, a list
    `append`ed to has 1 element, a Keras layer's `self.calls += 1` is 1 after
    a 16-step `fit`, and a function given to `Dataset.map` over 5 elements
    counts 1. Inside a tensor `if` the Python code of **both** branches runs
    once at trace (a list appended to in each branch holds
    `['then', 'else']`). A global or dict entry changed in a branch is worse:
    AutoGraph either restores it (`c += 1` / `c -= 1` in the two branches
    leaves `c == 0`), or, when it is read after the `if`, makes it an output
    of the `tf.cond`, so it ends up holding a symbolic tensor leaked out of
    the graph (`Tensor("cond/Identity:0", shape=(), dtype=int32)`). A weight
    rebound to a tensor in graph code is lost the same way: the attribute
    holds a symbolic tensor from the trace, the variable no longer takes part
    in the computation, and the next trace fails.

    ## Example
    ```python
    counter = 0

    @tf.function
    def step(x):
        global counter
        counter += 1
        return x * 2
    ```

    Use instead:
    ```python
    counter = tf.Variable(0)

    @tf.function
    def step(x):
        counter.assign_add(1)
        return x * 2
    ```

    ## Fix safety
    Unsafe, and the behaviour changes on purpose: the state then changes on
    every call. The fix is offered only for a module-level number
    (`counter = 0`) changed by one `counter += <number>` (or `-=`) in graph
    code: the global becomes `tf.Variable(0)` (int32 for an int, float32 for a
    float), the statement `counter.assign_add(1)` and the `global` declaration
    goes. Only when every other use of the name is a read in graph code or
    `int(counter)`/`float(counter)`, which give the same value either way;
    other modules importing the name are not checked. Attributes, containers
    and `nonlocal` names get no fix: keep the state in a `tf.Variable` created
    in `__init__`/`build`, a `tf.TensorArray`, or return the values.

    ## Measured effect
    TensorFlow 2.21, CPU: a global counter incremented in a `tf.function`
    called 3 times with one input signature is 1; after the fix it is 3
    (examples/TFG103, `tflint-gpu verify --rule TFG103`). Keras 3.15: a layer
    whose `call` does `self.beta *= 0.5` (`beta=1.0` from the constructor)
    ends with `beta` 0.5 after 3 calls through one `tf.function` (eagerly:
    0.125), and 0.25 after a 16-step `fit` (one trace for the functional
    build, one for training); every traced call multiplies by the value baked
    in at trace. `self.w = tf.reshape(self.w, (2, 2))` in `call`, with `self.w`
    from `add_weight`: eagerly the attribute silently becomes an EagerTensor;
    traced, it holds a `SymbolicTensor`, `fit` raises `ValueError: No
    gradients provided for any variable`, and the next trace (a new input
    shape, `predict`) raises `TypeError: <tf.Tensor 'Reshape:0' ...> is out of
    scope and cannot be used here`; a `tf.Module` doing this in a
    `tf.function` has 0 trainable variables afterwards.
    """

    code = "TFG103"
    name = "trace-time-side-effect"
    message = "Python side effect in graph code runs once per trace, not once per call"
    needs = (GRAPH_TEXT,)
    fix_safety = Safety.UNSAFE

    # -- visitors ---------------------------------------------------------
    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        function = self._graph_function(ctx)
        if function is None:
            return
        target = node.target
        if _counts_traces(target.value if isinstance(target, cst.Subscript) else target):
            return  # `num_traces += 1`: counting traces is the point (TensorFlow's guide does it)
        if isinstance(target, cst.Name):
            if self._global_state(target.value, function, ctx):
                what = f"`{_code(ctx, node)}` rebinds {_declaration(target.value, function, ctx)} `{target.value}`"
                if not self._runs_once(node, function, ctx):
                    fix, _why_not = self._counter_fix(node, function, ctx)
                    ctx.report(node, self._message(what, ctx), fix)
        elif isinstance(target, cst.Attribute):
            attr = self._self_attr(target, function, ctx)
            if attr is not None and _attr_kind(attr, function, ctx) in (SCALAR, CONTAINER, ARG) \
                    and not self._is_scratch(attr, function, ctx):
                what = f"`{_code(ctx, node)}` changes `{_code(ctx, target)}`"
                self._report(node, self._message(what, ctx), function, ctx)
        elif isinstance(target, cst.Subscript):
            self._check_item(node, target, function, ctx)

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        function = self._graph_function(ctx)
        if function is None:
            return
        for assign_target in node.targets:
            for target in bindings.target_elements(assign_target.target):
                self._check_assign_target(node, target, function, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in MUTATING_METHODS:
            return
        function = self._graph_function(ctx)
        if function is None or self._container_kind(func.value, function, ctx) != CONTAINER:
            return
        what = f"`{_code(ctx, func)}(...)` changes `{_code(ctx, func.value)}`"
        self._report(node, self._message(what, ctx), function, ctx)

    # -- checks -----------------------------------------------------------
    def _check_assign_target(self, node: cst.Assign, target: cst.BaseExpression, function: ScopeInfo, ctx) -> None:
        if _counts_traces(target.value if isinstance(target, cst.Subscript) else target):
            return  # `tracing_count[0] = tracing_count[0] + 1`: counting traces on purpose
        if isinstance(target, cst.Name):
            if self._global_state(target.value, function, ctx) \
                    and not ctx.run_once.creates_variable(node.value, ctx.scope):
                what = f"`{_code(ctx, node)}` rebinds {_declaration(target.value, function, ctx)} `{target.value}`"
                self._report(node, self._message(what, ctx), function, ctx)
        elif isinstance(target, cst.Attribute):
            attr = self._self_attr(target, function, ctx)
            if attr is None:
                return
            kind = _attr_kind(attr, function, ctx)
            reads_itself = bindings.mentions_attribute(node.value, attr[0], attr[1])
            if kind == VARIABLE:
                if reads_itself or ctx.is_tensor(node.value):
                    if ctx.run_once.creates_variable(node.value, ctx.scope):
                        value = "a new `tf.Variable`, made at every trace"
                    elif reads_itself:
                        value = "a graph tensor computed from it (not a variable any more)"
                    else:
                        value = "a traced tensor"
                    what = f"`{_code(ctx, node)}` rebinds variable `{_code(ctx, target)}` to {value}"
                    self._report(node, what, function, ctx)
                return
            if kind not in (SCALAR, CONTAINER, ARG) or self._is_scratch(attr, function, ctx):
                return
            if reads_itself:
                what = f"`{_code(ctx, target)} = ...{attr[0]}.{attr[1]}...` updates an attribute"
                self._report(node, self._message(what, ctx), function, ctx)
        elif isinstance(target, cst.Subscript):
            self._check_item(node, target, function, ctx)

    def _check_item(self, node: cst.CSTNode, target: cst.Subscript, function: ScopeInfo, ctx) -> None:
        if isinstance(node, cst.Assign) and isinstance(target.value, cst.Attribute) and _literal_key(target) \
                and not bindings.mentions_expression(node.value, target.value):
            return  # `self.cache["k"] = x`: caching, like a plain `self.attr = x`
        if self._container_kind(target.value, function, ctx) == CONTAINER:
            what = f"`{_code(ctx, node)}` changes `{_code(ctx, target.value)}`"
            self._report(node, self._message(what, ctx), function, ctx)

    def _report(self, node: cst.CSTNode, message: str, function: ScopeInfo, ctx) -> None:
        if not self._runs_once(node, function, ctx):
            ctx.report(node, message)

    @staticmethod
    def _graph_function(ctx) -> Optional[ScopeInfo]:
        graph = ctx.graph()
        if graph is None:
            return None
        return ctx.scope.function()

    @staticmethod
    def _message(what: str, ctx) -> str:
        return f"{what} in graph code: runs once per trace, not per call"

    # -- code that runs once, not once per trace --------------------------
    def _runs_once(self, node: cst.CSTNode, function: ScopeInfo, ctx) -> bool:
        """``node`` runs once in the program's life, on purpose: in a setup
        function (``build`` and what only it calls) or in a lazy block
        (``if not self.flag:`` whose body sets the flag)."""
        return ctx.run_once.runs_once(node, function)

    def _is_scratch(self, attr: Tuple[str, str], function: ScopeInfo, ctx) -> bool:
        """``self.attr`` is per-call scratch in ``function``: bound to a fresh
        Python value at the top of its body before anything there touches it."""
        return ctx.run_once.per_call_scratch(function, attr[0], attr[1])

    # -- what state is ----------------------------------------------------
    def _global_state(self, name: str, function: ScopeInfo, ctx) -> bool:
        """``name`` is declared global/nonlocal here and lives beyond one trace,
        and is not a tf.Variable."""
        if name not in function.globals:
            return False
        found = ctx.binding(name, scope=function)
        if found is None:
            return function.parent is not None and _declared_global(name, function, ctx)
        if not outlives_trace(found.scope):
            return False
        return not any(ctx.run_once.creates_variable(value, found.scope) for value in found.own_values)

    def _container_kind(self, expr: cst.BaseExpression, function: ScopeInfo, ctx) -> Optional[str]:
        """CONTAINER if ``expr`` is a Python container that outlives the call."""
        if isinstance(expr, cst.Name):
            found = ctx.assigned(expr.value, scope=function)
            if found is None or not outlives_trace(found.scope):
                return None
            return ctx.run_once.state_kind(found.own_values, found.scope)
        if isinstance(expr, cst.Attribute):
            attr = self._self_attr(expr, function, ctx)
            if attr is not None and not self._is_scratch(attr, function, ctx):
                return _attr_kind(attr, function, ctx)
        return None

    @staticmethod
    def _self_attr(target: cst.Attribute, function: ScopeInfo, ctx) -> Optional[Tuple[str, str]]:
        """(self, attr) for ``self.attr`` in a method, where self is its first parameter."""
        if not function.binds_instance or not isinstance(target.value, cst.Name):
            return None
        first = bindings.first_parameter(function)
        if first is None or target.value.value != first or first in function.globals:
            return None
        return first, target.attr.value

    # -- the fix ----------------------------------------------------------
    def _counter_fix(self, node: cst.AugAssign, function: ScopeInfo, ctx) -> Tuple[Optional[Fix], str]:
        """Module-level ``counter = 0`` and ``counter += 1`` -> a tf.Variable and assign_add.

        Returns the fix, or None and (for a counter the fix almost fits) why not."""
        name = node.target.value
        root = ctx.model.root
        method = {cst.AddAssign: "assign_add", cst.SubtractAssign: "assign_sub"}.get(type(node.operator))
        found = ctx.assigned(name, scope=function)
        values = found.own_values if found is not None and found.scope is root else []
        if (method is None or not isinstance(function.node, cst.FunctionDef) or len(values) != 1
                or not _declared_global(name, function, ctx)):
            return None, ""
        initial, step = _number(values[0]), _number(node.value)
        if initial is None or step is None or (isinstance(initial, cst.Integer) and isinstance(step, cst.Float)):
            return None, ""
        assign = next(
            (a for a, scope in ctx.model.index.get("Assign", ()) if scope is root and a.value is values[0]
             and len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name)),
            None,
        )
        if assign is None:
            return None, ""
        if not self._other_uses_stay_valid(name, assign, node, function, ctx):
            return None, (f" (no automatic fix: `{name}` is changed or read elsewhere where a "
                          "`tf.Variable` would not behave like the number)")
        spelled = ctx.module_expr("tensorflow", "Variable", scope=root)
        if spelled is None:
            return None, ""
        variable, imports = spelled
        new_function = replace_nodes(function.node, _counter_rewrite(node, name, method, function))
        return Fix(
            f"Make `{name}` a `tf.Variable` and use `{method}`",
            Safety.UNSAFE,
            {values[0]: cst.Call(variable, [cst.Arg(values[0])]), function.node: new_function},
            imports,
        ), ""

    @staticmethod
    def _other_uses_stay_valid(name: str, assign: cst.Assign, node: cst.AugAssign,
                               function: ScopeInfo, ctx) -> bool:
        """Apart from its two bindings and the `global` statements of the
        function, every use of the global is ``int(name)``/``float(name)``,
        ``return name`` in graph code, or the first argument of
        tf.print/tf.identity/tf.cast in graph code (not in a comprehension):
        places where a tf.Variable gives the same value as the number.

        Every spelling of the name counts as a use (``bindings.name_uses``),
        so any other binding of it (a local, a parameter, a def, an import)
        fails the check by itself, and the uses allowed all refer to the
        global; at module level only those after its binding do."""
        module = ctx.module
        model = ctx.model
        module_target = assign.targets[0].target
        allowed: Set[int] = {id(module_target), id(node.target)}
        for statement in bindings.global_statements(function.node):
            allowed.update(id(item.name) for item in statement.names if item.name.value == name)
        comprehension: Optional[Set[int]] = None
        for call, scope in model.index.get("Call", ()):
            for arg in call.args:
                value = arg.value
                if not (isinstance(value, cst.Name) and value.value == name and arg.keyword is None and not arg.star):
                    continue
                func = call.func
                if len(call.args) == 1 and isinstance(func, cst.Name) and func.value in _SAME_VALUE_READS \
                        and bindings.is_builtin(func.value, scope):
                    where = "anywhere"  # int(name), float(name)
                elif ctx.qualname(func, scope) in _GRAPH_READS and arg is call.args[0]:
                    where = "graph"  # tf.print(name)
                else:
                    continue
                if comprehension is None:
                    comprehension = bindings.comprehension_scoped(module)
                if id(value) in comprehension:
                    if where == "anywhere":
                        allowed.add(id(value))
                elif where == "graph":
                    if ctx.graph(scope) is not None:
                        allowed.add(id(value))
                elif scope is not model.root or bindings.comes_after(module, assign, value):
                    allowed.add(id(value))
        for scope in model.scopes:
            if scope.kind == "function" and ctx.graph(scope) is not None:
                allowed.update(id(n) for n in bindings.returned_names(scope.node, name))
        return all(id(use) in allowed for use in bindings.name_uses(module, name))

    cases = [
        clean(
            """
            import tensorflow as tf

            state = []


            @tf.function
            def step(x):
                if not state:
                    state.append(tf.Variable(tf.zeros_like(x)))
                state[0].assign_add(x)
                return state[0]
            """,
            note="issue 35: the create-once idiom (the block fills the module-level list its test asks is "
                 "empty; 3 calls leave one variable, TF 2.21, run by hand)",
        ),
        flagged(
            """
            import tensorflow as tf

            class ImagePool:
                def __init__(self):
                    self.images = []

                def __call__(self, image):
                    self.images.append(image)
                    return tf.concat(self.images, axis=0)

            class CycleGan(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.pool = ImagePool()

                @tf.function
                def train_step(self, data):
                    fake = self.pool(data)
                    return tf.reduce_mean(fake)
            """,
            at=[(8, 9, "`self.images.append(...)` changes `self.images` in graph code")],
            note="an image pool held in an attribute, called from a traced step: its list grows once per trace "
                 "(dslisleedh/GAN-tensorflow2 cyclegan.py)",
        ),
        clean(
            """
            import tensorflow as tf

            class ImagePool:
                def __init__(self):
                    self.images = []

                def __call__(self, image):
                    self.images.append(image)
                    return image

            class CycleGan(tf.keras.Model):
                def __init__(self, pool):
                    super().__init__()
                    self.pool = pool

                @tf.function
                def train_step(self, data):
                    return tf.reduce_mean(self.pool(data))

                def collect(self, data):
                    return ImagePool()(data)
            """,
            note="the attribute holds a parameter (its class is not told), and an eager method's pool is eager",
        ),
        flagged(
            """
            import tensorflow as tf
            import keras

            calls = []
            log = []

            def counted_mse(y_true, y_pred):
                calls.append(1)
                return tf.reduce_mean(tf.square(y_true - y_pred))

            class Collect(keras.metrics.Metric):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.seen = []
                    self.total = self.add_weight(name="total", initializer="zeros")

                def update_state(self, y_true, y_pred, sample_weight=None):
                    self.seen.append(y_pred)
                    self.total.assign_add(tf.reduce_mean(y_pred))

                def result(self):
                    return self.total

            def body(i, v):
                log.append(i)
                return i + 1, v

            @tf.function
            def loop(x):
                return tf.while_loop(lambda i, v: i < 3, body, [0, x])

            model.compile("sgd", loss=counted_mse, metrics=[Collect()])
            """,
            at=[
                (8, 5, "`calls.append(...)` changes `calls` in graph code"),
                (18, 9, "`self.seen.append(...)` changes `self.seen` in graph code"),
                (25, 5, "`log.append(...)` changes `log` in graph code"),
            ],
            note="a loss given to compile, a metric's update_state, a tf.while_loop body from a tf.function: "
                 "measured, each list has 1 element after 8 steps / 3 calls of 3 iterations",
        ),
        clean(
            """
            import tensorflow as tf
            import keras

            log = []

            class Collect(keras.metrics.Metric):
                def __init__(self, **kwargs):
                    super().__init__(**kwargs)
                    self.seen = []
                    self.seen.append(0)

                def reset_state(self):
                    self.seen.append(None)

            def eager_body(i, v):
                log.append(i)
                return i + 1, v

            def eager_row(row):
                log.append(row)
                return row

            tf.while_loop(lambda i, v: i < 3, eager_body, [0, tf.ones([2])])
            tf.map_fn(eager_row, tf.ones([3, 2]))
            """,
            note="eager: a metric's __init__ and reset_state, tf.while_loop and tf.map_fn called eagerly "
                 "(Python loops: the append runs every iteration)",
        ),
        clean(
            """
            import tensorflow as tf

            num_traces = 0

            @tf.function
            def f(x):
                global num_traces
                num_traces += 1
                return x * 2

            class Layer(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.tracing_count = 0

                def call(self, x):
                    self.tracing_count += 1
                    return x

            def make():
                tracing_count = [0]

                @tf.function
                def g(x):
                    tracing_count[0] = tracing_count[0] + 1
                    return x

                return g, tracing_count
            """,
            note="trace counters count traces on purpose (keras trainer_test, the tf.function guide)",
        ),
        flagged(
            """
            import tensorflow as tf

            counter = 0

            @tf.function
            def step(x):
                global counter
                counter += 1
                return x * 2
            """,
            fixed="""
            import tensorflow as tf

            counter = tf.Variable(0)

            @tf.function
            def step(x):
                counter.assign_add(1)
                return x * 2
            """,
            at=[(8, 5, '`counter += 1` rebinds global')],
            run="for _ in range(3):\n    step(tf.constant(1.0))",
            effect=CHANGES,
            note="the plain global counter: the one case with a fix",
        ),
        flagged(
            """
            import tensorflow as tf

            total = 0.0
            seen = 0

            def update(x):
                global seen, total
                total -= 0.5
                return x

            def main():
                f = tf.function(update)
                f(tf.constant(1.0))
                return float(total)
            """,
            fixed="""
            import tensorflow as tf

            total = tf.Variable(0.0)
            seen = 0

            def update(x):
                global seen
                total.assign_sub(0.5)
                return x

            def main():
                f = tf.function(update)
                f(tf.constant(1.0))
                return float(total)
            """,
            at=[(8, 5, '`total -= 0.5` rebinds global')],
            run="result = main()\nf = tf.function(update)\nfor _ in range(3):\n    f(tf.constant(1.0))\nfinal = float(total)",
            effect=CHANGES,
            note="wrapped function; float(total) reads the same value after the fix; one name of two dropped",
        ),
        flagged(
            """
            import tensorflow as tf

            counter = 0

            @tf.function
            def step(x):
                global counter
                counter += 1
                return x

            def report():
                print(counter)
            """,
            at=[(8, 5, '`counter += 1` rebinds global')],
            note="print(counter) would show a Variable after the change: no fix",
        ),
        flagged(
            """
            import tensorflow as tf

            count = 0

            @tf.function
            def step(x):
                global count
                if x > 0:
                    count += 1
                else:
                    count -= 1
                return x
            """,
            at=[(9, 9, '`count += 1` rebinds global'), (11, 9, '`count -= 1` rebinds global')],
            note="both branches of a tensor if run at trace; two changes of one global: no fix",
        ),
        flagged(
            """
            import tensorflow as tf

            cache = None

            @tf.function
            def step(x):
                global cache
                cache = x * 2
                return cache
            """,
            at=[(8, 5, '`cache = x * 2` rebinds')],
            note="rebinding a global",
        ),
        flagged(
            """
            import tensorflow as tf

            def make():
                calls = 0

                @tf.function
                def step(x):
                    nonlocal calls
                    calls += 1
                    return x
                return step
            """,
            at=[(9, 9, '`calls += 1` rebinds nonlocal')],
            note="nonlocal counter of an eager closure",
        ),
        flagged(
            """
            import tensorflow as tf

            class Counter(tf.Module):
                def __init__(self):
                    self.calls = 0

                @tf.function
                def __call__(self, x):
                    self.calls += 1
                    return x
            """,
            at=[(9, 9, '`self.calls += 1` changes')],
            note="self.attr counter: message only",
        ),
        flagged(
            """
            import keras

            class Tracking(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.history = []
                    self.steps = 0

                def call(self, inputs):
                    self.history.append(inputs)
                    self.steps = self.steps + 1
                    return inputs
            """,
            at=[(10, 9, '`self.history.append(...)`'), (11, 9, '`self.steps =')],
            note="Keras call: list attribute append; attribute update reading itself",
        ),
        flagged(
            """
            import tensorflow as tf
            from collections import defaultdict

            log = []
            stats = {"n": 0}
            seen = defaultdict(int)

            @tf.function
            def step(x):
                log.append(x)
                stats["n"] += 1
                seen["x"] = 1
                return x
            """,
            at=[(10, 5, '`log.append(...)` changes'), (11, 5, '`stats["n"] += 1` changes'),
                (12, 5, '`seen["x"] = 1` changes')],
            note="module-level list, dict and defaultdict",
        ),
        flagged(
            """
            import tensorflow as tf

            seen = set()

            def remember(x):
                seen.add(1)
                return x

            ds = tf.data.Dataset.range(5).map(remember)
            """,
            at=[(6, 5, '`seen.add(...)` changes')],
            note="a function given to Dataset.map",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                total = 0
                parts = []
                for i in range(3):
                    total += i
                    parts.append(x * i)
                stats = {}
                stats["n"] = total
                return tf.add_n(parts)
            """,
            note="locals, local lists and dicts",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def step(x):
                parts = []

                def add(v):
                    parts.append(v)

                add(x)
                return parts[0]
            """,
            note="a list local to the enclosing graph function lives for one trace",
        ),
        clean(
            """
            import tensorflow as tf

            counter = tf.Variable(0)
            v = None

            class Model(tf.Module):
                def __init__(self):
                    self.count = tf.Variable(0)
                    self.w = None

                @tf.function
                def __call__(self, x):
                    global counter, v
                    counter.assign_add(1)
                    counter += 1
                    if v is None:
                        v = tf.Variable(1.0)
                    self.count.assign_add(1)
                    self.count += 1
                    if self.w is None:
                        self.w = tf.Variable(tf.ones([2]))
                    return x
            """,
            note="tf.Variable state; the lazy singleton patterns",
        ),
        clean(
            """
            import keras

            class Cache(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.calls = 0
                    self.seen = []

                def build(self, shape):
                    self.calls += 1
                    self.seen.append(shape)

                def call(self, inputs):
                    self.last = inputs
                    self.mask = None
                    return inputs
            """,
            note="build is eager; plain attribute caching in call",
        ),
        clean(
            """
            import tensorflow as tf

            counter = 0
            log = []

            def step(x):
                global counter
                counter += 1
                log.append(x)
                return x

            @tf.function
            def traced(x):
                def host(v):
                    global counter
                    counter += 1
                    log.append(v)
                    return v
                return tf.py_function(host, [x], tf.float32)
            """,
            note="eager code; a function handed to tf.py_function",
        ),
        clean(
            """
            import tensorflow as tf

            def helper(acc, d, x):
                acc.append(x)
                d["k"] = x
                return x

            @tf.function
            def step(x, items=None):
                print("tracing")
                return helper([], {}, x)
            """,
            note="containers passed in as parameters; print is another rule",
        ),
        clean(
            """
            import keras

            class Losses(keras.losses.Loss):
                def __init__(self):
                    super().__init__()
                    self.flat = []

                def build(self, y_true):
                    self.flat.append(y_true)

                def call(self, y_true, y_pred):
                    if not self.built:
                        self.build(y_true)
                    return y_pred - y_true
            """,
            note="state set up by a lazy `build` called from graph code runs once on purpose",
        ),
        clean(
            """
            import keras

            class Backbone(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.blocks = [keras.layers.Dense(4), keras.layers.Dense(4)]
                    self.endpoints = {}

                def call(self, inputs):
                    self.endpoints = {}
                    self.features = []
                    self.shapes = dict()
                    x = inputs
                    for i, block in enumerate(self.blocks):
                        x = block(x)
                        self.endpoints[f"block_{i}"] = x
                        self.features.append(x)
                        self.shapes.update({i: x.shape})
                    return x, self.endpoints
            """,
            note="per-call scratch: a fresh container at the top of call, then filled in the same call",
        ),
        flagged(
            """
            import keras

            class Backbone(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.features = []

                def call(self, inputs, training=False):
                    if training:
                        self.features = []
                    self.features.append(inputs)
                    return inputs
            """,
            at=[(11, 9, '`self.features.append(...)` changes')],
            note="a reset under an if is not a fresh container on every call",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            class Attention(keras.layers.Layer):
                def __init__(self, heads):
                    super().__init__()
                    self.heads = heads
                    self._built_from_signature = False
                    self._output_dense = []

                def _build_from_signature(self, query):
                    self._built_from_signature = True
                    with tf.init_scope():
                        self._query_dense = keras.layers.Dense(self.heads)
                        self._output_dense = []
                        for _ in range(self.heads):
                            self._output_dense.append(keras.layers.Dense(1))

                def call(self, query):
                    if not self._built_from_signature:
                        self._build_from_signature(query)
                    x = self._query_dense(query)
                    return tf.add_n([dense(x) for dense in self._output_dense])
            """,
            note="lazy sublayer creation behind a flag the helper sets: runs once, at the first trace",
        ),
        clean(
            """
            import keras

            class Nested(keras.losses.Loss):
                def __init__(self):
                    super().__init__()
                    self.flat = []
                    self.count = 0

                def _add(self, y):
                    self.flat.append(y)
                    self.count += 1

                def _build_nested(self, y, depth):
                    if depth > 0:
                        self._build_nested(y, depth - 1)
                    self._add(y)

                def build(self, y_true):
                    self._build_nested(y_true, 2)

                def call(self, y_true, y_pred):
                    if not self.built:
                        self.build(y_true)
                    return y_pred - y_true
            """,
            note="helpers called only from build (transitively, recursively) run once, at build time",
        ),
        flagged(
            """
            import keras

            class Log(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.seen = []
                    self.frozen = False
                    self.steps = 0

                def _remember(self, x):
                    self.seen.append(x)

                def build(self, shape):
                    self._remember(shape)

                def call(self, x):
                    self._remember(x)
                    if not self.frozen:
                        self.steps += 1
                    return x
            """,
            at=[(11, 9, '`self.seen.append(...)` changes'), (19, 13, '`self.steps += 1` changes')],
            note="a helper of build also called from call; a guard whose block never sets its flag",
        ),
        clean(
            """
            import tensorflow as tf

            def make():
                mod = [None]

                @tf.function
                def f(x):
                    if mod[0] is None:
                        mod[0] = tf.Module()
                    return x
                return f
            """,
            note="the lazy singleton through a list cell",
        ),
        flagged(
            """
            import tensorflow as tf

            log = []

            @tf.function
            def step(xs):
                first = None
                for x in xs:
                    if first is None:
                        first = x
                        log.append(x)
                return first
            """,
            at=[(11, 13, '`log.append(...)` changes')],
            note="a guard on a local flag runs once per call, so once per trace",
        ),
        clean(
            """
            import tensorflow as tf

            class Model(tf.Module):
                def __init__(self):
                    self.v = tf.Variable(0)
                    self.counter = 0
                    self.ready = False

                @tf.function
                def __call__(self):
                    if self.counter == 0:
                        with tf.init_scope():
                            self.counter += 1
                            self.v.assign_add(1)
                    if self.ready is False:
                        self.ready = True
                    return self.v
            """,
            note="a block guarded by a flag it changes runs once, eager or traced (from the tf.function guide)",
        ),
        clean(
            """
            import keras

            class Head(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.endpoints = {}
                    self.dense = keras.layers.Dense(2)

                def call(self, inputs):
                    x = self.dense(inputs)
                    self.endpoints["head"] = x
                    self.endpoints["logits"] = x
                    return x
            """,
            note="a constant key of a dict attribute set in call: caching, like `self.last = x`",
        ),
        flagged(
            """
            import keras

            class Counts(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.counts = {"n": 0}
                    self.seen = {}
                    self.steps = 0

                def call(self, inputs):
                    self.counts["n"] = self.counts["n"] + 1
                    self.seen[len(self.seen)] = inputs
                    if self.steps < 10:
                        self.steps += 1
                    return inputs
            """,
            at=[(11, 9, '`self.counts["n"] = self.counts["n"] + 1` changes'),
                (12, 9, '`self.seen[len(self.seen)] = inputs` changes'),
                (14, 13, '`self.steps += 1` changes')],
            note="an entry updated from the dict, a growing key; a guard that holds for ten calls",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class Decay(keras.layers.Layer):
                def __init__(self, beta=1.0, decay=0.5):
                    super().__init__()
                    self.beta = beta
                    self.decay = decay

                def call(self, inputs):
                    self.beta *= self.decay
                    return inputs * self.beta

            class Scale(tf.Module):
                def __init__(self, scale):
                    self.scale = scale

                @tf.function
                def __call__(self, x):
                    self.scale = self.scale * 0.9
                    return x * self.scale
            """,
            at=[(11, 9, '`self.beta *= self.decay` changes'), (20, 9, '`self.scale = ...self.scale...` updates')],
            note="attributes set from constructor arguments (a number): decayed once per trace",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class Reshaped(keras.layers.Layer):
                def build(self, shape):
                    self.w = self.add_weight(shape=(4,), initializer="ones")

                def call(self, inputs):
                    self.w = tf.reshape(self.w, (2, 2))
                    return tf.matmul(inputs, self.w)

            class Module(tf.Module):
                def __init__(self):
                    self.v = tf.Variable(tf.ones(4))

                @tf.function
                def __call__(self, x):
                    self.v = self.v * 2.0
                    return x * self.v
            """,
            at=[(9, 9, '`self.w = tf.reshape(self.w, (2, 2))` rebinds variable'),
                (18, 9, '`self.v = self.v * 2.0` rebinds variable')],
            note="a weight rebound to a tensor in graph code: the variable is lost",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            class Reshaped(keras.layers.Layer):
                def __init__(self, units=4):
                    super().__init__()
                    self.units = units

                def build(self, shape):
                    self.w = self.add_weight(shape=(self.units,), initializer="ones")
                    self.units *= 1

                def call(self, inputs):
                    w = tf.reshape(self.w, (2, 2))
                    units = self.units * 2
                    return tf.matmul(inputs, w) * units
            """,
            note="reading a weight or a constructor argument into a local; build is eager",
        ),
        flagged(
            """
            import tensorflow as tf

            class Rebinder(tf.Module):
                def __init__(self):
                    self.v = tf.Variable(1.0)
                    self.w = tf.Variable(2.0)

                @tf.function
                def __call__(self, x):
                    self.v = tf.Variable(x)
                    self.w = self.w * 2.0
                    return self.v + self.w
            """,
            at=[(10, 9, "`self.v = tf.Variable(x)` rebinds variable `self.v` to a new `tf.Variable`, made at "
                        "every trace"),
                (11, 9, "`self.w = self.w * 2.0` rebinds variable `self.w` to a graph tensor computed from it")],
            note="the message says what the variable attribute is rebound to",
        ),
    ]


def _counter_rewrite(aug: cst.AugAssign, name: str, method: str,
                     function: ScopeInfo) -> Dict[cst.CSTNode, Optional[cst.CSTNode]]:
    """In one function: ``name += n`` -> ``name.assign_add(n)``; ``name`` leaves
    every ``global`` statement (one naming nothing else goes)."""
    call = cst.Call(cst.Attribute(cst.Name(name), cst.Name(method)), [cst.Arg(aug.value)])
    changes: Dict[cst.CSTNode, Optional[cst.CSTNode]] = {aug: cst.Expr(call, semicolon=aug.semicolon)}
    for statement in bindings.global_statements(function.node):
        names = [item for item in statement.names if item.name.value != name]
        if len(names) == len(statement.names):
            continue
        if names:
            names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            changes[statement] = statement.with_changes(names=names)
        else:
            changes[statement] = None
    return changes


# -- helpers -----------------------------------------------------------------
def _code(ctx, node: cst.CSTNode) -> str:
    text = ctx.module.code_for_node(node).strip()
    return text if len(text) <= 40 else text[:37] + "..."


def _declared_global(name: str, function: ScopeInfo, ctx) -> bool:
    return any(
        scope is function and any(item.name.value == name for item in node.names)
        for node, scope in ctx.model.index.get("Global", ())
    )


def _declaration(name: str, function: ScopeInfo, ctx) -> str:
    return "global" if _declared_global(name, function, ctx) else "nonlocal"


def _counts_traces(target: cst.BaseExpression) -> bool:
    """A counter named for traces (``num_traces``, ``self.tracing_count``): it
    counts traces on purpose."""
    name = target.attr.value if isinstance(target, cst.Attribute) else \
        target.value if isinstance(target, cst.Name) else ""
    return "trac" in name.lower()


def _attr_kind(attr: Tuple[str, str], function: ScopeInfo, ctx) -> Optional[str]:
    """What the class of method ``function`` binds ``self.attr`` to (the engine's answer)."""
    return ctx.run_once.attribute_kind(function.enclosing_class, attr[1])


def _literal_key(target: cst.Subscript) -> bool:
    """``d["k"]`` or ``d[0]``: one literal key."""
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return False
    return isinstance(target.slice[0].slice.value, (cst.SimpleString, cst.Integer, cst.ConcatenatedString))


def _number(value) -> Optional[cst.BaseExpression]:
    """The Integer/Float literal of ``value`` (or of ``-value``), if it is one."""
    if isinstance(value, _NUMBER):
        return value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) \
            and isinstance(value.expression, _NUMBER):
        return value.expression
    return None
