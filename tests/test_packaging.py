"""The pre-commit manifest, the entry points, and the README's promises."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import site
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_pre_commit_manifest_is_valid():
    clientlib = pytest.importorskip("pre_commit.clientlib")
    hooks = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert {h["id"] for h in hooks} == {"tflint-gpu", "tflint-gpu-fix"}
    by_id = {h["id"]: h for h in hooks}
    assert by_id["tflint-gpu-fix"]["entry"].split()[:3] == ["tflint-gpu", "check", "--fix"]
    assert all(h["language"] == "python" for h in hooks)


def test_entry_points_are_registered():
    eps = metadata.entry_points()
    scripts = eps.select(group="console_scripts") if hasattr(eps, "select") else eps["console_scripts"]
    assert any(ep.name == "tflint-gpu" and ep.value == "tflint_gpu.cli:main" for ep in scripts)
    plugins = eps.select(group="flake8.extension") if hasattr(eps, "select") else eps["flake8.extension"]
    assert any(ep.name == "TFG" and ep.value == "tflint_gpu.flake8_plugin:Flake8Plugin" for ep in plugins)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", readme, re.S)
    test_command = [c.strip() for c in commands if "pytest" in c]
    assert test_command, "the README gives no test command"
    assert test_command[0] in ci


def test_readme_lists_every_rule():
    from tflint_gpu.rules.base import all_rules

    readme = (ROOT / "README.md").read_text()
    for rule in all_rules():
        assert f"`{rule.code}`" in readme, f"{rule.code} missing from the README's rules table"


# -- installs: the examples ship as package data -----------------------------

HAS_TENSORFLOW = importlib.util.find_spec("tensorflow") is not None
_COPY_IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                      ".hypothesis", ".tflint_gpu_cache", "*.whl")


def _run(command, *, cwd, timeout=300, drop=()):
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", *drop)}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    return done


def _site_dirs():
    """Where this interpreter's packages are: its site-packages (a virtualenv's own, and the base's only
    when the virtualenv includes them) and the user's, never the checkout or the tests' folder."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def _venv(path):
    """A fresh virtualenv that sees this interpreter's packages (TensorFlow, LibCST, pip) but not its scripts.

    Not ``venv --system-site-packages``: made from a virtualenv (the README's commands run in one), that
    shows the base interpreter's packages, not this one's. A .pth file puts this interpreter's site
    directories after the new one's own, as plain paths: their .pth files (this checkout's editable
    install among them) are not run, so only what is installed in the new virtualenv is tflint-gpu."""
    done = _run([sys.executable, "-m", "venv", "--without-pip", path], cwd=path.parent)
    assert done.returncode == 0, done.stderr
    bin_dir = path / ("Scripts" if os.name == "nt" else "bin")
    done = _run([bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                cwd=path.parent)
    assert done.returncode == 0, done.stderr
    (Path(done.stdout.strip()) / "_outer_site_packages.pth").write_text(
        "".join(f"{d}\n" for d in _site_dirs()), encoding="utf-8")
    return bin_dir / "python", bin_dir / "tflint-gpu"


def _install(python, *requirement, cwd):
    # --ignore-installed: this interpreter's own (editable) tflint-gpu must not satisfy the requirement
    done = _run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--ignore-installed",
                 "--quiet", *requirement], cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr


def _package_file(python, cwd):
    done = _run([python, "-c", "import tflint_gpu; print(tflint_gpu.__file__)"], cwd=cwd)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip()).resolve()


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A copy of this checkout's source (so that building leaves nothing in the working tree)."""
    root = tmp_path_factory.mktemp("source") / "tflint-gpu"
    shutil.copytree(ROOT, root, ignore=_COPY_IGNORE)
    return root


@pytest.fixture(scope="module")
def built(source, tmp_path_factory):
    """`python -m build` on the source, as a maintainer publishes it: the sdist, then the wheel built from
    the sdist. With this interpreter's setuptools (--no-isolation: no download; the test extra pins
    setuptools>=77, as build-system.requires does). Returns (its output, the sdist, the wheel)."""
    dist = tmp_path_factory.mktemp("dist")
    # PYTHONDONTWRITEBYTECODE (set here, not by a user who builds) makes distutils print
    # "byte-compiling is disabled" warnings that say nothing about the package
    done = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, source], cwd=source,
                drop=("PYTHONDONTWRITEBYTECODE",))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    (sdist,) = dist.glob("tflint_gpu-*.tar.gz")
    (wheel,) = dist.glob("tflint_gpu-*.whl")
    return output, sdist, wheel


@pytest.fixture(scope="module")
def wheel_env(built, tmp_path_factory):
    """The wheel `python -m build` built, installed in a fresh virtualenv: (python, tflint-gpu script, cwd)."""
    base = tmp_path_factory.mktemp("wheel")
    wheel = built[2]
    python, script = _venv(base / "venv")
    _install(python, wheel, cwd=base)
    elsewhere = base / "elsewhere"  # outside the repository and the source copy
    elsewhere.mkdir()
    return python, script, elsewhere, wheel


