"""Issue 38: the language server skips the files the command line's walk skips (git-ignored,
excluded: ``files.force_excluded``, as the flake8 plugin does) and reads ``.tflint-gpu.toml`` /
``tflint-gpu.toml`` and a changed ``.gitignore`` again (tests/test_discovery.py: the rest)."""
from __future__ import annotations

import subprocess

import pytest

from tests.conftest import SAMPLE, write

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from tests.test_server import _open, after_files_changed, client  # noqa: E402,F401,F811 (the server fixture)


def _git_project(root):
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "pyproject.toml").write_text('[tool.tflint-gpu]\nextend-exclude = ["generated"]\n')
    write(root, ".gitignore", "ignored.py\nbuild_out/\n")


@pytest.mark.asyncio
async def test_the_language_server_skips_what_the_walk_skips(client: LanguageClient):
    _git_project(client.root)
    _, kept = await _open(client, "kept.py", SAMPLE)
    assert "TFG201" in [d.code for d in kept]
    for name in ("ignored.py", "build_out/b.py", "generated/g.py"):
        _, diagnostics = await _open(client, name, SAMPLE)
        assert list(diagnostics) == [], name


@pytest.mark.asyncio
async def test_the_language_server_reads_a_changed_gitignore_and_a_new_dot_tflint_gpu_toml(client: LanguageClient):
    _git_project(client.root)
    uri, diagnostics = await _open(client, "later.py", SAMPLE)
    assert "TFG201" in [d.code for d in diagnostics]
    ignore = client.root / ".gitignore"
    ignore.write_text("later.py\n")
    assert list(await after_files_changed(client, uri, (ignore, types.FileChangeType.Changed))) == []
    ignore.write_text("")
    standalone = write(client.root, ".tflint-gpu.toml", 'ignore = ["TFG201"]\n')
    codes = [d.code for d in await after_files_changed(client, uri, (ignore, types.FileChangeType.Changed),
                                                          (standalone, types.FileChangeType.Created))]
    assert codes and "TFG201" not in codes
