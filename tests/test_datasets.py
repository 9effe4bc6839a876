"""Dataset inference (``GraphAnalysis.is_dataset``) and tf.data chains across statements.

Each source marks expressions with ``yes(expr)`` (a ``tf.data.Dataset``) or
``no(expr)`` (not one, or not known to be one: the engine errs toward silence).
"""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.datasets import chains, method
from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.rules.base import REGISTRY


def verdicts(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = build_model(module, ["Call"])
    graphs = GraphAnalysis(model, Resolver())
    graphs.run()
    found = []
    for call, scope in model.index["Call"]:
        if isinstance(call.func, cst.Name) and call.func.value in ("yes", "no"):
            expr = call.args[0].value
            found.append((module.code_for_node(expr), call.func.value == "yes", graphs.is_dataset(expr, scope)))
    return found


def check(source: str) -> None:
    found = verdicts(source)
    assert found, "no probe in the source"
    wrong = [f"{'yes' if want else 'no'}({text})" for text, want, got in found if want != got]
    assert not wrong, f"wrong verdicts: {wrong}"


# -- parameters annotated as datasets ------------------------------------------
def test_a_parameter_annotated_as_a_dataset_is_one_in_any_spelling():
    check(
        """
        import tensorflow as tf
        import tensorflow as tfx
        import tensorflow.compat.v2 as tf2
        from tensorflow import data
        from tensorflow import data as tf_data
        from tensorflow.data import Dataset
        from tensorflow.data import Dataset as DS

        def a(ds: tf.data.Dataset, d1: tfx.data.Dataset, d2: tf2.data.Dataset, d3: data.Dataset,
              d4: tf_data.Dataset, d5: Dataset, d6: DS, d7: tf.data.TFRecordDataset,
              d8: "tf.data.Dataset", d9: tf.data.Dataset = None, *, d10: tf.data.Dataset):
            yes(ds); yes(d1); yes(d2); yes(d3); yes(d4); yes(d5); yes(d6); yes(d7); yes(d8); yes(d9); yes(d10)
            yes(ds.map(lambda x: x).batch(2))

        class Pipeline:
            def build(self, ds: tf.data.Dataset, training: bool):
                no(self); no(training)
                yes(ds)
        """
    )


def test_look_alikes_of_dataset_annotations_are_not_datasets():
    check(
        """
        import tensorflow as tf
        import torch
        import datasets

        class Dataset:
            pass

        def a(plain, n: int, options: tf.data.Options, spec: tf.data.DatasetSpec, it: tf.data.Iterator,
              t: torch.utils.data.Dataset, hf: datasets.Dataset, local: Dataset, text: "Dataset",
              *many: tf.data.Dataset, **named: tf.data.Dataset):
            no(plain); no(n); no(options); no(spec); no(it); no(t); no(hf); no(local); no(text)
            no(many); no(named)

        def c(ds: tf.data.Dataset):
            def inner(ds):
                no(ds)
        """
    )


# -- functions that return datasets (one level) --------------------------------
def test_the_result_of_a_same_module_function_whose_returns_are_all_datasets():
    check(
        """
        import tensorflow as tf

        def make(n):
            ds = tf.data.Dataset.range(n)
            if n > 3:
                ds = ds.shuffle(4)
            return ds.batch(2)

        def choose(n):
            if n:
                return tf.data.Dataset.range(n)
            else:
                return tf.data.Dataset.from_tensor_slices([1, 2])

        def preprocess(ds: tf.data.Dataset):
            return ds.map(lambda x: x + 1)

        def annotated(path) -> tf.data.Dataset:
            return load_somehow(path)

        class Loader:
            def build(self):
                return tf.data.Dataset.range(3)

            def use(self):
                yes(self.build())
                yes(self.build().map(lambda x: x))

        raw = tf.data.Dataset.range(3)
        yes(make(3)); yes(make(3).prefetch(1)); yes(choose(2)); yes(preprocess(raw)); yes(annotated("p"))
        ds = make(4)
        yes(ds)
        """
    )


def test_a_helper_transforming_the_dataset_it_is_given_returns_one_for_that_argument():
    """A TFRecord loader handing its dataset through two helpers (sayakpaul/Adaptive-Gradient-Clipping)."""
    check(
        """
        import tensorflow as tf

        def resize(dataset, size=(96, 96)):
            dataset = dataset.map(lambda x: tf.image.resize(x, size))
            return dataset

        def load(filenames):
            dataset = tf.data.TFRecordDataset(filenames)
            dataset = resize(dataset)
            return dataset

        class Pipeline:
            def augment(self, ds, flip):
                return ds.map(lambda x: x)

            def train(self, files):
                yes(self.augment(load(files), True))
                no(self.augment(files, True))

        frame = read_table("t.csv")
        yes(load(["a.tfrecord"])); yes(load(["a"]).repeat().shuffle(8))
        yes(resize(tf.data.Dataset.range(3)))
        no(resize(frame)); no(resize([1, 2]))
        yes(resize(tf.data.Dataset.range(3)))
        """
    )


def test_names_that_spell_the_inferences_own_markers_change_nothing():
    check(
        """
        import tensorflow as tf

        def wrap(following):
            assumed = following.map(lambda x: x)
            return assumed

        def wrap2(assumed):
            following = wrap(assumed)
            return following

        def wrap3(following):
            return wrap2(following)

        yes(wrap3(tf.data.Dataset.range(3)))
        yes(wrap2(tf.data.Dataset.range(3)))
        """
    )


def test_functions_that_may_return_something_else_are_not_followed():
    check(
        """
        import tensorflow as tf

        def maybe(n):
            if n:
                return tf.data.Dataset.range(n)
            return None

        def falls_through(n):
            if n:
                return tf.data.Dataset.range(n)

        def generator(n):
            yield tf.data.Dataset.range(n)
            return tf.data.Dataset.range(n)

        def listing(n):
            return [tf.data.Dataset.range(n)]

        def numbers(n):
            return list(range(n))

        def make(n):
            return tf.data.Dataset.range(n)

        def wrapper(n):
            return make(n)

        def wrapper2(n):
            return wrapper(n)

        def wrapper3(n):
            return wrapper2(n)

        def recursive(n):
            return recursive(n - 1)

        def ping(n):
            return pong(n)

        def pong(n):
            return ping(n)

        def annotated(n) -> list:
            return [n]

        no(maybe(1)); no(falls_through(1)); no(generator(1)); no(listing(1)); no(numbers(1))
        no(recursive(1)); no(ping(1)); no(annotated(1)); no(make); no(undefined(1))
        yes(wrapper(1)); yes(wrapper2(1)); yes(wrapper3(1))  # returns are followed through wrappers
        """
    )


# -- tensorflow_datasets -----------------------------------------------------
def test_tfds_load_returns_a_dataset_a_list_or_a_dict_as_its_split_says():
    check(
        """
        import tensorflow_datasets as tfds

        ds = tfds.load("mnist", split="train", as_supervised=True)
        yes(ds)
        yes(tfds.load("mnist", split="train[:80%]", shuffle_files=True))
        yes(tfds.load("mnist", split=tfds.Split.TRAIN))
        yes(tfds.load("mnist", split="train", batch_size=32))

        train, test = tfds.load("mnist", split=["train", "test"], as_supervised=True)
        yes(train); yes(test)
        parts = tfds.load("mnist", split=["train", "test"])
        no(parts); yes(parts[0]); yes(parts[1])
        for part in tfds.load("mnist", split=["train", "test"]):
            yes(part)

        splits = tfds.load("mnist")
        no(splits); yes(splits["train"])
        for key in tfds.load("mnist"):
            no(key)

        ds2, info = tfds.load("mnist", split="train", with_info=True)
        yes(ds2); no(info)
        (tr, te), meta = tfds.load("mnist", split=["train", "test"], with_info=True, as_supervised=True)
        yes(tr); yes(te); no(meta)
        whole = tfds.load("mnist", split="train", with_info=True)
        no(whole); yes(whole[0]); no(whole[1])
        """
    )


def test_tfds_look_alikes_are_not_datasets():
    check(
        """
        import tensorflow_datasets as tfds
        import somewhere

        def f(split, info):
            no(tfds.load("mnist", split=split))
            no(tfds.load("mnist", split="train", with_info=info))
        no(tfds.load("mnist", split="train", batch_size=-1))
        no(tfds.load("mnist", split=["train", "test"]))
        no(tfds.load("mnist", split="train", with_info=True))
        no(tfds.as_numpy(tfds.load("mnist", split="train")))
        no(tfds.builder("mnist"))
        no(somewhere.load("mnist", split="train"))
        a, b = tfds.load("mnist", split="train")
        no(a)
        """
    )


def test_tfds_builder_as_dataset():
    check(
        """
        import tensorflow_datasets as tfds
        import tensorflow_datasets.public_api as tfds_api

        builder = tfds.builder("mnist")
        builder.download_and_prepare()
        yes(builder.as_dataset(split="train"))
        yes(builder.as_dataset("test", as_supervised=True))
        no(builder.as_dataset()); yes(builder.as_dataset()["train"])
        yes(tfds.builder("mnist").as_dataset(split="train"))
        yes(tfds_api.load("mnist", split="train"))

        def g(other):
            no(other.as_dataset(split="train"))
        """
    )


# -- Keras dataset utilities ---------------------------------------------------
def test_keras_dataset_utilities():
    check(
        """
        import keras
        import tensorflow as tf
        from tensorflow.keras.utils import image_dataset_from_directory

        yes(keras.utils.image_dataset_from_directory("d"))
        yes(image_dataset_from_directory("d", validation_split=0.2, subset="training", seed=1))
        yes(tf.keras.preprocessing.image_dataset_from_directory("d"))
        yes(tf.keras.utils.text_dataset_from_directory("d"))
        yes(keras.utils.audio_dataset_from_directory("d"))
        yes(keras.utils.timeseries_dataset_from_array([1, 2, 3], None, 2))
        yes(tf.keras.preprocessing.timeseries_dataset_from_array([1, 2, 3], None, 2))
        yes(keras.utils.image_dataset_from_directory("d", format="tf"))

        both = keras.utils.image_dataset_from_directory("d", validation_split=0.2, subset="both", seed=1)
        no(both); yes(both[0]); yes(both[1])
        train, val = keras.utils.text_dataset_from_directory("d", validation_split=0.2, subset="both", seed=1)
        yes(train); yes(val)
        """
    )


def test_keras_dataset_utility_look_alikes():
    check(
        """
        import keras

        def f(which):
            no(keras.utils.image_dataset_from_directory("d", subset=which))
        no(keras.utils.image_dataset_from_directory("d", validation_split=0.2, subset="both", seed=1))
        no(keras.utils.image_dataset_from_directory("d", format="grain"))
        no(keras.utils.image_dataset_from_directory)
        no(keras.utils.load_img("x.png"))
        no(keras.utils.split_dataset([1, 2], 0.5))
        """
    )


def test_existing_facts_are_kept():
    check(
        """
        import tensorflow as tf
        import pandas as pd

        ds = tf.data.Dataset.range(3)
        yes(ds); yes(ds.map(lambda x: x)); yes(tf.data.TFRecordDataset(["f"]))
        df = pd.DataFrame()
        no(df); no(df.map(str)); no(pd.Series([1]).batch(2))

        def f(param):
            no(param); no(param.map(str))
        """
    )


# -- chains across statements --------------------------------------------------
def links(source: str):
    """(chain, the chain it continues or None) for each chain, as code."""
    module = cst.parse_module(textwrap.dedent(source))
    ctx = analyse(module, [REGISTRY["TFG302"]])
    return [
        (module.code_for_node(c.outermost),
         module.code_for_node(c.previous.outermost) if c.previous is not None else None)
        for c in chains(ctx)
    ]


def test_a_def_or_class_between_statements_keeps_the_chain():
    assert links(
        """
        import tensorflow as tf

        ds = tf.data.Dataset.range(8)
        ds = ds.prefetch(2)

        def double(x):
            return x * 2

        class Other:
            pass

        ds = ds.map(double)
        """
    ) == [("ds.prefetch(2)", None), ("ds.map(double)", "ds.prefetch(2)")]


def test_a_return_continues_the_chain():
    assert links(
        """
        import tensorflow as tf

        def make():
            ds = tf.data.Dataset.range(8).map(lambda x: x + 1)
            ds = ds.cache()
            return ds.take(4)
        """
    ) == [("tf.data.Dataset.range(8).map(lambda x: x + 1)", None),
          ("ds.cache()", "tf.data.Dataset.range(8).map(lambda x: x + 1)"),
          ("ds.take(4)", "ds.cache()")]


@pytest.mark.parametrize("between,last", [
    ("def ds():\n    pass\n", "ds = ds.map(lambda x: x)"),
    ("class ds:\n    pass\n", "ds = ds.map(lambda x: x)"),
    ("", "return other.map(lambda x: x)"),
    ("ds = make()\n", "return ds.map(lambda x: x)"),
])
def test_what_still_cuts_a_chain(between, last):
    body = textwrap.indent("ds = tf.data.Dataset.range(8)\nds = ds.prefetch(2)\n" + between + last + "\n", "    ")
    found = links("import tensorflow as tf\n\ndef f(flag, other: tf.data.Dataset):\n" + body)
    assert all(previous is None for _, previous in found), found


def test_a_tfds_split_held_in_a_name_bound_once_is_one_split():
    check(
        """
        import tensorflow_datasets as tfds

        split = "train"
        yes(tfds.load("mnist", split=split))
        which = "train[:80%]" if fast else "train"
        yes(tfds.load("mnist", split=which))

        def load(part):
            no(tfds.load("mnist", split=part))  # a parameter: maybe a list of splits

        parts = ["train", "test"]
        no(tfds.load("mnist", split=parts))
        again = "train"
        again = ["train", "test"]
        no(tfds.load("mnist", split=again))
        """
    )


def test_calls_that_run_only_under_a_python_flag_of_the_map_function():
    from tflint_gpu.semantic.datasets import flagged_calls, function_calls, map_function

    source = textwrap.dedent("""
        import tensorflow as tf

        class Preprocess:
            def __init__(self, train):
                self._train = train

            def __call__(self, image):
                image = tf.cast(image, tf.float32)
                if self._train:
                    image = tf.image.random_flip_left_right(image)
                    image = self.jitter(image)
                return tf.image.random_brightness(image, 0.1)

            def jitter(self, image):
                return tf.image.random_crop(image, (2, 2, 3))

        def prep(x, training):
            if not training:
                return x
            else:
                return tf.image.random_flip_up_down(x)

        ds = tf.data.Dataset.range(3).map(Preprocess(True))
        other = tf.data.Dataset.range(3).map(lambda x: prep(x, True))
    """)
    ctx = analyse(cst.parse_module(source), [])
    stages = [c for c in chains(ctx)]
    by_call = {}
    for chain in stages:
        stage = chain.stages[-1]
        calls = function_calls(map_function(stage), chain.scope, ctx)
        flagged = flagged_calls(map_function(stage), chain.scope, ctx)
        for call, _scope in calls:
            name = ctx.module.code_for_node(call.func)
            by_call[name] = id(call) in flagged
    assert by_call["tf.cast"] is False and by_call["tf.image.random_brightness"] is False
    assert by_call["tf.image.random_flip_left_right"] is True
    assert by_call["tf.image.random_crop"] is True  # in a helper called only under the flag
    assert by_call["tf.image.random_flip_up_down"] is True  # the else side of `if not training`


# -- one name, several values: the binding live at each read ---------------------------
def chain_facts(source: str):
    """(chain, the chain it continues, its conditions as text, continued?) for each chain."""
    from tflint_gpu.semantic.datasets import continued

    module = cst.parse_module(textwrap.dedent(source))
    ctx = analyse(module, [REGISTRY["TFG302"]])
    scopes = {id(s): i for i, s in enumerate(ctx.model.scopes)}
    in_order = sorted(chains(ctx),
                      key=lambda c: (scopes[id(c.scope)], c.scope.flow_order().pre.get(id(c.outermost), -1)))
    return [
        (module.code_for_node(c.outermost),
         module.code_for_node(c.previous.outermost) if c.previous is not None else None,
         [cond.describe() for cond in c.conditions], continued(c, ctx))
        for c in in_order
    ]


def test_a_stage_under_an_if_joins_the_pipeline_after_it_as_a_conditional_stage():
    assert chain_facts(
        """
        import tensorflow as tf

        def make(x, shuffle, augment):
            ds = tf.data.Dataset.from_tensor_slices(x).batch(32)
            if shuffle:
                ds = ds.shuffle(100)
            if not augment:
                pass
            else:
                ds = ds.map(lambda v: v + 1)
            ds = ds.prefetch(1)
            return ds
        """
    ) == [
        ("tf.data.Dataset.from_tensor_slices(x).batch(32)", None, [], True),
        ("ds.shuffle(100)", "tf.data.Dataset.from_tensor_slices(x).batch(32)", ["`shuffle` is true"], True),
        ("ds.map(lambda v: v + 1)", "ds.shuffle(100)", ["`augment` is true"], True),
        ("ds.prefetch(1)", "ds.map(lambda v: v + 1)", [], False),
    ]


def test_a_stage_under_an_if_on_a_source_that_is_no_chain_and_nested_ifs():
    assert chain_facts(
        """
        import tensorflow as tf

        def make(x, training, mode):
            ds = tf.data.Dataset.from_tensor_slices(x)
            if training:
                if mode == "fast":
                    ds = ds.shuffle(10)
                elif mode == "slow":
                    ds = ds.shuffle(1000)
            return ds.batch(2)
        """
    ) == [
        ("ds.shuffle(10)", None, ["`training` is true", '`mode == "fast"` is true'], True),
        ("ds.shuffle(1000)", None, ["`training` is true", '`mode == "fast"` is false',
                                    '`mode == "slow"` is true'], True),
        ("ds.batch(2)", None, [], False),  # three bindings reach it: alternatives, not one pipeline
    ]


@pytest.mark.parametrize("block", [
    "if flag:\n    ds = ds.shuffle(8)\nelse:\n    ds = ds.repeat()\n",  # alternatives
    "for _ in range(2):\n    ds = ds.shuffle(8)\n",  # as many times as the loop turns
    "try:\n    ds = ds.shuffle(8)\nexcept ValueError:\n    pass\n",
])
def test_alternatives_loops_and_try_blocks_do_not_make_one_pipeline(block):
    body = textwrap.indent("ds = tf.data.Dataset.range(8).prefetch(2)\n" + block + "ds = ds.map(lambda x: x)\n",
                           "    ")
    found = chain_facts("import tensorflow as tf\n\ndef f(flag):\n" + body)
    assert found[-1][:2] == ("ds.map(lambda x: x)", None), found


def test_a_stage_a_for_loop_applies_to_its_own_name_continues_the_pipeline_before_the_loop():
    # DeepRegNet/DeepReg dataset/loader/interface.py:140: the configured augmentations mapped after the prefetch
    assert chain_facts(
        """
        import tensorflow as tf

        def make(training, augmentations, other):
            ds = tf.data.Dataset.range(8).batch(2)
            ds = ds.prefetch(1)
            if training:
                for fn in augmentations:
                    ds = ds.map(fn)
            for fn in other:
                ds = ds.map(fn)
                ds = ds.batch(2)
            return ds
        """
    ) == [
        ("tf.data.Dataset.range(8).batch(2)", None, [], True),
        ("ds.prefetch(1)", "tf.data.Dataset.range(8).batch(2)", [], True),
        ("ds.map(fn)", "ds.prefetch(1)", ["`training` is true", "the loop over `augmentations` runs"], True),
        # a second binding in the loop reaches the read on the next turn: not one pipeline
        ("ds.map(fn)", None, [], True),
        ("ds.batch(2)", "ds.map(fn)", [], True),  # (read by the next turn and the return)
    ]


def test_a_stage_in_a_with_block_continues_the_pipeline_unconditionally():
    assert chain_facts(
        """
        import tensorflow as tf

        ds = tf.data.Dataset.range(8).batch(2)
        with tf.device("/cpu:0"):
            ds = ds.shuffle(8)
        ds = ds.prefetch(1)
        """
    ) == [
        ("tf.data.Dataset.range(8).batch(2)", None, [], True),
        ("ds.shuffle(8)", "tf.data.Dataset.range(8).batch(2)", [], True),
        ("ds.prefetch(1)", "ds.shuffle(8)", [], False),
    ]


def test_a_return_under_an_if_continues_the_chain_under_its_condition():
    assert chain_facts(
        """
        import tensorflow as tf

        def f(flag):
            ds = tf.data.Dataset.range(8)
            ds = ds.prefetch(2)
            if flag:
                return ds.map(lambda x: x)
            return ds
        """
    ) == [
        ("ds.prefetch(2)", None, [], True),
        ("ds.map(lambda x: x)", "ds.prefetch(2)", ["`flag` is true"], False),
    ]


def test_a_pipeline_continued_under_another_name_is_linked_but_not_followed():
    assert chain_facts(
        """
        import tensorflow as tf

        ds = tf.data.Dataset.range(100).map(lambda x: x)
        train = ds.batch(32)
        train = train.shuffle(100)
        val = ds.take(10)
        """
    ) == [
        ("tf.data.Dataset.range(100).map(lambda x: x)", None, [], True),
        ("ds.batch(32)", "tf.data.Dataset.range(100).map(lambda x: x)", [], True),
        ("train.shuffle(100)", "ds.batch(32)", [], False),
        ("ds.take(10)", "tf.data.Dataset.range(100).map(lambda x: x)", [], False),
    ]
    module = cst.parse_module(textwrap.dedent("""
        import tensorflow as tf

        ds = tf.data.Dataset.range(100).map(lambda x: x)
        train = ds.batch(32)
    """))
    first = chains(analyse(module, [REGISTRY["TFG302"]]))[0]
    assert first.following is None  # `train` is another name: `ds` may go on elsewhere


def test_a_pipeline_rebuilt_under_the_same_name_later_neither_continues_nor_feeds_the_earlier_one():
    assert chain_facts(
        """
        import tensorflow as tf

        ds = tf.data.Dataset.range(100).shuffle(100)
        for x in ds:
            pass

        ds = tf.data.Dataset.range(100)
        ds = ds.batch(10)
        ds = ds.shuffle(10)

        def later():
            return ds.take(1)
        """
    ) == [
        # read from another scope, `ds` may be any of its bindings: continued
        ("tf.data.Dataset.range(100).shuffle(100)", None, [], True),
        ("ds.batch(10)", None, [], True),
        ("ds.shuffle(10)", "ds.batch(10)", [], True),
        ("ds.take(1)", None, [], False),
    ]


def test_upstream_follows_the_binding_live_at_the_pipeline_start():
    from tflint_gpu.semantic.datasets import upstream

    module = cst.parse_module(textwrap.dedent("""
        import tensorflow as tf

        raw = tf.data.Dataset.list_files("*.tfrecord")
        ds = raw.batch(2)
        raw = tf.data.Dataset.list_files("*.tfrecord", shuffle=False)
        ds = raw.batch(2)
        raw = tf.data.Dataset.range(100).shuffle(100)
        ds = raw.batch(2)
        raw = tf.data.Dataset.range(100).cache()
        ds = raw.batch(2)
    """))
    ctx = analyse(module, [REGISTRY["TFG302"]])
    found = [c for c in chains(ctx) if module.code_for_node(c.outermost) == "raw.batch(2)"]
    found.sort(key=lambda c: c.scope.flow_order().pre[id(c.outermost)])
    assert [upstream(c, ctx) for c in found[:2]] == [["shuffle"], []]  # list_files shuffles by default
    # a chain bound to the name: linked, its stages are the pipeline's own
    assert [[method(s) for s in c.all_stages()] for c in found[2:]] == [["shuffle", "batch"], ["cache", "batch"]]


def test_a_name_rebound_to_something_else_is_no_dataset_where_that_binding_is_live():
    check(
        """
        import pandas as pd
        import tensorflow as tf

        ds = tf.data.Dataset.range(3)
        yes(ds); yes(ds.map(str))
        ds = pd.read_csv("x.csv")
        no(ds); no(ds.map(str))
        if flag:
            ds = tf.data.Dataset.range(3)
        yes(ds)  # one binding live here is a dataset

        def f():
            yes(ds)  # read from a function: any binding of the module's `ds`
        """
    )


def test_tfds_load_with_a_split_the_code_does_not_show_is_a_dataset_once_transformed():
    check(
        """
        import tensorflow_datasets as tfds

        def load(split, splits):
            d = tfds.load("mnist", split=split)
            no(d)  # maybe a list or a dict of datasets
            yes(d.batch(2)); yes(tfds.load("mnist", split=split).map(str))
            yes(d["train"]); yes(d[0])  # subscripted: a dict's or a list's datasets (a dataset has no [])
            for part in d:
                no(part)  # a dataset's elements, a list's datasets or a dict's keys
            a, b = tfds.load("mnist", split=splits)
            no(a)  # a list's datasets, or a two-element dataset's elements
            w, info = tfds.load("mnist", split=split, with_info=True)
            no(w); yes(w.shuffle(10)); no(info)

        names = ["train", "test"]
        tr, te = tfds.load("mnist", split=names)
        yes(tr); yes(te)
        """
    )


def test_chains_in_defaults_decorators_and_class_bodies():
    assert chain_facts(
        """
        import tensorflow as tf

        def f(ds=tf.data.Dataset.range(3).batch(2)):
            return ds

        @decorate(tf.data.Dataset.range(3).batch(2))
        def g():
            pass

        class C:
            ds = tf.data.Dataset.range(3).map(lambda x: x)
            ds = ds.batch(2)
        """
    ) == [
        # outside their scope's order (a default, a decorator): found, never linked
        ("tf.data.Dataset.range(3).batch(2)", None, [], False),
        ("tf.data.Dataset.range(3).batch(2)", None, [], False),
        ("tf.data.Dataset.range(3).map(lambda x: x)", None, [], True),
        ("ds.batch(2)", "tf.data.Dataset.range(3).map(lambda x: x)", [], False),
    ]


# -- issue 35: parameters from their calls, and values used as only a Dataset is ------------
def test_a_parameter_every_call_of_the_module_gives_a_dataset_is_one():
    check(
        """
        import tensorflow as tf

        def augment(ds, n):
            yes(ds); no(n)
            return ds

        def mixed(ds):
            no(ds)

        def main():
            augment(tf.data.Dataset.range(3), 2)
            augment(ds=tf.data.TFRecordDataset(["a"]), n=1)
            mixed(tf.data.Dataset.range(3))
            mixed([1, 2])
        """
    )


def test_a_parameter_used_with_a_method_only_a_dataset_has_is_one():
    check(
        """
        import tensorflow as tf

        def ragged(ds):
            yes(ds)
            return ds.apply(tf.data.experimental.dense_to_ragged_batch(8))

        def fetched(ds, frame):
            yes(ds); no(frame)
            frame = frame.map(str)
            return ds.prefetch(2)

        def hugging_face_like(ds):
            no(ds)
            return ds.map(lambda x: x).shuffle(10).batch(2)

        def rebound(ds):
            ds = load(ds)
            yes(ds.prefetch(1))
        """
    )


def test_apply_of_a_batching_transformation_is_that_batching():
    module = cst.parse_module(
        "ds.apply(tf.data.experimental.dense_to_ragged_batch(8))\n"
        "ds.apply(bucket_by_sequence_length(len, [4], [8, 4]))\n"
        "ds.apply(tf.data.experimental.ignore_errors())\n")
    stages = [stmt.body[0].value for stmt in module.body]
    assert [method(s) for s in stages] == ["ragged_batch", "padded_batch", "apply"]
