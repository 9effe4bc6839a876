"""The project's target (semantic/target.py): pins read as a person reads them,
the target-version setting, --show-settings, migration rules silent for a
Keras 2 project, the upgrade report, and the cache keyed on the target."""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tflint_gpu import cli, config
from tflint_gpu.engine import run
from tflint_gpu.engine.lint import lint_source, using_target
from tflint_gpu.rules.base import REGISTRY, all_rules
from tflint_gpu.semantic import target as t
from tflint_gpu.semantic.target import (
    NEWEST, Target, TargetError, from_code, from_dockerfile, from_dotenv, from_environment_yml, from_pipfile,
    from_pyproject, from_readme, from_requirements, from_setup_cfg, from_setup_py, newest_allowed, parse_target,
    requirement, resolve,
)

# Two Keras 3 breakages (TFG902), fine under Keras 2.
BREAKS = textwrap.dedent("""\
    import tensorflow as tf

    m = tf.keras.metrics.Mean()
    m.reset_states()
    model = tf.keras.Sequential()
    model.fit_generator(gen)
""")


def project(tmp_path: Path, files: dict) -> Path:
    (tmp_path / ".git").mkdir(parents=True, exist_ok=True)  # the search for the project's files ends here
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def target_of(files: dict, tmp_path: Path) -> Target:
    root = project(tmp_path, files)
    found, folder = t.project_target(str(root))
    return found


# -- specifiers -----------------------------------------------------------------

@pytest.mark.parametrize("spec, newest", [
    ("==2.15.0", (2, 15)), ("==2.15", (2, 15)), ("==2.15.*", (2, 15)), ("===2.4.1", (2, 4)),
    ("~=2.12.0", (2, 12)), ("~=2.12", None), (">=2.10,<2.16", (2, 15)), (">=2.10, <2.16.0", (2, 15)),
    ("<2.16.0rc0", (2, 15)), ("<2.15.1", (2, 15)), ("<=2.15", (2, 15)), ("<3", None), (">=2.16", None),
    ("!=2.16.0", None), ("", None), ("*", None), ("^2.12", None), ("~2.12", (2, 12)), ("2.15.0", (2, 15)),
    ("(>=2.10,<2.16)", (2, 15)), ("^2.12 || ^1.15", None), ("==2.16.0rc1", (2, 16)),
])
def test_the_newest_tensorflow_a_specifier_allows(spec, newest):
    assert t._bound(t.TENSORFLOW, newest_allowed(spec)) == newest
    if spec[:1] in "=~<>!(" or not spec:
        evidence = requirement("tensorflow" + spec, "requirements.txt:1")
        assert evidence is not None and evidence.upper == newest


def test_an_unreadable_specifier_is_no_evidence():
    assert newest_allowed("junk") is False
    assert requirement("tensorflow junk", "x:1") is None
    assert requirement("tensorflow keras", "x:1") is None  # a sentence, not a requirement
    assert requirement("tensorflow-text==2.15", "x:1") is None  # another package


@pytest.mark.parametrize("line, kind, newest", [
    ("tensorflow-gpu==2.4", t.TENSORFLOW, (2, 4)),
    ("tensorflow[and-cuda]", t.TENSORFLOW, None),
    ("tensorflow[and-cuda]==2.15.1 ; python_version > '3.9'", t.TENSORFLOW, (2, 15)),
    ("Tensorflow_CPU==2.11.0", t.TENSORFLOW, (2, 11)),
    ("tf-nightly==2.17.0.dev20240101", t.TENSORFLOW, None),
    ("tensorflow @ https://example.com/tensorflow-2.15.0-cp311-cp311-manylinux_2_17_x86_64.whl", t.TENSORFLOW,
     (2, 15)),
    ("keras<3", t.KERAS, (2, t.ANY_MINOR)),
    ("keras==2.15.0", t.KERAS, (2, 15)),
    ("keras>=3", t.KERAS, None),
    ("tf_keras", t.TF_KERAS, None),
    ("tf-keras~=2.16.0", t.TF_KERAS, (2, 16)),
])
def test_requirement_kinds(line, kind, newest):
    evidence = requirement(line, "requirements.txt:1")
    assert evidence.kind == kind and evidence.upper == newest


def test_conda_specifiers():
    assert requirement("tensorflow=2.15", "e:1", conda=True).upper == (2, 15)
    assert requirement("tensorflow=2.15.0=gpu_py39h", "e:1", conda=True).upper == (2, 15)
    assert requirement("conda-forge::tensorflow 2.12.*", "e:1", conda=True).upper == (2, 12)


# -- readers ------------------------------------------------------------------------

def test_requirements_txt():
    text = "# pinned\n-r base.txt\nnumpy\ntensorflow==2.15.0 --hash=sha256:abc \\\n    --hash=sha256:def\n"
    (found,) = from_requirements(text, "requirements.txt")
    assert str(found) == "requirements.txt:4: tensorflow==2.15.0" and found.upper == (2, 15)
    assert t.requirements_includes(text) == ["base.txt"]


def test_pyproject_pep621_and_poetry():
    text = """\
        [project]
        dependencies = [
          "numpy",
          "tensorflow>=2.10,<2.16",
        ]
        [project.optional-dependencies]
        gpu = ["tensorflow[and-cuda]==2.14.0"]
        [tool.poetry.dependencies]
        tensorflow = "^2.12"
        tf-keras = {version = "~2.16"}
    """
    found = from_pyproject(textwrap.dedent(text), "pyproject.toml")
    assert [(str(e), e.upper) for e in found] == [
        ("pyproject.toml:4: tensorflow>=2.10,<2.16", (2, 15)),
        ("pyproject.toml:7: tensorflow[and-cuda]==2.14.0", (2, 14)),
        ('pyproject.toml:9: tensorflow = "^2.12"', None),
        ('pyproject.toml:10: tf-keras = "~2.16"', (2, 16)),
    ]
    assert from_pyproject("not [toml", "pyproject.toml") == []


