"""The flake8 adapter, through flake8's own API (the plugin is found by its entry point)."""
from __future__ import annotations

import pytest

from tests.conftest import SAMPLE, write

flake8_api = pytest.importorskip("flake8.api.legacy")


def run_flake8(paths, **options):
    style = flake8_api.get_style_guide(select=["TFG"], **options)
    report = style.check_files([str(p) for p in paths])
    return style, report


def test_plugin_reports_same_findings_as_the_cli(project, capsys):
    from tflint_gpu import cli

    path = write(project, "a.py", SAMPLE)
    _, report = run_flake8([path])
    flake8_out = capsys.readouterr().out.splitlines()
    assert report.total_errors == 3
    cli.main(["--no-cache", "a.py"])
    cli_out = [line for line in capsys.readouterr().out.splitlines() if ": TFG" in line]
    normalise = lambda line: line.replace("[*] ", "").split("/")[-1]  # noqa: E731
    assert sorted(map(normalise, flake8_out)) == sorted(map(normalise, cli_out))
    assert any(":4:5: TFG201 " in line for line in flake8_out)  # flake8 columns are 1-based too


def test_flake8_noqa_and_ignore(project, capsys):
    source = SAMPLE.replace("np.zeros((3, 3)))", "np.zeros((3, 3)))  # noqa: TFG201")
    path = write(project, "a.py", source)
    _, report = run_flake8([path])
    assert report.total_errors == 2
    _, report = run_flake8([path], extend_ignore=["TFG101"])
    assert report.total_errors == 1
    capsys.readouterr()


def test_flake8_on_a_file_without_tensorflow(project, capsys):
    path = write(project, "plain.py", "import numpy as np\nx = np.zeros(3)\n")
    _, report = run_flake8([path])
    assert report.total_errors == 0


@pytest.mark.parametrize(
    "pyproject,message",
    [
        ("[tool.tflint-gpu\n", "invalid TOML"),
        ('[tool.tflint-gpu]\nunsafe-fixes = "false"\n', 'unsafe-fixes: expected a boolean, got string "false"'),
        ('[tool.tflint-gpu]\nignore = "TFG201"\n', "ignore: expected a list of strings"),
        ('[tool.tflint-gpu]\nselect = ["XYZ"]\n', "select: unknown rule selector `XYZ`"),
        ("[tool.tflint-gpu]\nselekt = []\n", "unknown option(s) in [tool.tflint-gpu]: selekt"),
    ],
)
def test_flake8_reports_a_configuration_error_instead_of_using_defaults(project, pyproject, message):
    """flake8 shows the error (naming the pyproject.toml) and exits non-zero; no traceback, no silent defaults."""
    import subprocess
    import sys

    (project / "pyproject.toml").write_text(pyproject)
    write(project, "clean.py", "import tensorflow as tf\nx = tf.zeros(3)\n")
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TFG", "clean.py"],
                          capture_output=True, text=True, cwd=project)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert message in output and str(project / "pyproject.toml") in output
    assert "Traceback" not in output


def test_flake8_honours_the_file_level_noqa_comment(project, capsys):
    path = write(project, "a.py", '"""Generated."""\n# tflint-gpu: noqa\n' + SAMPLE)
    _, report = run_flake8([path])
    assert report.total_errors == 0
    capsys.readouterr()
