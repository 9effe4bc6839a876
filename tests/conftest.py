from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tflint_gpu import cli

# Three findings: TFG201 with a safe fix (line 4), TFG201 with an unsafe fix (line 5),
# TFG101 with an unsafe fix (line 9).
SAMPLE = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf

    x = tf.Variable(np.zeros((3, 3)))
    v = tf.Variable(np.random.randn(2, 3))

    @tf.function
    def f(t):
        return t - tf.reduce_mean(t).numpy()
    """
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project directory (with its own pyproject.toml), as cwd."""
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-gpu]\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def run_cli(capsys):
    def run(*argv: str):
        code = cli.main(["--no-cache", *argv] if argv and argv[0] not in cli.COMMANDS else list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