def test_setup_cfg():
    text = "[options]\ninstall_requires =\n    numpy\n    tensorflow~=2.12.0\n"
    (found,) = from_setup_cfg(text, "setup.cfg")
    assert str(found) == "setup.cfg:4: tensorflow~=2.12.0" and found.upper == (2, 12)


def test_setup_py_is_read_not_run(tmp_path):
    marker = tmp_path / "ran"
    text = textwrap.dedent(f"""\
        from setuptools import setup
        open({str(marker)!r}, "w").write("ran")
        REQUIRED = ["tensorflow>=2.4,<2.16", "numpy"]
        setup(name="tf_keras", keywords="tensorflow keras", install_requires=REQUIRED,
              extras_require={{"legacy": ["keras<3"]}})
    """)
    found = from_setup_py(text, "setup.py")
    assert [str(e) for e in found] == ["setup.py:3: tensorflow>=2.4,<2.16", "setup.py:5: keras<3"]
    assert not marker.exists()
    assert from_setup_py("def (:", "setup.py") == []


def test_environment_yml_with_conda_and_pip_items():
    text = "dependencies:\n  - python=3.10\n  - tensorflow=2.13\n  - pip\n  - pip:\n    - keras<3\n"
    found = from_environment_yml(text, "environment.yml")
    assert [(str(e), e.upper) for e in found] == [
        ("environment.yml:3: tensorflow=2.13", (2, 13)), ("environment.yml:6: keras<3", (2, t.ANY_MINOR))]


def test_pipfile():
    text = '[packages]\ntensorflow = "==2.15.0"\nkeras = {version = "<3"}\n[dev-packages]\npytest = "*"\n'
    found = from_pipfile(text, "Pipfile")
    assert [str(e) for e in found] == ['Pipfile:2: tensorflow = "==2.15.0"', 'Pipfile:3: keras = "<3"']


def test_dockerfile():
    text = ("FROM --platform=linux/amd64 tensorflow/tensorflow:2.15.0-gpu AS base\n"
            "RUN pip install --no-cache-dir tensorflow-addons tf_keras\n"
            "ENV TF_USE_LEGACY_KERAS=1\n")
    found = from_dockerfile(text, "Dockerfile")
    assert [(e.kind, e.upper, e.where) for e in found] == [
        (t.TENSORFLOW, (2, 15), "Dockerfile:1"), (t.TF_KERAS, None, "Dockerfile:2"),
        (t.LEGACY_ENV, None, "Dockerfile:3")]
    (latest,) = from_dockerfile("FROM tensorflow/tensorflow:latest-gpu\n", "Dockerfile")
    assert latest.upper is None


def test_readme_commands():
    text = textwrap.dedent("""\
        # Setup
        ```
        pip install -r requirements.txt
        pip install tensorflow-gpu==2.4.0 numpy
        ```
        Or with conda: `conda install tensorflow=2.3`.
    """)
    found = from_readme(text, "README.md")
    assert [(str(e), e.upper) for e in found] == [("README.md:4: tensorflow-gpu==2.4.0", (2, 4)),
                                                  ("README.md:6: tensorflow=2.3", (2, 3))]
    # The README's commands are alternatives: the newest is what it supports.
    assert resolve(found).tf == (2, 4)


def test_tf_use_legacy_keras_set_in_code_dotenv_and_notebooks():
    code = textwrap.dedent("""\
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        os.environ.setdefault('TF_USE_LEGACY_KERAS', 'True')
        os.environ.update({"TF_USE_LEGACY_KERAS": "1"})
    """)
    assert [e.where for e in from_code(code, "train.py")] == ["train.py:2", "train.py:3", "train.py:4"]
    notebook = json.dumps({"cells": [{"source": ['os.environ["TF_USE_LEGACY_KERAS"] = "1"\n']}]})
    assert len(from_code(notebook, "a.ipynb")) == 1
    assert len(from_code('{"source": ["%env TF_USE_LEGACY_KERAS=1"]}', "a.ipynb")) == 1
    commented = json.dumps({"cells": [{"source": ['# os.environ["TF_USE_LEGACY_KERAS"] = "1"\n']}]}, indent=1)
    assert from_code(commented, "a.ipynb") == []
    assert [e.text for e in from_dotenv("A=2\nexport TF_USE_LEGACY_KERAS=true\n", ".env")] == \
        ["export TF_USE_LEGACY_KERAS=true"]


def test_reads_and_comments_do_not_set_tf_use_legacy_keras():
    code = textwrap.dedent("""\
        import os
        if os.environ.get("TF_USE_LEGACY_KERAS", "1") == "1":
            pass
        legacy = os.getenv("TF_USE_LEGACY_KERAS") == "1"
        # os.environ["TF_USE_LEGACY_KERAS"] = "1"
        os.environ["TF_USE_LEGACY_KERAS"] = "0"
    """)
    assert from_code(code, "train.py") == []


# -- deciding ------------------------------------------------------------------------