def test_package_list_names_every_package():
    """pyproject lists the packages explicitly (to map tflint_gpu.examples to examples/): none may be missing."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "tflint_gpu").rglob("__init__.py")}
    # the packages under tflint_gpu/, and the folders mapped into it (examples/ among them)
    assert set(config["packages"]) == on_disk | set(config["package-dir"])
    assert config["package-dir"]["tflint_gpu.examples"] == "examples"


def test_wheel_ships_every_example_pair_and_the_results(wheel_env):
    names = set(zipfile.ZipFile(wheel_env[3]).namelist())
    examples = sorted(p.relative_to(ROOT / "examples").as_posix() for p in (ROOT / "examples").glob("TFG*/*.py"))
    assert examples
    missing = [name for name in examples + ["README.md", "RESULTS.md"] if f"tflint_gpu/examples/{name}" not in names]
    assert not missing


# -- publishing: what `python -m build` prints and what PyPI would read ---------

def test_build_prints_no_warning(built):
    """No deprecated `project.license` table, no "Package 'tflint_gpu.examples.TFG…' is absent from the
    `packages` configuration" (one per folder of examples/ while include-package-data took them)."""
    output = built[0]
    # every line but those naming a file it copies or adds (a module's name may hold "deprecated")
    said = [line for line in output.splitlines() if " -> " not in line and not line.startswith("adding '")]
    warned = [line for line in said if re.search(r"warn|deprecat|is absent from the", line, re.I)]
    assert not warned, "\n".join(warned)
    assert "Successfully built tflint_gpu-" in output


def test_twine_check_strict_passes(built):
    done = _run([sys.executable, "-m", "twine", "check", "--strict", built[1], built[2]], cwd=built[1].parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def _wheel_metadata(wheel):
    from email.parser import Parser

    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return Parser().parsestr(archive.read(name).decode("utf-8"))


def test_distributions_carry_the_license(built):
    _, sdist, wheel = built
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("Copyright 2026 The tflint-gpu authors\n")
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    with zipfile.ZipFile(wheel) as archive:
        (licence,) = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        assert archive.read(licence).decode("utf-8") == text
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        assert archive.extractfile(f"{top}/LICENSE").read().decode("utf-8") == text
    metadata = _wheel_metadata(wheel)
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["Author"] == "The tflint-gpu authors"


def test_classifiers_are_known_and_match_requires_python(built):
    """The classifiers PyPI would accept (trove-classifiers is PyPA's list); the Python versions are the
    ones from requires-python up; no license classifier beside the SPDX expression."""
    trove = pytest.importorskip("trove_classifiers")
    metadata = _wheel_metadata(built[2])
    classifiers = metadata.get_all("Classifier")
    assert set(classifiers) <= trove.classifiers, set(classifiers) - trove.classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]
    for wanted in ("Development Status :: 3 - Alpha", "Intended Audience :: Developers",
                   "Programming Language :: Python :: 3 :: Only"):
        assert wanted in classifiers
    assert any(c.startswith("Operating System :: ") for c in classifiers)
    assert any(c.startswith("Environment :: ") for c in classifiers)
    versions = sorted(tuple(map(int, c.rsplit(" ", 1)[1].split("."))) for c in classifiers
                      if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert metadata["Requires-Python"] == ">=3.9"
    assert versions == [(3, minor) for minor in range(9, 14)]


def test_sdist_ships_every_example_pair(built):
    """The wheel is built from the sdist: the examples must be in it too."""
    with tarfile.open(built[1]) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    examples = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").glob("TFG*/*.py"))
    assert examples
    assert not [name for name in examples + ["examples/README.md", "examples/RESULTS.md"] if name not in names]


def test_wheel_install_shows_a_rule_with_its_example_pair(wheel_env):
    python, script, elsewhere, _ = wheel_env
    # the virtualenv runs the wheel's copy, not this checkout's (editable) one
    assert (elsewhere.parent / "venv").resolve() in _package_file(python, elsewhere).parents
    done = _run([script, "rule", "TFG201"], cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    before = (ROOT / "examples" / "TFG201" / "before.py").read_text(encoding="utf-8").rstrip()
    after = (ROOT / "examples" / "TFG201" / "after.py").read_text(encoding="utf-8").rstrip()
    assert f"## Example pair: examples/TFG201/before.py\n```python\n{before}\n```" in done.stdout
    assert f"## Example pair: examples/TFG201/after.py\n```python\n{after}\n```" in done.stdout
    assert "## Last recorded measurement (examples/RESULTS.md)" in done.stdout and "| [TFG201]" in done.stdout


@pytest.mark.skipif(not HAS_TENSORFLOW, reason="tensorflow is not installed: the examples cannot run")
def test_wheel_install_verifies_a_rule_on_cpu(wheel_env):
    python, script, elsewhere, _ = wheel_env
    done = _run([script, "verify", "--rule", "TFG201", "--device", "cpu", "--size", "small", "--repeat", "1",
                 "--format", "json"], cwd=elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    (record,) = json.loads(done.stdout)
    assert (record["rule"], record["verdict"]) == ("TFG201", "equivalent"), record["evidence"]


def test_editable_install_lints_the_examples_from_the_repository_root(source, tmp_path):
    """The README's first command, `pip install -e . && tflint-gpu examples/`, in a fresh virtualenv."""
    python, script = _venv(tmp_path / "venv")
    _install(python, "-e", source, cwd=source)
    assert source.resolve() in _package_file(python, tmp_path).parents
    done = _run([script, "examples/"], cwd=source)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "examples/TFG201/before.py" in done.stdout
    done = _run([script, "rule", "TFG201"], cwd=tmp_path)
    assert done.returncode == 0 and "## Example pair: examples/TFG201/before.py" in done.stdout, done.stderr
