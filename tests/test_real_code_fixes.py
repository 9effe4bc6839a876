"""Fixes that were wrong on real code (issue 15), each pinned by what --fix writes."""
from __future__ import annotations

import textwrap


from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.findings import Safety
from tflint_gpu.rules.base import REGISTRY, all_rules

list(all_rules())
TFG901, TFG902 = (REGISTRY[code] for code in ("TFG901", "TFG902"))


def source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def fixed(text: str, rules, unsafe: bool = False) -> str:
    return fix_source(source(text), "case.py", rules, unsafe=unsafe).source


# -- TFG901: a rename is safe only when every argument survives ------------------

def test_lr_rename_is_not_safe_when_keras3_would_drop_decay():
    code = source("""
        import tensorflow as tf

        opt = tf.keras.optimizers.SGD(lr=0.2, momentum=0.9, decay=0.01)
    """)
    [finding] = lint_source(code, "case.py", [TFG901]).findings
    assert finding.fix is not None and finding.fix.safety is Safety.UNSAFE
    assert "Keras 3 ignores `decay=`" in finding.message
    assert fixed(code, [TFG901]) == code  # --fix alone leaves it failing loudly
    # --unsafe-fixes: the decay Keras 2 applied becomes the schedule that reproduces it (Keras 3 would
    # ignore a kept `decay=`); tests/test_decay_schedule.py runs both.
    assert "SGD(learning_rate=keras.optimizers.schedules.InverseTimeDecay(0.2, decay_steps=1, decay_rate=0.01), " \
           "momentum=0.9)" in fixed(code, [TFG901], unsafe=True)


def test_lr_rename_stays_safe_when_nothing_is_lost():
    code = """
        import tensorflow as tf

        a = tf.keras.optimizers.SGD(lr=0.2, momentum=0.9, decay=None)
        b = tf.keras.optimizers.Adam(lr=0.2, decay=0, clipnorm=1.0)
        c = tf.keras.optimizers.Adam(lr=0.2, **options)
    """
    assert fixed(code, [TFG901]) == source("""
        import tensorflow as tf

        a = tf.keras.optimizers.SGD(learning_rate=0.2, momentum=0.9, decay=None)
        b = tf.keras.optimizers.Adam(learning_rate=0.2, decay=0, clipnorm=1.0)
        c = tf.keras.optimizers.Adam(lr=0.2, **options)
    """)
    messages = [f.message for f in lint_source(source(code), "case.py", [TFG901]).findings]
    assert "`**` arguments may hold `decay=`" in messages[2]


# -- TFG902 (and TFG901): version comparisons guard like hasattr ---------------

def test_the_fallback_branch_of_a_version_comparison_is_left_alone():
    code = source("""
        import tensorflow as tf

        policy = tf.keras.mixed_precision.global_policy() if tf_version >= (2, 4, 0) \\
            else tf.keras.mixed_precision.experimental.global_policy()
        if tf_version < (2, 4, 0):
            opt = tf.keras.optimizers.SGD(lr=0.1)
    """)
    assert lint_source(code, "case.py", [TFG901, TFG902]).findings == []
    assert fixed(code, [TFG901, TFG902], unsafe=True) == code


def test_the_branch_that_runs_under_keras3_is_still_fixed():
    code = """
        import tensorflow as tf

        policy = tf.keras.mixed_precision.experimental.global_policy() if tf_version >= (2, 4, 0) else None
        if tf_version >= (2, 4, 0):
            opt = tf.keras.optimizers.SGD(lr=0.1)
        other = tf.keras.mixed_precision.experimental.global_policy()
    """
    assert fixed(code, [TFG901, TFG902]) == source("""
        import tensorflow as tf

        policy = tf.keras.mixed_precision.global_policy() if tf_version >= (2, 4, 0) else None
        if tf_version >= (2, 4, 0):
            opt = tf.keras.optimizers.SGD(learning_rate=0.1)
        other = tf.keras.mixed_precision.global_policy()
    """)


def test_an_except_fallback_for_old_releases_is_left_alone():
    code = source("""
        import tensorflow as tf

        try:
            policy = tf.keras.mixed_precision.global_policy()
        except AttributeError:
            policy = tf.keras.mixed_precision.experimental.global_policy()
    """)
    assert fixed(code, [TFG902]) == code