@pytest.mark.parametrize("files, spelling, why", [
    ({"requirements.txt": "tensorflow==2.15.0\n"}, "tf2.15", ["requirements.txt:1: tensorflow==2.15.0"]),
    ({"requirements.txt": "tensorflow~=2.12\n"}, "latest", ["requirements.txt:1: tensorflow~=2.12"]),
    ({"requirements.txt": "tensorflow>=2.10,<2.16\n"}, "tf2.15", ["requirements.txt:1: tensorflow>=2.10,<2.16"]),
    ({"requirements.txt": "tensorflow-gpu==2.4\n"}, "tf2.4", ["requirements.txt:1: tensorflow-gpu==2.4"]),
    ({"requirements.txt": "tensorflow[and-cuda]\n"}, "latest", ["requirements.txt:1: tensorflow[and-cuda]"]),
    ({"requirements.txt": "tensorflow>=2.12\nkeras<3\n"}, "tf2.15",
     ["requirements.txt:1: tensorflow>=2.12", "requirements.txt:2: keras<3 (TF 2.16 requires Keras 3)"]),
    ({"requirements.txt": "keras>=3\ntensorflow\n"}, "latest", ["requirements.txt:2: tensorflow"]),
    ({"requirements.txt": "tensorflow>=2.16\ntf_keras\n"}, "latest-keras2",
     ["requirements.txt:1: tensorflow>=2.16", "requirements.txt:2: tf_keras"]),
    ({"requirements.txt": "tensorflow==2.17.0\n", ".env": "TF_USE_LEGACY_KERAS=1\n"}, "tf2.17-keras2",
     ["requirements.txt:1: tensorflow==2.17.0", ".env:1: TF_USE_LEGACY_KERAS=1"]),
    ({"pyproject.toml": '[project]\ndependencies = ["tensorflow==2.13.1"]\n'}, "tf2.13",
     ["pyproject.toml:2: tensorflow==2.13.1"]),
    ({"Dockerfile": "FROM tensorflow/tensorflow:2.14.0-gpu\n"}, "tf2.14",
     ["Dockerfile:1: FROM tensorflow/tensorflow:2.14.0-gpu"]),
    # What is declared to install wins over the image and the README.
    ({"requirements.txt": "tensorflow==2.16.1\n", "Dockerfile": "FROM tensorflow/tensorflow:2.10.0\n",
      "README.md": "pip install tensorflow==2.4\n"}, "tf2.16", ["requirements.txt:1: tensorflow==2.16.1"]),
    # Files installed together: the tightest bound wins.
    ({"requirements.txt": "-r requirements/base.txt\ntensorflow>=2.10\n",
      "requirements/base.txt": "tensorflow<2.14\n"}, "tf2.13", ["requirements/base.txt:1: tensorflow<2.14"]),
    ({"README.md": "Install: `pip install tensorflow==2.11.0`\n"}, "tf2.11",
     ["README.md:1: tensorflow==2.11.0"]),
    ({"requirements.txt": "numpy\n"}, "latest", ["no TensorFlow pin found: the newest release"]),
])
def test_the_target_read_from_a_project(tmp_path, files, spelling, why):
    found = target_of(files, tmp_path)
    assert (found.spelling, list(found.why)) == (spelling, why)


def test_a_project_without_any_file_gets_the_newest(tmp_path):
    found = target_of({"src/a.py": "import tensorflow\n"}, tmp_path / "p")
    assert found == NEWEST and found.keras3 and found.at_least((2, 21))


def test_the_search_goes_up_to_the_project_and_stops_at_the_repository(tmp_path):
    project(tmp_path, {"requirements.txt": "tensorflow==2.15\n", "pkg/sub/a.py": ""})
    assert t.target_folder(str(tmp_path / "pkg" / "sub")) == str(tmp_path)
    inner = tmp_path / "inner"
    (inner / ".git").mkdir(parents=True)
    (inner / "src").mkdir()
    assert t.target_folder(str(inner / "src")) is None  # not the requirements of the repository around it


# -- the setting ---------------------------------------------------------------------

@pytest.mark.parametrize("value, spelling, tf, keras", [
    ("tf2.15", "tf2.15", (2, 15), 2), ("tf2.16", "tf2.16", (2, 16), 3), ("tf2.16-keras2", "tf2.16-keras2", (2, 16), 2),
    ("tf2.21-keras3", "tf2.21", (2, 21), 3), ("tf2.4-keras2", "tf2.4", (2, 4), 2), ("latest", "latest", None, 3),
    ("latest-keras2", "latest-keras2", None, 2),
])
def test_target_version_spellings(value, spelling, tf, keras):
    found = parse_target(value)
    assert (found.spelling, found.tf, found.keras) == (spelling, tf, keras)
    assert parse_target(found.spelling) == Target(tf, keras, (), t.SETTING)


@pytest.mark.parametrize("value, says", [
    ("2.15", "did you mean `tf2.15`?"), ("TF2.15", "did you mean `tf2.15`?"), ("tf2.15.1", "did you mean `tf2.15`?"),
    ("tf2.15-keras3", "tf.keras is Keras 2 before TF 2.16"), ("tf1.15", "checks TensorFlow 2 code"),
    ("keras3", "expected tf2.N"), ("", "expected tf2.N"),
])
def test_bad_target_versions(value, says):
    with pytest.raises(TargetError, match=says.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        parse_target(value)


def test_a_bad_target_version_is_a_one_line_configuration_error(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"a.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--target-version", "tf2.15.0", "a.py"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith("tflint-gpu: error: --target-version: invalid target version `tf2.15.0`")
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-gpu]\ntarget-version = "keras2"\n')
    assert cli.main(["a.py"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "pyproject.toml: target-version: invalid target version `keras2`" in err
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-gpu]\ntarget-version = 2.15\n')
    assert cli.main(["a.py"]) == 2
    assert 'target-version: expected a string such as "tf2.15", got float 2.15' in capsys.readouterr().err


def test_the_setting_overrides_the_pins_and_the_command_line_overrides_the_setting(tmp_path):
    project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n", "a.py": BREAKS})
    settings = config.load_settings(config.Overrides(), tmp_path)
    assert settings.target_for(str(tmp_path / "a.py")).spelling == "tf2.15"
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-gpu]\ntarget-version = "tf2.16"\n')
    settings = config.load_settings(config.Overrides(), tmp_path)
    found = settings.target_for(str(tmp_path / "a.py"))
    assert found.spelling == "tf2.16" and found.source == t.SETTING and "target-version = \"tf2.16\"" in found.why[0]
    settings = config.load_settings(config.Overrides(target_version="tf2.16-keras2"), tmp_path)
    assert settings.target_for(str(tmp_path / "a.py")).spelling == "tf2.16-keras2"


# -- the rules -----------------------------------------------------------------------

def codes(out: str):
    return [line.split()[1] for line in out.splitlines() if ": TFG" in line]


def test_migration_rules_are_marked():
    marked = {r.code for r in all_rules() if r.migration}
    assert {"TFG901", "TFG902"} <= marked
    assert REGISTRY["TFG902"].migration is True and not REGISTRY["TFG201"].migration
    # tf_keras optimizers ignore `lr=` (measured, tf_keras 2.21): TFG901 stays on for Keras 2 targets.
    assert REGISTRY["TFG901"].migration == "by-target"


def test_a_keras2_project_is_silent_until_the_target_is_overridden(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n", "src/train.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "src"]) == 0
    out, err = capsys.readouterr()
    assert "All checks passed!" in out
    assert err.startswith("tflint-gpu: note: target tf2.15 (TF 2.15, Keras 2: requirements.txt:1: "
                          "tensorflow==2.15.0): the Keras 3 migration rules (TFG902")
    assert "`tflint-gpu upgrade`" in err
    assert cli.main(["--no-cache", "--target-version", "tf2.16", "src"]) == 1
    out, err = capsys.readouterr()
    assert codes(out) == ["TFG902", "TFG902"] and err == ""
    assert cli.main(["--no-cache", "--quiet", "src"]) == 0
    assert capsys.readouterr().err == ""  # --quiet: no note


