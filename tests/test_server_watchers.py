"""The language server asks a client that can for file watchers over the files it reads again
(``server.watch_files``, as Ruff's server does), and a change of a pin (a requirements file: the
target) checks the open documents again (``server.rereads``)."""
from __future__ import annotations

import asyncio
import re

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from tests.test_server import SERVER, _open, after_files_changed, client  # noqa: E402,F401,F811 (the server fixture)
from tflint_gpu.server import WATCHER_ID, rereads, watched_globs  # noqa: E402

KERAS3_SAVE = """\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.save("model.h5", save_format="h5")
"""


def _capabilities(dynamic: bool) -> types.ClientCapabilities:
    return types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=dynamic)))


async def _registrations(lsp_client: LanguageClient, tmp_path, dynamic: bool):
    """What the server asks to register of a client that does (or does not) register watchers
    dynamically, by the time a document opened after the handshake has its diagnostics."""
    asked = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        asked.extend(params.registrations)

    lsp_client.root = tmp_path
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=_capabilities(dynamic), root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="project")]))
    await _open(lsp_client, "a.py", KERAS3_SAVE)
    await asyncio.sleep(0.2)
    await lsp_client.shutdown_session()
    return asked


@pytest_lsp.fixture(config=SERVER)
async def bare_client(lsp_client: LanguageClient):
    yield


@pytest.mark.asyncio
async def test_a_client_that_registers_watchers_dynamically_is_asked_to_watch(bare_client: LanguageClient,
                                                                               tmp_path):
    asked = await _registrations(bare_client, tmp_path, dynamic=True)
    assert [r.id for r in asked] == [WATCHER_ID]
    assert asked[0].method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = [w["globPattern"] for w in asked[0].register_options["watchers"]]  # options arrive as JSON
    assert globs == watched_globs()
    for expected in ("**/pyproject.toml", "**/.tflint-gpu.toml", "**/tflint-gpu.toml", "**/.gitignore",
                     "**/.git/info/exclude", "**/requirements*.{txt,in}"):
        assert expected in globs


@pytest.mark.asyncio
async def test_a_client_without_dynamic_registration_is_not_asked(bare_client: LanguageClient, tmp_path):
    assert await _registrations(bare_client, tmp_path, dynamic=False) == []


@pytest.mark.asyncio
async def test_a_changed_pin_checks_the_open_documents_again(client: LanguageClient):
    uri, diagnostics = await _open(client, "saving.py", KERAS3_SAVE)
    assert [(d.code, d.range.start.line) for d in diagnostics] == [("TFG901", 3)]  # Keras 3: the newest release
    pins = client.root / "requirements.txt"
    pins.write_text("tensorflow==2.15.0\n")  # Keras 2, which reads save_format=
    assert list(await after_files_changed(client, uri, (pins, types.FileChangeType.Created))) == []


def _glob(pattern: str) -> "re.Pattern[str]":
    """An LSP glob (``**``, ``*``, ``?``, ``{a,b}``, ``[ab]``) as a regular expression over a ``/`` path."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "{":
            end = pattern.index("}", i)
            out, i = out + "(?:" + "|".join(map(re.escape, pattern[i + 1:end].split(","))) + ")", end + 1
        elif pattern[i] == "[":
            end = pattern.index("]", i)
            out, i = out + pattern[i:end + 1], end + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


@pytest.mark.parametrize("path", [
    "p/pyproject.toml", "p/.tflint-gpu.toml", "p/tflint-gpu.toml", "p/.gitignore", "p/.ignore", "p/.git/info/exclude",
    "p/requirements.txt", "p/requirements-dev.in", "p/requirements/base.txt", "p/Dockerfile", "p/Dockerfile.gpu",
    "p/train.dockerfile", "p/docker/Dockerfile", "p/README.md", "p/readme.rst", "p/environment.yml",
    "p/conda-gpu.yaml", "p/env.yml", "p/setup.py", "p/setup.cfg", "p/Pipfile", "p/.env",
])
def test_every_file_read_again_is_watched(path):
    assert rereads(path)
    assert any(_glob(glob).match(path) for glob in watched_globs()), path


@pytest.mark.parametrize("path", ["p/model.py", "p/notes.txt", "p/data/train.csv", "p/setup.json", "p/info/exclude.py"])
def test_other_files_are_neither_read_again_nor_watched(path):
    assert not rereads(path)
    assert not any(_glob(glob).match(path) for glob in watched_globs()), path
