"""semantic/ordering.py: datasets listed class by class that nothing shuffles."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse

CODE = cst.Module(body=[]).code_for_node


def _grouped(source: str):
    """{name read by `use(name)` at module level: code of the grouped source or None}."""
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    scope = ctx.model.root
    out = {}
    for call in scope.calls:
        if isinstance(call.func, cst.Name) and call.func.value == "use":
            arg = call.args[0].value
            found = ctx.ordering.grouped(arg, scope)
            out[CODE(arg)] = None if found is None else CODE(found.source.func).rsplit(".", 1)[-1] + (
                " (batches shuffled)" if found.batch_shuffle is not None else "")
    return out


def test_grouped_sources_through_order_keeping_stages_names_and_returns():
    assert _grouped("""
        import keras
        import tensorflow as tf
        from tensorflow.keras.preprocessing import image_dataset_from_directory

        def load():
            ds = tf.data.Dataset.list_files("root/*/*.jpg", shuffle=False)
            ds = ds.interleave(tf.data.TFRecordDataset)
            return ds.batch(8)

        a = keras.utils.text_dataset_from_directory("t", shuffle=False).map(len).cache().prefetch(2)
        b = image_dataset_from_directory("i", shuffle=False, labels="inferred")
        c = load().repeat()
        use(a); use(b); use(c)
    """) == {"a": "text_dataset_from_directory", "b": "image_dataset_from_directory", "c": "list_files"}


def test_a_shuffle_an_unknown_stage_or_source_or_a_flat_pattern_is_no_answer():
    assert _grouped("""
        import keras
        import tensorflow as tf

        a = keras.utils.image_dataset_from_directory("i", shuffle=False, batch_size=None).shuffle(4)
        b = keras.utils.image_dataset_from_directory("i", shuffle=flag())
        c = keras.utils.image_dataset_from_directory("i")
        d = tf.data.Dataset.list_files("shards/*.tfrecord", shuffle=False)
        e = tf.data.Dataset.zip((keras.utils.image_dataset_from_directory("i", shuffle=False),))
        f = keras.utils.image_dataset_from_directory("i", shuffle=False, labels=None)
        g = keras.utils.image_dataset_from_directory("i", shuffle=False).concatenate(a)
        use(a); use(b); use(c); use(d); use(e); use(f); use(g)
    """) == dict.fromkeys("abcdefg")


def test_a_name_bound_to_a_literal_false_is_read():
    assert _grouped("""
        import keras

        SHUFFLE = False
        x = keras.utils.image_dataset_from_directory("i", shuffle=SHUFFLE)
        use(x)
    """) == {"x": "image_dataset_from_directory"}


def test_a_shuffle_parameter_every_call_fills_with_false():
    assert _grouped("""
        import keras

        def make(path, mode, shuffle=True):
            return keras.utils.image_dataset_from_directory(path, subset=mode, shuffle=shuffle)

        def other(path, shuffle):
            return keras.utils.image_dataset_from_directory(path, shuffle=shuffle)

        a = make("d", "training", shuffle=False)
        b = make("d", "validation", shuffle=False)
        c = other("d", True)
        d = other("d", False)
        use(a); use(c)
    """) == {"a": "image_dataset_from_directory", "c": None}


def test_a_shuffle_of_whole_batches_does_not_mix_the_classes():
    assert _grouped("""
        import keras
        import tensorflow as tf

        a = keras.utils.image_dataset_from_directory("i", shuffle=False).shuffle(1000)
        b = keras.utils.image_dataset_from_directory("i", shuffle=False).unbatch().shuffle(1000).batch(32)
        c = tf.data.Dataset.list_files("d/*/*.png", shuffle=False).batch(8).shuffle(4)
        d = tf.data.Dataset.list_files("d/*/*.png", shuffle=False).shuffle(4).batch(8)
        use(a); use(b); use(c); use(d)
    """) == {"a": "image_dataset_from_directory (batches shuffled)", "b": None,
             "c": "list_files (batches shuffled)", "d": None}