def test_tf_use_legacy_keras_set_in_one_file_silences_the_others(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"README.md": "# x\n", "main.py": 'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n',
                       "model.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "."]) == 0
    err = capsys.readouterr().err
    assert "target latest-keras2" in err and "main.py:2: os.environ" in err
    assert cli.main(["--no-cache", "model.py"]) == 1  # alone, nothing sets it
    assert codes(capsys.readouterr().out) == ["TFG902", "TFG902"]


def test_a_tf_keras_project_and_a_keras3_project(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"a/requirements.txt": "tensorflow\ntf_keras\n", "a/m.py": BREAKS,
                       "b/requirements.txt": "tensorflow>=2.16\n", "b/m.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "a", "b"]) == 1
    out, err = capsys.readouterr()
    assert {line.split(":")[0] for line in out.splitlines() if ": TFG" in line} == {"b/m.py"}
    assert "a/requirements.txt:2: tf_keras" in err


def test_the_cache_does_not_reuse_results_across_targets(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n", "train.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["train.py"]) == 0
    assert cli.main(["--target-version", "latest", "train.py"]) == 1
    assert cli.main(["train.py"]) == 0
    (tmp_path / "requirements.txt").write_text("tensorflow==2.16.1\n")  # train.py itself is unchanged
    assert cli.main(["train.py"]) == 1
    capsys.readouterr()
    settings = config.load_settings(config.Overrides(), tmp_path)
    before = settings.fingerprint()
    settings.target_for("train.py")
    assert settings.fingerprint() != before


def test_the_target_reaches_rule_context(tmp_path):
    seen = []

    class Probe:
        code, name, message, needs, node_types, reads_index = "TFG999", "probe", "probe", (), ("Call",), ()

        def visit_Call(self, node, ctx):
            seen.append(ctx.target.spelling)

    lint_source("import tensorflow as tf\ntf.zeros(1)\n", "a.py", [Probe])
    lint_source("import tensorflow as tf\ntf.zeros(1)\n", "a.py", [Probe], target=parse_target("tf2.15"))
    with using_target(parse_target("tf2.16-keras2")):
        lint_source("import tensorflow as tf\ntf.zeros(1)\n", "a.py", [Probe])
    path = tmp_path / "a.py"
    path.write_text("import tensorflow as tf\ntf.zeros(1)\n")
    run.run_files([str(path)], lambda p: (Probe,), run.CHECK, target_for=lambda p: parse_target("tf2.12"))
    run.run_files([str(path)], lambda p: (Probe,), run.FIX, target_for=lambda p: parse_target("tf2.13"))
    assert seen == ["latest", "tf2.15", "tf2.16-keras2", "tf2.12", "tf2.13"]


# -- --show-settings -----------------------------------------------------------------

def test_show_settings(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n", "src/train.py": BREAKS,
                       "pyproject.toml": '[tool.tflint-gpu]\nextend-select = ["TFG401"]\n'
                                         '[tool.tflint-gpu.per-file-ignores]\n"src/*" = ["TFG2"]\n'})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--show-settings", "src/train.py"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Settings for: src/train.py\n")
    assert "  target-version  : tf2.15 (TF 2.15, Keras 2; project)\n" in out
    assert "    because       : requirements.txt:1: tensorflow==2.15.0\n" in out
    assert "TFG401" in out and "  off for target  : TFG902" in out and "per-file ignored: TFG201" in out
    assert cli.main(["--show-settings", "--target-version", "latest", "--format", "json", "src/train.py"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    assert shown["target-version"] == "latest" and shown["target-source"] == "setting"
    assert shown["target-why"] == ["--target-version"] and shown["silenced-by-target"] == []
    assert "TFG901" in shown["rules"] and "TFG201" not in shown["rules"]


# -- upgrade ----------------------------------------------------------------------------

def test_the_upgrade_report(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"requirements.txt": "numpy\ntensorflow==2.15.0\n",
                       "src/train.py": BREAKS + "opt = tf.keras.optimizers.Adam(lr=0.01)\n",
                       "src/more.py": "import tensorflow as tf\nm = tf.keras.metrics.Mean()\nm.reset_states()\n",
                       "src/clean.py": "import tensorflow as tf\n"})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["upgrade", "--no-cache", "src"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        "Upgrade to latest (the newest TF (2.16+), Keras 3)",
        "  now: tf2.15 (TF 2.15, Keras 2), 3 files: requirements.txt:2: tensorflow==2.15.0"]
    assert "  3  TFG902  removed-keras-method    3 safe fixes" in out
    assert "  1  TFG901  removed-keras-argument  1 safe fix" in out
    assert "4 breakages in 2 files (3 checked); 4 fixable by safe fixes (100%), 0 by hand." in out
    assert "Pins to change: requirements.txt:2: tensorflow==2.15.0" in out
    command = "tflint-gpu upgrade --fix src"
    assert f"Apply the safe fixes: {command}" in out and "--unsafe-fixes" not in out
    # The path that needs no code change is named, with what it does not cover.
    assert out.rstrip().splitlines()[-1].startswith("Not moving to Keras 3 yet? Pin tf_keras to TensorFlow's version")
    assert "TF_USE_LEGACY_KERAS=1" in out and "tensorflow-addons" in out

    assert cli.main(["upgrade", "--no-cache", "--format", "json", "src"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["total"], report["safe_fixes"], report["by_hand"], report["fixable_share"]) == (4, 4, 0, 1.0)
    assert [(f["path"], f["count"]) for f in report["files"]] == [("src/train.py", 3), ("src/more.py", 1)]
    assert [(r["code"], r["count"]) for r in report["rules"]] == [("TFG902", 3), ("TFG901", 1)]
    assert report["from"][0]["target-version"] == "tf2.15" and report["command"] == command

    # The command it prints fixes them and says so; then nothing is left to break.
    assert cli.main(command.split()[1:] + ["--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "Fixed 4 breakages (safe fixes)." in out
    assert "Nothing is left that the migration rules know of would break (3 files checked)." in out
    assert "reset_state()" in (tmp_path / "src/more.py").read_text()
    assert cli.main(["upgrade", "--no-cache", "src"]) == 0
    assert "Nothing the migration rules know of would break (3 files checked)." in capsys.readouterr().out
    assert cli.main(["upgrade", "--target-version", "tf2.15", "src"]) == 2
    assert "keeps Keras 2" in capsys.readouterr().err


def test_the_upgrade_reports_keras2_path_pasted_in_a_readme_sets_nothing():
    # The report names TF_USE_LEGACY_KERAS=1; its text in a README's console block (as this project's own
    # README shows it) must not read as a command that sets it, which would make the project Keras 2.
    from tflint_gpu import upgrade

    block = "```console\nNot moving to Keras 3 yet? " + upgrade.KERAS2_PATH + "\n```\n"
    assert "TF_USE_LEGACY_KERAS=1" in block and from_readme(block, "README.md") == []
    with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "README.md"), encoding="utf-8") as handle:
        assert from_readme(handle.read(), "README.md") == []


def test_a_message_that_mentions_tf_use_legacy_keras_sets_nothing():
    code = textwrap.dedent('''\
        raise ImportError(
            "To use Keras 2, set the environment variable `TF_USE_LEGACY_KERAS=True` to "
            "configure TensorFlow to use tf_keras")
    ''')
    assert from_code(code, "optimizers/__init__.py") == []
    # In a README, a command sets it; a sentence or a table that names it does not.
    assert len(from_readme("```\nexport TF_USE_LEGACY_KERAS=1\nTF_USE_LEGACY_KERAS=1 python train.py\n```\n",
                           "README.md")) == 2
    assert from_readme("For Keras 2, set `TF_USE_LEGACY_KERAS=True`.\n| `x` | (`TF_USE_LEGACY_KERAS=1`) |\n",
                       "README.md") == []


def test_an_installed_package_is_no_project(tmp_path):
    site = tmp_path / "lib" / "site-packages"
    (site / "pkg" / "sub").mkdir(parents=True)
    (site / "README.txt").write_text("This directory exists so that 3rd party packages can be installed here.\n")
    (tmp_path / "requirements.txt").write_text("tensorflow==2.4\n")
    assert t.target_folder(str(site / "pkg" / "sub")) is None


def test_the_flake8_plugin_reads_the_same_target(tmp_path):
    from tflint_gpu.flake8_plugin import Flake8Plugin

    root = project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n", "keras2/train.py": BREAKS,
                              "keras3/requirements.txt": "tensorflow>=2.16\n", "keras3/train.py": BREAKS})

    def found(name):
        path = root / name
        lines = path.read_text().splitlines(keepends=True)
        return [message.split()[0] for _, _, message, _ in Flake8Plugin(None, str(path), lines).run()]

    assert found("keras2/train.py") == []
    assert found("keras3/train.py") == ["TFG902", "TFG902"]


