from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ScopeInfo
from tflint_gpu.semantic.shuffles import (NEAR, Shuffle, after, between, place, rebinds, reseeds, shuffle_of,
                                          used_together)
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

_STATE_NAME = "shuffle_state"
# What runs where the shuffles run: comprehensions and lambdas are entered, defs and classes not.
# How each stream's state is saved and restored: (get, set) written after the module or generator.
_STATE_CALLS = {"numpy.random": ("get_state", "set_state"), "random": ("getstate", "setstate")}
_GENERATOR_STATE = {"numpy.random.RandomState": ("get_state", "set_state"),
                    "random.Random": ("getstate", "setstate")}


class FeaturesLabelsShuffledApart(Rule):
    """Features and labels shuffled by two independent random permutations.

    ## What it does
    Finds two shuffles of two different arrays one after the other in the same
    block, from the same random stream with no reseeding between them, when the
    code after them uses the two arrays as rows and their labels:
    `np.random.shuffle(x); np.random.shuffle(y)` (also `random.shuffle`, a
    generator's `rng.shuffle` of `np.random.default_rng()`/`RandomState`/
    `random.Random`, and `x = np.random.permutation(x); y =
    np.random.permutation(y)`), then `fit(x, y)`, `zip(x, y)`,
    `Dataset.from_tensor_slices((x, y))`, `validation_data=(x, y)`,
    `train_test_split(x, y)` or `x[i:j]` with `y[i:j]` in one block. Reported
    at the second shuffle. "One after the other" is at most 16 statements
    apart, and the use is read in the 64 statements after the second shuffle
    in its block and in each enclosing one (`semantic.shuffles`): the reading
    stays linear in the file.

    Not flagged: one permutation indexing both (`idx =
    np.random.permutation(n); x, y = x[idx], y[idx]`), `sklearn.utils.shuffle(x,
    y)`, the stream reseeded or its state restored between the two
    (`np.random.seed(s)`, `set_state`, `keras.utils.set_random_seed`, a call
    whose name speaks of a seed or state): equal-length arrays then get the same
    permutation; one array shuffled alone; two arrays never used together (two
    splits shuffled each on its own, merely returned together); shuffles in
    different branches or blocks; two different generators. Like every rule,
    it reads only files that name TensorFlow or Keras (or that such a module
    of the project imports). Not told apart: two lists shuffled apart on
    purpose and then zipped or indexed together to pair them at random
    (negatives for a contrastive loss); none was seen on the corpora.

    ## Why is this bad?
    Each shuffle draws its own permutation, so after the second one row `i` of
    `x` no longer has its label at `y[i]`: the model trains on labels that are
    noise and nothing fails. Measured (NumPy 2.4.6, a perfectly separable
    two-class problem of 1000 points, nearest-class-mean classifier fitted and
    scored on the pairs): accuracy 0.999 unshuffled, 0.534 after
    `np.random.shuffle` twice, 0.514 with `default_rng().shuffle` or
    `RandomState.shuffle` twice, 0.525 with `random.shuffle` twice, 0.527 with
    `np.random.permutation` twice; 0.999 with one permutation indexing both,
    and 0.999 when `np.random.seed(s)` (or `random.seed(s)`) precedes each
    shuffle.

    ## Example
    ```python
    np.random.shuffle(x_train)
    np.random.shuffle(y_train)
    model.fit(x_train, y_train, epochs=5)
    ```

    Use instead:
    ```python
    order = np.random.permutation(len(x_train))
    x_train, y_train = x_train[order], y_train[order]
    model.fit(x_train, y_train, epochs=5)
    ```

    ## Fix safety
    Unsafe: it saves the stream's state before the first shuffle and restores
    it before the second (`shuffle_state = np.random.get_state()` ...
    `np.random.set_state(shuffle_state)`; `random.getstate`/`setstate`,
    a `RandomState`'s or `random.Random`'s own, `rng.bit_generator.state` of
    a `default_rng()` generator), so the second array gets the first's
    permutation when the two have the same length (the usual case: rows and
    their labels). The first array's order is unchanged; the second's changes
    (that is the fix), and the stream after the second shuffle is where the
    first left it, so later draws from it differ from before. Both shuffles
    stay in place, on the same objects. Offered only when both statements are
    in a block of their own lines and a name `shuffle_state` (or `shuffle_state_2`...) is free in the file.

    ## Measured effect
    NumPy 2.4.6 (examples/TFG609, TF 2.21 CPU, Keras 3.15: a Dense classifier
    on a separable problem, both arrays shuffled before `fit`): before, the
    training accuracy stays near chance; after, near 1 (fixes-behaviour).
    """

    code = "TFG609"
    name = "features-labels-shuffled-apart"
    message = "The labels are shuffled by another permutation than the rows"
    needs = (("shuffle", "permutation"),)
    fix_safety = Safety.UNSAFE
    reads_index = ("Call",)

    def visit_Module(self, node: cst.Module, ctx) -> None:
        blocks: Dict[int, Tuple[cst.CSTNode, ScopeInfo, List[Tuple[Tuple[int, int], Shuffle]]]] = {}
        for call, scope in ctx.model.index.get("Call", ()):
            func = call.func
            name = func.attr.value if isinstance(func, cst.Attribute) else \
                func.value if isinstance(func, cst.Name) else ""
            if name not in ("shuffle", "permutation"):
                continue
            placed = place(call, scope)
            if placed is None:
                continue
            block, position, statement = placed
            found = shuffle_of(statement, scope, ctx)
            if found is not None:
                blocks.setdefault(id(block), (block, scope, []))[2].append((position, found))
        for block, scope, shuffles in blocks.values():
            shuffles.sort(key=lambda item: item[0])
            reported = set()
            for i, (first_at, first) in enumerate(shuffles):
                for second_at, second in shuffles[i + 1:]:
                    if second_at[0] - first_at[0] > NEAR:
                        break  # one after the other: not shuffles far apart in a long block
                    if id(second.statement) in reported or second.array == first.array \
                            or second.stream != first.stream:
                        continue
                    if any(reseeds(s, first, ctx, scope) or rebinds(s, first.array, ctx)
                           or rebinds(s, second.array, ctx) for s in between(block, first_at, second_at)):
                        continue
                    if used_together(first.array, second.array, after(block, second_at, scope), ctx, scope) is None:
                        continue
                    reported.add(id(second.statement))
                    ctx.report(second.call,
                               f"`{second.array}` is shuffled by another permutation than `{first.array}`: "
                               f"their rows no longer match",
                               self._fix(block, first_at, first, second_at, second, scope, ctx))

    def _fix(self, block: cst.CSTNode, first_at: Tuple[int, int], first: Shuffle,
             second_at: Tuple[int, int], second: Shuffle, scope: ScopeInfo, ctx) -> Optional[Fix]:
        if first_at[1] or second_at[1]:
            return None
        lines = block.body
        if len(lines[first_at[0]].body) != 1 or len(lines[second_at[0]].body) != 1:
            return None
        state = next(name for name in (_STATE_NAME, *(f"{_STATE_NAME}_{i}" for i in range(2, 100)), "")
                     if not name or name not in ctx.model.source)
        if not state:
            return None
        calls = _state_calls(first, state, scope, ctx)
        if calls is None:
            return None
        save, restore = calls
        body = list(lines)
        body[second_at[0]] = body[second_at[0]].with_changes(leading_lines=[])
        body.insert(second_at[0], cst.parse_statement(restore))
        body[first_at[0]] = body[first_at[0]].with_changes(leading_lines=[])
        body.insert(first_at[0], cst.parse_statement(save).with_changes(leading_lines=lines[first_at[0]].leading_lines))
        return Fix("Restore the random state before the second shuffle (one permutation for both)",
                   Safety.UNSAFE, {block: block.with_changes(body=body)})


