"""Property tests: every import spelling resolves alike, fixes parse and are idempotent."""
from __future__ import annotations

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import all_rules

RULES = list(all_rules())

TF_SPELLINGS = [
    ("import tensorflow as tf", "tf."),
    ("import tensorflow as tfl", "tfl."),
    ("import tensorflow", "tensorflow."),
    ("import tensorflow.compat.v2 as tf", "tf."),
]
NP_SPELLINGS = [
    ("import numpy as np", "np."),
    ("import numpy", "numpy."),
    ("import numpy as onp", "onp."),
]
CREATORS = [
    ("zeros({shape})", "float64"),
    ("ones({shape})", "float64"),
    ("zeros({shape}, dtype={np}float32)", "float32"),
    ("ones({shape}, dtype='int32')", "int32"),
    ("eye(4)", "float64"),
    ("arange(7)", "int64"),
    ("arange(0.0, 3.0, 0.5)", "float64"),
    ("full({shape}, 2)", "int64"),
]
CONVERTERS = ["constant", "convert_to_tensor", "Variable"]
SHAPES = ["3", "(2, 3)", "[4, 5]", "(n, n)"]


@settings(max_examples=60, deadline=None)
@given(
    tf_spelling=st.sampled_from(TF_SPELLINGS),
    np_spelling=st.sampled_from(NP_SPELLINGS),
    creator=st.sampled_from(CREATORS),
    converter=st.sampled_from(CONVERTERS),
    shape=st.sampled_from(SHAPES),
    in_function=st.booleans(),
)
def test_numpy_creation_is_found_and_fixed_in_every_spelling(
    tf_spelling, np_spelling, creator, converter, shape, in_function
):
    (tf_import, tf_prefix), (np_import, np_prefix) = tf_spelling, np_spelling
    template, dtype = creator
    call = f"{np_prefix}{template.format(shape=shape, np=np_prefix)}"
    line = f"x = {tf_prefix}{converter}({call})"
    # In a loop: the conversion runs repeatedly (TFG201; one-time ones are TFG202's, off by default).
    body = (f"def build(n):\n    for _ in range(2):\n        {line}\n    return x\n" if in_function
            else f"n = 3\nfor _ in range(2):\n    {line}\n")
    source = f"{tf_import}\n{np_import}\n\n{body}"
    findings = lint_source(source, "p.py", RULES).findings
    assert [f.code for f in findings] == ["TFG201"]
    fixed = fix_source(source, "p.py", RULES, unsafe=True).source
    cst.parse_module(fixed)
    assert f"dtype={tf_prefix}{dtype}" in fixed
    assert np_prefix not in fixed.split("\n", 2)[2].replace(np_import, "")  # no NumPy call left
    assert fix_source(fixed, "p.py", RULES, unsafe=True).source == fixed
    assert lint_source(fixed, "p.py", RULES).findings == []


DECORATORS = [
    ("import tensorflow as tf", "@tf.function"),
    ("import tensorflow as tfl", "@tfl.function(reduce_retracing=True)"),
    ("from tensorflow import function", "@function"),
    ("from tensorflow import function as tff", "@tff"),
    ("import tensorflow as tf", "@tf.compat.v2.function"),
]


@settings(max_examples=40, deadline=None)
@given(decorator=st.sampled_from(DECORATORS), via_helper=st.booleans(), numpy_call=st.booleans())
def test_numpy_in_graph_is_found_through_every_tf_function_spelling(decorator, via_helper, numpy_call):
    tf_import, deco = decorator
    expr = "np.mean(t)" if numpy_call else "t.numpy()"
    if via_helper:
        body = f"def helper(t):\n    return {expr}\n\n\n{deco}\ndef f(t):\n    return helper(t)\n"
    else:
        body = f"{deco}\ndef f(t):\n    return {expr}\n"
    source = f"{tf_import}\nimport numpy as np\n\n\n{body}"
    codes = [f.code for f in lint_source(source, "p.py", RULES).findings]
    assert codes.count("TFG101") == 1
    fixed = fix_source(source, "p.py", RULES, unsafe=True).source
    cst.parse_module(fixed)
    assert fix_source(fixed, "p.py", RULES, unsafe=True).source == fixed
    assert "TFG101" not in [f.code for f in lint_source(fixed, "p.py", RULES).findings]
