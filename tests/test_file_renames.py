"""Renaming the file a save writes where its name is written, with the loads of it
(``semantic.file_renames``, ``semantic.path_text.renamed_file``, ``Summary.names``)."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.file_renames import path_literal, renamed_literal
from tflint_gpu.semantic.path_text import renamed_file
from tflint_gpu.semantic.project import (NAMES, ProjectFile, ProjectIndex, dependencies_valid, load_summary,
                                         Summary, summarize_source)

WEIGHTS = (".h5", ".hdf5", ".ckpt", ".tf", "")


@pytest.mark.parametrize("text,new", [
    ("x.h5", "x.weights.h5"),
    ("ep{epoch:03d}-loss{loss:.3f}.h5", "ep{epoch:03d}-loss{loss:.3f}.weights.h5"),
    ("ep%03d-loss%.3f.hdf5", "ep%03d-loss%.3f.weights.h5"),
    ("logs/vit", "logs/vit.weights.h5"),
    ("cp.CKPT", "cp.weights.h5"),
    ("BirdNET_V2.4_FP32", "BirdNET_V2.4_FP32.weights.h5"),  # a version's dot is no suffix
    ("w.weights.h5", None),
    ("ckpts/", None),
    ("m.keras", None),
    ("model_%03d", None),
    ("ckpt/{epoch:02d}", "ckpt/{epoch:02d}.weights.h5"),  # a ModelCheckpoint template
    ("yolov3_train_{}.tf", "yolov3_train_{}.weights.h5"),
])
def test_renamed_file(text, new):
    assert renamed_file(text, WEIGHTS, ".weights.h5") == new


def test_renamed_file_to_keras():
    assert renamed_file("best.hdf5", (".hdf5", ""), ".keras") == "best.keras"
    assert renamed_file("best.h5", (".hdf5", ""), ".keras") is None


@pytest.mark.parametrize("source,text,new", [
    ('"x.h5"', "x.h5", '"x.weights.h5"'),
    ("r'a\\b.ckpt'", "a\\b.ckpt", "r'a\\b.weights.h5'"),
    ('"""vit"""', "vit", '"""vit.weights.h5"""'),
    ('"x\\x2eh5"', "x.h5", '"x\\x2eweights.h5"'),  # the escape before the changed end stays
])
def test_renamed_literal_keeps_quotes_prefix_and_escapes(source, text, new):
    node = cst.parse_expression(source)
    after = renamed_literal(node, text, renamed_file(text, WEIGHTS, ".weights.h5"))
    assert after.value == new
    assert cst.parse_expression(after.value).evaluated_value == renamed_file(text, WEIGHTS, ".weights.h5")


def _context(source: str):
    return analyse(cst.parse_module(textwrap.dedent(source)), [])


def _target_paths(ctx, calls=False):
    return [(c.args[0].value, s) + ((c,) if calls else ()) for c, s in ctx.model.index.get("Call", ())
            if isinstance(c.func, cst.Attribute) and c.func.attr.value == "save_weights"]


@pytest.mark.parametrize("expr,text", [
    ('os.path.join(d, "w.h5")', "w.h5"),
    ('f"{d}/ckpt"', "/ckpt"),
    ('d + "/ep%03d.hdf5" % 3', "/ep%03d.hdf5"),
    ('"g-{}.ckpt".format(3)', "g-{}.ckpt"),
    ('str(pathlib.Path(d) / "w.h5")', "w.h5"),
    ('"a" "b.h5"', "b.h5"),
    ('name', "n.h5"),
])
def test_path_literal_finds_the_literal_that_ends_the_path(expr, text):
    ctx = _context(f"""
        import os, pathlib
        def f(model, d):
            name = "n.h5"
            model.save_weights({expr})
        """)
    path, scope = _target_paths(ctx)[0]
    node, found = path_literal(path, scope, ctx.resolver)
    assert found == text and isinstance(node, (cst.SimpleString, cst.FormattedStringText))


@pytest.mark.parametrize("expr", ['f"{d}/{n}"', "cfg.PATH", "d", 'os.path.join(d, *parts)', '"w-%s" % n'])
def test_path_literal_none_when_the_ending_is_written_elsewhere(expr):
    ctx = _context(f"""
        import os
        import cfg
        def f(model, d, n, parts):
            model.save_weights({expr})
        """)
    path, scope = _target_paths(ctx)[0]
    assert path_literal(path, scope, ctx.resolver) is None


def _rename(ctx, index=0):
    path, scope, call = _target_paths(ctx, calls=True)[index]
    return ctx.file_renames.rename(path, scope, WEIGHTS, ".weights.h5", frozenset({"load_weights"}), call=call)


def test_rename_takes_the_loads_of_the_same_name_along():
    ctx = _context("""
        def f(model, d):
            model.save_weights("logs/w.h5")
            model.load_weights("logs/w.h5")
            w = "logs/v.ckpt"
            model.save_weights(w)
            model.load_weights(w)
        """)
    first, second = _rename(ctx, 0), _rename(ctx, 1)
    assert not first.refused and first.loads == 1 and len(first.replacements) == 2
    assert sorted(n.value for n in first.replacements.values()) == ['"logs/w.weights.h5"'] * 2
    assert not second.refused and second.loads == 1 and [n.value for n in second.replacements.values()] \
        == ['"logs/v.weights.h5"']


@pytest.mark.parametrize("extra,reason", [
    ('model.load_weights("other/w.h5")', "a load in this module reads it as `other/w.h5`"),
    ('print("saved to logs/w.h5.")', "`w.h5` is also written elsewhere in this module"),
    ('name = "w.h5"', "`w.h5` is also written elsewhere in this module"),
])
def test_rename_refused_where_the_name_is_also_read(extra, reason):
    ctx = _context(f"""
        def f(model, d):
            model.save_weights("logs/w.h5")
            {extra}
        """)
    assert _rename(ctx).refused == reason


def test_rename_ignores_other_weights_saves_of_the_name():
    ctx = _context("""
        def f(model, d):
            model.save_weights("logs/w.h5")
            model.save_weights(d + "/w.h5")
            keras.callbacks.ModelCheckpoint(os.path.join(d, "w.h5"), save_weights_only=True)
        """)
    found = _rename(ctx)
    assert not found.refused and found.loads == 0 and len(found.replacements) == 1


def test_rename_refused_when_a_name_is_read_otherwise():
    ctx = _context("""
        def f(model):
            base = "logs/model"
            model.save_weights(base)
            model.save(base + "_full.h5")
        """)
    assert _rename(ctx) is None  # `base` is read by a `+` too: renaming it would rename both


def test_summary_names_leave_weights_saves_out():
    summary = summarize_source(textwrap.dedent('''\
        """Weights go to logs/best.h5; see README.md."""
        import os
        def f(model, d):
            model.save_weights(os.path.join(d, "last.h5"))
            ModelCheckpoint(d + "/ep{epoch:03d}.h5", save_weights_only=True)
            model.load_weights("model_data/pre.h5")
            print(f"{d}/out.ckpt")
        '''))
    assert {"best.h5", "README.md", "pre.h5", "out.ckpt"} <= set(summary.names)
    assert "last.h5" not in summary.names and "ep{epoch:03d}.h5" not in summary.names
    assert Summary.from_json(summary.to_json()).names == summary.names


def test_a_plain_word_as_a_dict_key_or_an_index_names_no_file():
    # examples/TFG201 returns {"total": ..., "last": ...}: it named no file `last`, and stopped the rename
    # of examples/TFG908's `save_weights(os.path.join(folder, "last"))` when examples/ was checked whole.
    summary = summarize_source(textwrap.dedent('''\
        def f(d, out):
            print(d["last"], out["best.h5"])
            return {"total": 1, "last": 2, "w.h5": 3, "a/b": 4}, "last"

        def g(d):
            return d["total"], {"total": 0}
        '''))
    assert {"last", "best.h5", "w.h5", "b"} <= set(summary.names)  # "last" returned: it may be a path
    assert "total" not in summary.names


def test_rename_refused_when_another_module_names_the_file(tmp_path):
    (tmp_path / "train.py").write_text('def f(model):\n    model.save_weights("logs/w.h5")\n')
    (tmp_path / "predict.py").write_text('def g(model):\n    model.load_weights("logs/w.h5")\n')
    (tmp_path / "other.py").write_text('def h(model):\n    model.save_weights("logs/w.h5")\n')
    files = [str(tmp_path / n) for n in ("train.py", "predict.py", "other.py")]

    def refused(checked):
        index = ProjectIndex(str(tmp_path), {p: load_summary(p) for p in checked})
        view = ProjectFile(index, files[0])
        ctx = analyse(cst.parse_module((tmp_path / "train.py").read_text()), [], project=view)
        return _rename(ctx).refused, view

    reason, view = refused(files)
    assert reason == "`w.h5` is also named in `predict.py`"
    assert (NAMES + "w.h5", str(tmp_path / "predict.py")) in view.deps
    assert refused([files[0], files[2]])[0] == ""  # another save of it: renamed alike
    # The load gone, the result read before is stale.
    key = '[["%sw.h5", "%s"]]' % (NAMES, str(tmp_path / "predict.py"))
    (tmp_path / "predict.py").write_text('def g(model):\n    model.load_weights("logs/w.weights.h5")\n')
    fresh = ProjectIndex(str(tmp_path), {p: load_summary(p) for p in files})
    assert not dependencies_valid(fresh, key)


def test_modules_that_each_save_and_load_their_own_copy_of_a_name_rename_their_own(tmp_path):
    # Tutorial scripts each saving and loading "./models/<name>/model.ckpt": each script's rename takes its
    # own load along, so another script's pair does not stop it; a load of another path still does.
    for name in ("gpt", "bert"):
        (tmp_path / f"{name}.py").write_text(
            f'def f(model, name):\n    model.save_weights("./models/%s/model.ckpt" % name)\n'
            f'    model.load_weights("./models/%s/model.ckpt" % name)\n')
    summary = load_summary(str(tmp_path / "bert.py"))
    assert "model.ckpt" not in summary.names
    files = [str(tmp_path / "gpt.py"), str(tmp_path / "bert.py")]
    index = ProjectIndex(str(tmp_path), {p: load_summary(p) for p in files})
    view = ProjectFile(index, files[0])
    ctx = analyse(cst.parse_module((tmp_path / "gpt.py").read_text()), [], project=view)
    rename = _rename(ctx)
    assert rename.refused == "" and len(rename.replacements) == 2
    (tmp_path / "bert.py").write_text('def g(model):\n    model.load_weights("./models/bert/model.ckpt")\n')
    assert "model.ckpt" in load_summary(str(tmp_path / "bert.py")).names


def test_a_plain_word_of_a_sentence_is_not_a_file_name():
    ctx = _context('''
        def f(model, d):
            """Saves the last weights; see logs/other for the rest."""
            model.save_weights(d + "/last")
        ''')
    found = _rename(ctx)
    assert not found.refused and found.new == "/last.weights.h5"
    ctx = _context('''
        def f(model, d):
            print("restore with: logs/last")
            model.save_weights(d + "/last")
        ''')
    assert _rename(ctx).refused == "`last` is also written elsewhere in this module"