def test_keras_and_tf_keras_count_only_among_what_the_project_runs_with(tmp_path):
    """tf_keras in a test extra (this repository's own pyproject.toml) or a dev group says
    nothing about what tf.keras is in the project's code."""
    pyproject = """\
        [project]
        dependencies = ["tensorflow>=2.16"]
        [project.optional-dependencies]
        test = ["tensorflow-cpu==2.21.0", "tf-keras==2.21.0"]
        [tool.poetry.group.dev.dependencies]
        keras = "<3"
    """
    assert target_of({"pyproject.toml": pyproject}, tmp_path / "a").spelling == "tf2.21"
    assert target_of({"requirements.txt": "tensorflow\n", "requirements-dev.txt": "tf_keras\n"},
                     tmp_path / "b").spelling == "latest"
    setup = """\
        from setuptools import setup
        TESTS = ["tf_keras"]
        setup(install_requires=["tensorflow"], tests_require=TESTS, extras_require={"k2": ["keras<3"]})
    """
    assert target_of({"setup.py": setup}, tmp_path / "c").spelling == "latest"
    assert target_of({"Pipfile": '[packages]\ntensorflow = "*"\n[dev-packages]\ntf-keras = "*"\n'},
                     tmp_path / "d").spelling == "latest"
    assert target_of({"setup.cfg": "[options]\ninstall_requires =\n    tensorflow\n    tf_keras\n"},
                     tmp_path / "e").spelling == "latest-keras2"


