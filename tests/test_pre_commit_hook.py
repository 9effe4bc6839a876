"""The pre-commit hooks, run the way a user's repository runs them (`pre-commit try-repo`).

pre-commit builds a fresh virtualenv and pip-installs this repository into it,
so this also checks that the package installs on a clean environment.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLE

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("pre-commit") is None, reason="needs git and pre-commit"
)


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("user-repo")
    _git(repo, "init", "-q")
    (repo / "train.py").write_text(SAMPLE)
    (repo / "notes.txt").write_text("not python\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    return repo


def _try_repo(repo: Path, hook: str):
    env = {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home")}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), hook, "--all-files"],
        cwd=repo, capture_output=True, text=True, env=env, timeout=900,
    )


def test_check_hook_reports_and_fails(user_repo):
    proc = _try_repo(user_repo, "tflint-gpu")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "train.py:4:5: TFG201" in proc.stdout
    assert (user_repo / "train.py").read_text() == SAMPLE


def test_fix_hook_rewrites_safe_fixes(user_repo):
    proc = _try_repo(user_repo, "tflint-gpu-fix")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # files were modified; unsafe findings remain
    assert "x = tf.Variable(tf.zeros((3, 3), dtype=tf.float64))" in (user_repo / "train.py").read_text()