def _state_calls(shuffle: Shuffle, state: str, scope: ScopeInfo, ctx) -> Optional[Tuple[str, str]]:
    """The statements saving and restoring the state ``shuffle`` draws from, as written here."""
    func = shuffle.call.func
    if shuffle.generator is None:
        methods = _STATE_CALLS.get(shuffle.stream)
        if methods is None:
            return None
        if isinstance(func, cst.Attribute):
            owner = cst.Module([]).code_for_node(func.value)
        else:  # from numpy.random import shuffle: spell the module as the file does
            return None
        get, set_ = methods
        return f"{state} = {owner}.{get}()\n", f"{owner}.{set_}({state})\n"
    binding = ctx.assigned(shuffle.generator, shuffle.call, scope)
    qualname = ctx.qualname(binding.values[0].func, binding.scope)
    name = shuffle.generator
    if qualname in _GENERATOR_STATE:
        get, set_ = _GENERATOR_STATE[qualname]
        return f"{state} = {name}.{get}()\n", f"{name}.{set_}({state})\n"
    return (f"{state} = {name}.bit_generator.state\n",
            f"{name}.bit_generator.state = {state}\n")


FeaturesLabelsShuffledApart.cases = [
    flagged(
        """
        import numpy as np
        import tensorflow as tf

        x = np.arange(40.0).reshape(20, 2)
        y = np.arange(20)
        np.random.shuffle(x)
        np.random.shuffle(y)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
        """,
        """
        import numpy as np
        import tensorflow as tf

        x = np.arange(40.0).reshape(20, 2)
        y = np.arange(20)
        shuffle_state = np.random.get_state()
        np.random.shuffle(x)
        np.random.set_state(shuffle_state)
        np.random.shuffle(y)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
        """,
        at=[(7, 1, "`y` is shuffled by another permutation than `x`: their rows no longer match")],
        run="aligned = float(np.mean(x[:, 0] == 2 * y))",
        effect=CHANGES,
        note="row i of x is (2i, 2i+1) and its label i: after the fix every row keeps its label (aligned 1.0)",
    ),
    flagged(
        """
        import numpy as np
        import tensorflow as tf

        def batches(features, labels, size):
            rng = np.random.default_rng(0)
            rng.shuffle(features)
            rng.shuffle(labels)
            for start in range(0, len(features), size):
                yield features[start:start + size], labels[start:start + size]
        """,
        """
        import numpy as np
        import tensorflow as tf

        def batches(features, labels, size):
            rng = np.random.default_rng(0)
            shuffle_state = rng.bit_generator.state
            rng.shuffle(features)
            rng.bit_generator.state = shuffle_state
            rng.shuffle(labels)
            for start in range(0, len(features), size):
                yield features[start:start + size], labels[start:start + size]
        """,
        at=[(7, 5, "`labels` is shuffled by another permutation than `features`")],
        run="aligned = float(np.mean([np.all(a[:, 0] == 2 * b) for a, b in "
            "batches(np.arange(40.0).reshape(20, 2), np.arange(20), 5)]))",
        effect=CHANGES,
        note="a Generator: its state is bit_generator.state; index-aligned slices",
    ),
    flagged(
        """
        import random
        import tensorflow as tf

        def pairs(paths, classes):
            random.shuffle(paths)
            random.shuffle(classes)
            return list(zip(paths, classes))

        def splits(x, y, model):
            gen = __import__("numpy").random.RandomState(3)
            x = gen.permutation(x)
            y = gen.permutation(y)
            model.fit(x, y, epochs=1)
        """,
        """
        import random
        import tensorflow as tf

        def pairs(paths, classes):
            shuffle_state = random.getstate()
            random.shuffle(paths)
            random.setstate(shuffle_state)
            random.shuffle(classes)
            return list(zip(paths, classes))

        def splits(x, y, model):
            gen = __import__("numpy").random.RandomState(3)
            x = gen.permutation(x)
            y = gen.permutation(y)
            model.fit(x, y, epochs=1)
        """,
        at=[(6, 5, "`classes` is shuffled by another permutation than `paths`")],
        run="aligned = float(sum(p == f'img{c}' for p, c in pairs([f'img{i}' for i in range(30)], "
            "list(range(30)))) / 30)",
        effect=CHANGES,
        note="random.shuffle of two lists, then zip; a generator the file does not name by import is not read",
    ),
    flagged(
        """
        import numpy as np
        import tensorflow as tf

        def train(model, x, y):
            state = np.random.RandomState(0)
            x = state.permutation(x)
            y = state.permutation(y)
            model.fit(x=x, y=y, validation_split=0.1)
        """,
        """
        import numpy as np
        import tensorflow as tf

        def train(model, x, y):
            state = np.random.RandomState(0)
            shuffle_state = state.get_state()
            x = state.permutation(x)
            state.set_state(shuffle_state)
            y = state.permutation(y)
            model.fit(x=x, y=y, validation_split=0.1)
        """,
        at=[(7, 9, "`y` is shuffled by another permutation than `x`")],
        run="""
        class _Model:
            def fit(self, x, y, validation_split):
                self.aligned = float(np.mean(x[:, 0] == 2 * y))
        _model = _Model()
        train(_model, np.arange(40.0).reshape(20, 2), np.arange(20))
        aligned = _model.aligned
        """,
        effect=CHANGES,
        note="RandomState.permutation of each array, then fit(x=, y=)",
    ),
    flagged(
        """
        import random
        import tensorflow as tf

        def split(features, labels):
            r = random.Random(4)
            # shuffle both
            r.shuffle(features)
            r.shuffle(labels)
            cut = int(len(features) * 0.75)
            return features[:cut], labels[:cut]
        """,
        """
        import random
        import tensorflow as tf

        def split(features, labels):
            r = random.Random(4)
            # shuffle both
            shuffle_state = r.getstate()
            r.shuffle(features)
            r.setstate(shuffle_state)
            r.shuffle(labels)
            cut = int(len(features) * 0.75)
            return features[:cut], labels[:cut]
        """,
        at=[(8, 5, "`labels` is shuffled by another permutation than `features`")],
        run="aligned = float(sum(a == f'i{b}' for a, b in zip(*split([f'i{k}' for k in range(40)], "
            "list(range(40))))) / 30)",
        effect=CHANGES,
        note="a random.Random generator; the same slice of both (the split of a torch script seen in public "
             "code: features[:n], labels[:n] after two shuffles); the comment stays above the first shuffle",
    ),
    clean(
        """
        import random
        import numpy as np
        import tensorflow as tf
        from sklearn.utils import shuffle

        def one_permutation(x, y, model):
            idx = np.random.permutation(len(x))
            x, y = x[idx], y[idx]
            model.fit(x, y)

        def together(x, y, model):
            x, y = shuffle(x, y)
            model.fit(x, y)

        def reseeded(x, y, model, seed):
            np.random.seed(seed)
            np.random.shuffle(x)
            np.random.seed(seed)
            np.random.shuffle(y)
            model.fit(x, y)

        def restored(x, y, model):
            saved = random.getstate()
            random.shuffle(x)
            random.setstate(saved)
            random.shuffle(y)
            return list(zip(x, y))
        """,
        note="one permutation indexing both; sklearn's shuffle of both; the stream reseeded or restored "
             "before each shuffle (0.999 accuracy, measured)",
    ),
    clean(
        """
        import numpy as np
        import tensorflow as tf

        def single(data, model):
            np.random.shuffle(data)
            model.fit(data[:, :-1], data[:, -1])

        def splits(train_files, val_files):
            np.random.shuffle(train_files)
            np.random.shuffle(val_files)
            return train_files, val_files

        def branches(x, y, model, first):
            if first:
                np.random.shuffle(x)
            else:
                np.random.shuffle(y)
            model.fit(x, y)

        def generators(x, y, model):
            a = np.random.default_rng(1)
            b = np.random.default_rng(1)
            a.shuffle(x)
            b.shuffle(y)
            model.fit(x, y)

        def rebound(x, y, model):
            np.random.shuffle(x)
            y = x[:, 0]
            np.random.shuffle(y)
            model.fit(x, y)
        """,
        note="one array (labels in its last column); two splits never used together; different branches; "
             "two generators (same seed: the same permutation); a label array made after the first shuffle",
    ),
]
