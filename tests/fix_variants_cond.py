"""TFG102 variants: each `tf.cond` / `logical_*` form x each place AutoGraph is off.

The original raises at trace time; the fixed code must compute what the
original computes when run eagerly (``effect="fixes-error"``).
"""
from __future__ import annotations

import itertools
from typing import Iterator

from fix_execution import Variant

# Bodies of a function of a tensor `x` (4-space indented, `tf` imported).
FORMS = {
    "if-else-one-name": """
    if tf.reduce_sum(x) > 0:
        y = x * 2.0
    else:
        y = x - 1.0
    return y
""",
    "if-else-two-names-other-order": """
    if tf.reduce_sum(x) > 0:
        y = x * 2.0
        s = tf.reduce_max(x)
    else:
        s = tf.reduce_min(x)
        y = -x
    return y * s
""",
    "if-without-else-rebinds": """
    if tf.reduce_max(x) > 1.0:
        x = x / tf.reduce_max(x)
    return x
""",
    "if-without-else-reads-itself": """
    y = x + 1.0
    if tf.reduce_mean(y) < 2.0:
        y = y * 10.0
    return y
""",
    "return-both": """
    if tf.reduce_sum(x) >= 0:
        return tf.sqrt(tf.abs(x))
    else:
        return tf.square(x)
""",
    "return-in-elif-free-if": """
    if tf.reduce_sum(x) > 0: return x * 3.0
    else: return x
""",
    "ifexp": """
    return x * 2.0 if tf.reduce_sum(x) > 0 else tf.abs(x)
""",
    "ifexp-nested": """
    return x if tf.reduce_min(x) > 0 else (x * 0.5 if tf.reduce_max(x) > 0 else -x)
""",
    "and": """
    return tf.reduce_min(x) > -5.0 and tf.reduce_max(x) < 5.0
""",
    "or": """
    return tf.reduce_min(x) > 0.0 or tf.reduce_max(x) > 3.0
""",
    "not-or": """
    return not (tf.reduce_max(x) > 1.5 or tf.reduce_min(x) < -1.5)
""",
    # An if whose test is and/or/not of comparisons: tf.cond needs tf.logical_* there, since Python's
    # `and` still calls bool() on a tensor inside tf.cond's first argument.
    "if-test-and": """
    if tf.reduce_min(x) > -2.0 and tf.reduce_max(x) < 3.0:
        y = x * 2.0
    else:
        y = x - 1.0
    return y
""",
    "if-test-or-not": """
    if tf.reduce_sum(x) > 1.0 or not tf.reduce_min(x) > -0.5:
        return tf.abs(x)
    else:
        return x * 3.0
""",
    "ifexp-test-or": """
    return x * 2.0 if (tf.reduce_max(x) > 3.0 or tf.reduce_min(x) < -2.0) else x + 1.0
""",
}
INPUTS = ("[1.0, 2.0]", "[-1.0, -3.0]", "[0.5, -0.25]", "[4.0, 0.0]")
RUN = "\n".join(f"r{i} = CALL(tf.constant({value}))" for i, value in enumerate(INPUTS))

CONTEXTS = {
    "decorator": ("import tensorflow as tf\n\n@tf.function(autograph=False)\ndef f(x):{body}", "f"),
    "wrapper": ("import tensorflow as tf\n\ndef g(x):{body}\nf = tf.function(g, autograph=False)\n", "f"),
    "keras3-call": ("import keras\nimport tensorflow as tf\n\nclass L(keras.layers.Layer):\n"
                    "    def call(self, x):{indented}\n\nf = tf.function(L())\n", "f"),
    "tf-keras-call-from-autograph-off": (
        "import tensorflow as tf\nfrom tensorflow import keras\n\nclass L(keras.layers.Layer):\n"
        "    def call(self, x):{indented}\n\nlayer = L()\nf = tf.function(lambda x: layer(x), autograph=False)\n", "f"),
}


def variants() -> Iterator[Variant]:
    for (form, body), (where, (template, call)) in itertools.product(FORMS.items(), CONTEXTS.items()):
        indented = "".join("    " + line if line.strip() else line for line in body.splitlines(True))
        code = template.format(body=body.rstrip() + "\n", indented=indented.rstrip() + "\n")
        yield Variant(f"{form}-{where}", code, ("TFG102",), "fixes-error", run=RUN.replace("CALL", call))