def test_a_rule_that_reads_the_target_per_finding_stays_on(tmp_path):
    from tflint_gpu.rules.base import BY_TARGET

    class Whole:
        code, migration = "TFG990", True

    class PerFinding:
        code, migration = "TFG991", BY_TARGET

    class Other:
        code = "TFG992"

    settings = config.Settings(root=tmp_path, rules=(Whole, PerFinding, Other), target_version=parse_target("tf2.15"))
    assert settings.rules_for("a.py") == (PerFinding, Other) and settings.silenced_for("a.py") == (Whole,)
    settings = config.Settings(root=tmp_path, rules=(Whole, PerFinding, Other), target_version=parse_target("tf2.16"))
    assert settings.rules_for("a.py") == (Whole, PerFinding, Other) and settings.silenced_for("a.py") == ()


def test_stdin_gets_the_target_of_the_file_it_names(tmp_path, capsys, monkeypatch):
    import io

    project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n", "src/__init__.py": ""})
    monkeypatch.chdir(tmp_path)

    class Stdin:
        buffer = io.BytesIO(BREAKS.encode())

    monkeypatch.setattr("sys.stdin", Stdin)
    assert cli.main(["--no-cache", "--stdin-filename", "src/train.py", "-"]) == 0
    capsys.readouterr()
    Stdin.buffer = io.BytesIO(BREAKS.encode())
    assert cli.main(["--no-cache", "--target-version", "tf2.16", "--stdin-filename", "src/train.py", "-"]) == 1
    assert codes(capsys.readouterr().out) == ["TFG902", "TFG902"]


UNSAFE_ONLY = textwrap.dedent("""\
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(2, name="dense_1")])
    kernels = [v for v in model.trainable_variables if "dense_1/" in v.name]
""")


def test_upgrade_prints_no_command_that_applies_no_fix_and_fixes_what_is_left_on_request(tmp_path, capsys,
                                                                                        monkeypatch):
    project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n", "train.py": UNSAFE_ONLY,
                       "fit.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["upgrade", "--no-cache", "--select", "TFG915", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "Apply the safe fixes" not in out
    assert "No safe fixes: what is listed is fixed by hand, or by the unsafe fixes." in out
    assert "With the unsafe fixes too (read the diff): tflint-gpu upgrade --fix --select TFG915 --unsafe-fixes " \
           "train.py" in out
    # --fix alone applies no unsafe fix; with --unsafe-fixes it does, and nothing is left.
    assert cli.main(["upgrade", "--no-cache", "--select", "TFG915", "--fix", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "Fixed 0 breakages (safe fixes)." in out and "Left to fix, by rule:" in out
    assert (tmp_path / "train.py").read_text() == UNSAFE_ONLY
    assert cli.main(["upgrade", "--no-cache", "--select", "TFG915", "--fix", "--unsafe-fixes", "train.py"]) == 0
    assert "Fixed 1 breakage (safe and unsafe fixes)." in capsys.readouterr().out
    assert '"dense_1/" in v.path' in (tmp_path / "train.py").read_text()
    # JSON says the same.
    assert cli.main(["upgrade", "--no-cache", "--format", "json", "fit.py"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["command"] == "tflint-gpu upgrade --fix fit.py" and report["fixed"] is None
    assert "TF_USE_LEGACY_KERAS=1" in report["keras2"]


def test_upgrade_options_and_errors(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n", "train.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["upgrade", "--no-cache", "--select", "TFG902", "--format", "json", "train.py"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in report["rules"]] == ["TFG902"]
    assert report["command"] == "tflint-gpu upgrade --fix --select TFG902 train.py"
    assert cli.main(["upgrade", "--no-cache", "--exit-zero", "train.py"]) == 0
    capsys.readouterr()
    assert cli.main(["upgrade", "--select", "TFG201", "train.py"]) == 2
    assert "no migration rule matches TFG201" in capsys.readouterr().err
    assert cli.main(["upgrade", "missing.py"]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == "tflint-gpu: error: missing.py: no such file or directory"
    assert cli.main(["upgrade", "-"]) == 2
    assert "stdin" in capsys.readouterr().err
    # A tf_keras file stays Keras 2 under the upgrade's target too: nothing of it breaks.
    (tmp_path / "legacy.py").write_text(BREAKS.replace("import tensorflow as tf", "import tf_keras as keras")
                                        .replace("tf.keras.", "keras."))
    assert "tf_keras as keras" in (tmp_path / "legacy.py").read_text()
    assert cli.main(["upgrade", "--no-cache", "legacy.py"]) == 0
    capsys.readouterr()


def test_odd_project_files_are_read_or_skipped_never_fatal(tmp_path):
    root = project(tmp_path / "p", {"requirements.txt": "\ufefftensorflow==2.14.0\r\n-r ../outside.txt\n",
                                    "setup.py": "(" * 200 + ")" * 200, "setup.cfg": "[[[", "Pipfile": "x = [",
                                    "environment.yml": ": : :", "pyproject.toml": "[project\n"})
    (tmp_path / "outside.txt").write_text("tensorflow==2.4\n")
    (root / "Dockerfile").write_bytes(b"\xff\xfeFROM tensorflow/tensorflow:2.13.0\n")
    found, folder = t.project_target(str(root))
    # The BOM is no part of the name; the include outside the folder is not read; the rest is skipped.
    assert folder == str(root) and found.spelling == "tf2.14"
    assert found.why == ("requirements.txt:1: tensorflow==2.14.0",)


def test_upgrade_names_a_target_version_setting_to_change(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"pyproject.toml": '[tool.tflint-gpu]\ntarget-version = "tf2.15"\n', "train.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "train.py"]) == 0
    assert capsys.readouterr().err == ""  # a target set on purpose needs no note
    assert cli.main(["upgrade", "--no-cache", "train.py"]) == 1
    out = capsys.readouterr().out
    assert f'Pins to change: target-version = "tf2.15" in {tmp_path / "pyproject.toml"}' in out


def test_show_settings_of_folders(tmp_path, capsys, monkeypatch):
    project(tmp_path, {"a.py": BREAKS, "sub/requirements.txt": "tensorflow==2.12\n", "sub/b.py": BREAKS})
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--show-settings", "--format", "json", "a.py", "sub", "sub/b.py", "."]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [s["target-version"] for s in shown] == ["latest", "tf2.12", "tf2.12", "latest"]


def test_tf_keras_is_keras2_where_the_project_targets_keras2():
    """The engine's Keras flavour follows the target: a tf.keras class of a project pinned to TF 2.3 is
    Keras 2 (AutoGraph converts its call; its BatchNormalization takes a tensor `training`)."""
    from tflint_gpu.engine.lint import analyse, lint_source
    from tflint_gpu.rules.base import REGISTRY
    import libcst as cst
    source = ("import tensorflow as tf\n\nclass BN(tf.keras.layers.BatchNormalization):\n"
              "    def call(self, x, training=False):\n        training = tf.logical_and(training, self.trainable)\n"
              "        return super().call(x, training)\n")
    rule = [REGISTRY["TFG102"]]
    assert [f.row for f in lint_source(source, "bn.py", rule).findings] == [6]
    assert lint_source(source, "bn.py", rule, target=parse_target("tf2.3")).findings == []
    assert lint_source(source, "bn.py", rule, target=parse_target("tf2.16-keras2")).findings == []
    module = cst.parse_module(source)
    for target, flavour in ((None, "keras3"), (parse_target("tf2.15"), "tf_keras")):
        ctx = analyse(module, rule, source, target=target)
        cls = next(s for s in ctx.model.scopes if s.kind == "class")
        assert ctx.keras_flavour(cls) == flavour
        assert ctx.migration.legacy_env is (flavour == "tf_keras")


# -- issue 34: a folder without a pin, pin files in other encodings -------------------------


def test_a_folder_without_a_pin_does_not_end_the_search(tmp_path, capsys, monkeypatch):
    """google/automl: the root pins TF 2.15 and efficientdet/tf2/ has a README of its own without a pin:
    its files are the root's (Keras 2), not "latest"; so for a Dockerfile or a pyproject.toml naming
    no TensorFlow. A folder whose files do name TensorFlow decides for itself."""
    project(tmp_path, {"requirements.txt": "tensorflow==2.15.0\n",
                       "efficientdet/tf2/README.md": "# EfficientDet\n\nInstall: ```pip install -r requirements.txt```\n",
                       "efficientdet/tf2/train.py": BREAKS,
                       "serve/Dockerfile": "FROM python:3.11\nRUN pip install numpy\n", "serve/m.py": BREAKS,
                       "lib/pyproject.toml": '[project]\nname = "lib"\ndependencies = ["numpy"]\n', "lib/m.py": BREAKS,
                       "new/requirements.txt": "tensorflow>=2.16\n", "new/m.py": BREAKS})
    for sub in ("efficientdet/tf2", "serve", "lib"):
        assert t.target_folder(str(tmp_path / sub)) == str(tmp_path)
        assert t.project_target(str(tmp_path / sub))[0].spelling == "tf2.15"
    assert t.target_folder(str(tmp_path / "new")) == str(tmp_path / "new")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--no-cache", "."]) == 1
    out, err = capsys.readouterr()
    assert {line.split(":")[0] for line in out.splitlines() if ": TFG" in line} == {"./new/m.py"}
    assert "target tf2.15" in err


_TEXT = "name: p\ndependencies:\n  - python=3.10\n  - tensorflow=2.13\n  - pip:\n    - keras<3\n"


@pytest.mark.parametrize("encoding, bom, newline", [
    ("utf-16-le", b"\xff\xfe", "\n"), ("utf-16-be", b"\xfe\xff", "\n"), ("utf-16-le", b"\xff\xfe", "\r\n"),
    ("utf-8", b"\xef\xbb\xbf", "\n"), ("utf-32-le", b"\xff\xfe\x00\x00", "\n"), ("utf-16-le", b"", "\n"),
    ("utf-16-be", b"", "\r\n"),
], ids=["utf-16-le-bom", "utf-16-be-bom", "utf-16-crlf", "utf-8-bom", "utf-32", "utf-16-le", "utf-16-be"])
def test_pin_files_are_read_in_the_encoding_they_come_in(tmp_path, encoding, bom, newline):
    """A UTF-16 environment.yml (`conda env export > environment.yml` in PowerShell writes one) or
    requirements.txt (`pip freeze > requirements.txt`) is read: a BOM decides, and BOM-less UTF-16 too."""
    root = project(tmp_path, {})

    def encoded(text: str) -> bytes:
        return bom + text.replace("\n", newline).encode(encoding)

    (root / "environment.yml").write_bytes(encoded(_TEXT))
    found, folder = t.project_target(str(root))
    assert (folder, found.spelling, found.why) == (str(root), "tf2.13", ("environment.yml:4: tensorflow=2.13",))
    (root / "environment.yml").unlink()
    (root / "requirements.txt").write_bytes(encoded("numpy\ntensorflow==2.12.1\n"))
    assert t.project_target(str(root))[0].why == ("requirements.txt:2: tensorflow==2.12.1",)


@pytest.mark.parametrize("data", [
    b"\xff\xfetensorflow==2.15\n", b"\xfe\xff\x00t\x00f\xd8\x00", b"\xff\xfe\x00\xd8t\x00", b"\x00" * 9,
    b"tensorflow==2.15\n\xff\xfe\x80\x00", b"\xef\xbb\xbf\xc3(tensorflow==2.15\n", b"\xff\xfe\x00\x00\xff\xff\xff\x00",
])
def test_undecodable_pin_files_never_stop_the_reading(tmp_path, data):
    root = project(tmp_path, {"README.md": "# x\n"})
    for name in ("environment.yml", "requirements.txt", "pyproject.toml", "setup.py", "Dockerfile", "Pipfile"):
        (root / name).write_bytes(data)
    t.project_target(str(root))  # no exception


# -- issue 34: a file that sets TF_USE_LEGACY_KERAS itself ------------------------------------

LEGACY = 'import os\nos.environ.setdefault("TF_USE_LEGACY_KERAS", "1")\n' + BREAKS + textwrap.dedent("""\
    opt = tf.keras.optimizers.Adam(lr=0.1)

    class L(tf.keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight("w", (3,))
""")


def test_a_file_that_sets_tf_use_legacy_keras_is_keras2_whatever_the_project_pins(tmp_path):
    """Run under TF 2.21 with tf_keras installed: set before `import tensorflow` (`os.environ[...] = "1"`,
    `setdefault`, "true", "True"), tf.keras and `from tensorflow.keras import` are tf_keras; "yes", "on",
    "TRUE" leave Keras 3; set after `import tensorflow`, `from tensorflow.keras import` is Keras 3."""
    seen = []

    class Probe:
        code, name, message, needs, node_types, reads_index = "TFG999", "probe", "probe", (), ("Call",), ()

        def visit_Call(self, node, ctx):
            seen.append(ctx.target.spelling)

    for target, spelling in ((None, "latest-keras2"), (parse_target("latest"), "latest-keras2"),
                             (parse_target("tf2.17"), "tf2.17-keras2"), (parse_target("tf2.15"), "tf2.15")):
        seen.clear()
        lint_source(LEGACY, "train.py", [Probe], target=target)
        assert set(seen) == {spelling}
    assert t.file_target(None, LEGACY, "train.py").why == ('train.py:2: os.environ.setdefault("TF_USE_LEGACY_KERAS", '
                                                           '"1")',)
    for value, keras2 in (("1", True), ("true", True), ("True", True), ("yes", False), ("on", False),
                          ("TRUE", False), ("0", False), ("1.0", False)):
        source = LEGACY.replace('"1")', f'"{value}")')
        assert (t.file_target(None, source, "a.py") is not None) is keras2, value
    after = BREAKS + 'import os\nos.environ["TF_USE_LEGACY_KERAS"] = "1"\n'
    assert t.file_target(None, after, "a.py") is None  # after the import: not counted
    assert t.file_target(None, "import os, tensorflow\n" + LEGACY, "a.py") is None
    keras3 = parse_target("latest")
    assert t.file_target(dataclasses_replace(keras3, file_settings=False), LEGACY, "a.py").keras3  # upgrade's


def dataclasses_replace(target, **changes):
    import dataclasses
    return dataclasses.replace(target, **changes)


def test_the_command_line_flake8_and_upgrade_agree_on_a_file_that_sets_tf_use_legacy_keras(tmp_path, capsys,
                                                                                          monkeypatch):
    flake8_api = pytest.importorskip("flake8.api.legacy")
    project(tmp_path, {"README.md": "# x\n", "train.py": LEGACY})
    monkeypatch.chdir(tmp_path)
    cli.main(["--no-cache", "--select", "TFG9", "train.py"])
    cli_out = sorted(line.replace("[*] ", "") for line in capsys.readouterr().out.splitlines() if ": TFG" in line)
    style = flake8_api.get_style_guide(select=["TFG9"])
    style.check_files(["train.py"])
    flake8_out = sorted(line.replace("./", "") for line in capsys.readouterr().out.splitlines())
    # tf_keras's own breakage only (`lr=` is ignored by tf_keras optimizers), the same in both.
    assert [line.split(": ", 1)[1][:6] for line in cli_out] == ["TFG901"]
    assert "tf_keras optimizers ignore `lr=`" in cli_out[0]
    assert flake8_out == cli_out
    # upgrade: moving to Keras 3 breaks this file, and its own line is a pin to change.
    assert cli.main(["upgrade", "--no-cache", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "Nothing the migration rules know of would break" not in out
    assert "TFG902" in out and "TFG916" in out
    assert 'Pins to change: train.py:2: os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")' in out
    # ... and an ordinary run after upgrade (same target spelling, cache on) is not served upgrade's results.
    assert cli.main(["--target-version", "latest", "--select", "TFG9", "train.py"]) == 1
    assert cli.main(["upgrade", "train.py"]) == 1
    assert "TFG902" in capsys.readouterr().out
    assert cli.main(["--target-version", "latest", "--select", "TFG902", "train.py"]) == 0


def test_a_notebooks_own_setting_is_named_by_cell_and_line_and_counts_before_tensorflow_only():
    """A notebook is read cell by cell as the engine reads its code (not its JSON's lines: json.dump writes
    a whole notebook on one), and a setting after the cell importing tensorflow comes too late."""
    cells = [{"cell_type": "markdown", "source": "Set TF_USE_LEGACY_KERAS=1 first"},
             {"cell_type": "code", "source": ["import os\n", 'os.environ["TF_USE_LEGACY_KERAS"] = "1"\n']},
             {"cell_type": "code", "source": "%env TF_USE_LEGACY_KERAS=1\nimport tensorflow as tf\n"
                                             "%env TF_USE_LEGACY_KERAS=True"},
             {"cell_type": "code", "source": "%env TF_USE_LEGACY_KERAS=1"}]
    assert [str(e) for e in from_code(json.dumps({"cells": cells}), "a.ipynb")] == [
        'a.ipynb:cell 1:2: os.environ["TF_USE_LEGACY_KERAS"] = "1"', "a.ipynb:cell 2:1: %env TF_USE_LEGACY_KERAS=1"]
