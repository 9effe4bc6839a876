"""The language server end to end: a real LSP client (pytest-lsp) talks to ``tflint-gpu server`` over stdio."""
from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from tests.conftest import write  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# TFG904 (a deprecated alias): a safe fix. TFG905 (`tf.gather`'s third positional argument): an unsafe one.
SOURCE = textwrap.dedent("""\
    import tensorflow as tf

    ds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.experimental.AUTOTUNE)
    """)
UNSAFE = textwrap.dedent("""\
    import tensorflow as tf

    y = tf.gather(tf.ones((3, 4)), [0, 1], 1)
    """)


def _env():
    import os

    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "tflint_gpu", "server"], server_env=_env())


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    (root / "pyproject.toml").write_text("[tool.tflint-gpu]\n")
    lsp_client.root = root
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="project")]))
    yield
    await lsp_client.shutdown_session()


async def _diagnostics(client: LanguageClient, uri: str, timeout: float = 60.0):
    """Wait for the diagnostics of ``uri`` published after this call."""
    client.diagnostics.pop(uri, None)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while uri not in client.diagnostics:
        if loop.time() > deadline:
            raise AssertionError(f"no diagnostics for {uri}")
        await asyncio.sleep(0.05)
    return client.diagnostics[uri]


async def _open(client: LanguageClient, name: str, text: str):
    uri = write(client.root, name, text).as_uri()  # its folders made
    waiting = asyncio.ensure_future(_diagnostics(client, uri))
    await asyncio.sleep(0)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri, await waiting


def _apply(text: str, edits) -> str:
    lines = text.split("\n")

    def offset(position: types.Position) -> int:  # the texts here are ASCII: UTF-16 units are characters
        return sum(len(line) + 1 for line in lines[:position.line]) + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
        lines = text.split("\n")
    return text


def _actions(client: LanguageClient, uri: str, diagnostic, only=None):
    return client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic], only=only)))


@pytest.mark.asyncio
async def test_open_publishes_the_findings_with_code_and_position(client: LanguageClient):
    uri, diagnostics = await _open(client, "pipe.py", SOURCE)
    codes = [(d.code, d.range.start.line, d.range.start.character) for d in diagnostics]
    assert ("TFG904", 2, 48) in codes
    found = next(d for d in diagnostics if d.code == "TFG904")
    assert found.source == "tflint-gpu" and found.severity == types.DiagnosticSeverity.Warning
    assert found.code_description.href == (ROOT / "docs" / "rules" / "TFG904.md").as_uri()  # the rule's page


@pytest.mark.asyncio
async def test_the_quick_fix_applied_removes_the_finding(client: LanguageClient):
    uri, diagnostics = await _open(client, "fixme.py", SOURCE)
    finding = next(d for d in diagnostics if d.code == "TFG904")
    actions = await _actions(client, uri, finding, only=[types.CodeActionKind.QuickFix])
    fix = next(a for a in actions if "noqa" not in a.title)
    assert "(unsafe)" not in fix.title and fix.is_preferred
    fixed = _apply(SOURCE, fix.edit.changes[uri])
    assert "prefetch(tf.data.AUTOTUNE)" in fixed
    waiting = asyncio.ensure_future(_diagnostics(client, uri))
    await asyncio.sleep(0)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
    assert "TFG904" not in [d.code for d in await waiting]


@pytest.mark.asyncio
async def test_noqa_and_fix_all_actions(client: LanguageClient):
    uri, diagnostics = await _open(client, "noqa.py", SOURCE)
    finding = next(d for d in diagnostics if d.code == "TFG904")
    actions = await _actions(client, uri, finding)
    noqa = next(a for a in actions if "noqa" in a.title)
    assert _apply(SOURCE, noqa.edit.changes[uri]).split("\n")[2].endswith("  # noqa: TFG904")
    fix_all = await _actions(client, uri, finding, only=["source.fixAll.tflint-gpu"])
    assert [a.kind for a in fix_all] == ["source.fixAll.tflint-gpu"]
    assert "prefetch(tf.data.AUTOTUNE)" in _apply(SOURCE, fix_all[0].edit.changes[uri])


@pytest.mark.asyncio
async def test_an_unsafe_fix_is_labelled(client: LanguageClient):
    uri, diagnostics = await _open(client, "unsafe.py", UNSAFE)
    finding = next(d for d in diagnostics if d.code == "TFG905")
    assert finding.data["fix"] == "unsafe"
    fix = next(a for a in await _actions(client, uri, finding) if "noqa" not in a.title)
    assert "(unsafe)" in fix.title and not fix.is_preferred
    assert "axis=1" in _apply(UNSAFE, fix.edit.changes[uri])
    assert not await _actions(client, uri, finding, only=["source.fixAll.tflint-gpu"])  # safe fixes only


@pytest.mark.asyncio
async def test_hover_shows_the_rule(client: LanguageClient):
    uri, diagnostics = await _open(client, "hover.py", SOURCE)
    finding = next(d for d in diagnostics if d.code == "TFG904")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=finding.range.start))
    assert hover is not None and "TFG904" in hover.contents.value and "Why is this bad?" in hover.contents.value


GLOBAL_COUNTER = textwrap.dedent("""\
    import tensorflow as tf

    calls = 0


    @tf.function
    def step(x):
        global calls
        calls += 1
        return x * 2
    """)


@pytest.mark.asyncio
async def test_hover_is_the_summary_and_why_with_the_link(client: LanguageClient):
    """Not the whole page (3,729 characters for TFG103 before): the summary, "Why is this bad?", the
    fix's safety and the link the diagnostic's codeDescription has, the rule's page."""
    from urllib.parse import unquote, urlparse

    from tflint_gpu.rules import docs
    from tflint_gpu.rules.base import all_codes

    uri, diagnostics = await _open(client, "counter.py", GLOBAL_COUNTER)
    finding = next(d for d in diagnostics if d.code == "TFG103")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=finding.range.start))
    text = hover.contents.value
    rule = next(rule for rule in all_codes() if rule.code == "TFG103")
    assert len(text) < 1500, len(text)
    assert text.startswith("### TFG103 trace-time-side-effect\n\n" + rule.summary())
    assert docs.section(rule, "Why is this bad?") in text and "Fix: unsafe." in text
    assert "## What it does" not in text and docs.section(rule, "What it does") not in text
    url = finding.code_description.href
    assert url == docs.rule_url("TFG103") and f"]({url})" in text
    page = Path(unquote(urlparse(url).path))  # the page exists: the file:// URI of docs/rules/TFG103.md
    assert page.read_text(encoding="utf-8").startswith("# trace-time-side-effect (TFG103)")


@pytest.mark.asyncio
async def test_a_syntax_error_is_one_diagnostic_and_the_server_goes_on(client: LanguageClient):
    uri, diagnostics = await _open(client, "broken.py", "import tensorflow as tf\ndef f(:\n")
    assert [(d.code, d.range.start.line) for d in diagnostics] == [("invalid-syntax", 1)]
    assert diagnostics[0].severity == types.DiagnosticSeverity.Error
    uri, diagnostics = await _open(client, "after.py", SOURCE)
    assert "TFG904" in [d.code for d in diagnostics]


async def after_files_changed(client: LanguageClient, uri: str, *changes):
    """The diagnostics ``uri`` gets once the client says these files changed: (path, FileChangeType)."""
    waiting = asyncio.ensure_future(_diagnostics(client, uri))
    await asyncio.sleep(0)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=path.as_uri(), type=kind) for path, kind in changes]))
    return await waiting


@pytest.mark.asyncio
async def test_a_configuration_change_is_read_again(client: LanguageClient):
    uri, diagnostics = await _open(client, "config.py", SOURCE)
    assert "TFG904" in [d.code for d in diagnostics]
    config = client.root / "pyproject.toml"
    config.write_text('[tool.tflint-gpu]\nignore = ["TFG904"]\n')
    changed = (config, types.FileChangeType.Changed)
    assert "TFG904" not in [d.code for d in await after_files_changed(client, uri, changed)]
    config.write_text('[tool.tflint-gpu]\nselect = ["NOPE"]\n')
    broken = await after_files_changed(client, uri, changed)
    assert [d.severity for d in broken] == [types.DiagnosticSeverity.Error]
    assert "configuration error" in broken[0].message


def _cell_uri(notebook: Path, i: int) -> str:
    return f"vscode-notebook-cell:{notebook}#C{i}"


@pytest.mark.asyncio
async def test_a_notebook_gets_findings_and_fixes_in_its_cells(client: LanguageClient):
    notebook = client.root / "train.ipynb"
    notebook.write_text("{}")
    cells = [("import tensorflow as tf", types.NotebookCellKind.Code),
             ("# Data\nThe pipeline.", types.NotebookCellKind.Markup),
             ("ds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.experimental.AUTOTUNE)",
              types.NotebookCellKind.Code),
             ("def f(:\n    pass", types.NotebookCellKind.Code)]
    uris = [_cell_uri(notebook, i) for i in range(len(cells))]
    waiting = {uri: asyncio.ensure_future(_diagnostics(client, uri)) for k, uri in enumerate(uris)
               if cells[k][1] == types.NotebookCellKind.Code}
    await asyncio.sleep(0)
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=notebook.as_uri(), notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kind, document=uri) for (_, kind), uri in zip(cells, uris)]),
        cell_text_documents=[types.TextDocumentItem(uri=uri, language_id="python" if kind == types.NotebookCellKind.Code
                                                    else "markdown", version=1, text=text)
                             for (text, kind), uri in zip(cells, uris)]))
    published = {uri: await w for uri, w in waiting.items()}
    assert list(published[uris[0]]) == []
    found = [(d.code, d.range.start.line, d.range.start.character) for d in published[uris[2]]]
    assert ("TFG904", 0, 48) in found  # the cell's own line and column
    assert [(d.code, d.range.start.line) for d in published[uris[3]]] == [("invalid-syntax", 0)]
    finding = next(d for d in published[uris[2]] if d.code == "TFG904")
    actions = await _actions(client, uris[2], finding, only=[types.CodeActionKind.QuickFix])
    fix = next(a for a in actions if "noqa" not in a.title)
    assert list(fix.edit.changes) == [uris[2]]
    fixed = _apply(cells[2][0], fix.edit.changes[uris[2]])
    assert fixed == "ds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.AUTOTUNE)"
    # A cell that does not parse: the notebook is not fixed as a whole (as `--fix` leaves it).
    assert not await _actions(client, uris[2], finding, only=["source.fixAll.tflint-gpu"])
    waiting = asyncio.ensure_future(_diagnostics(client, uris[2]))
    await asyncio.sleep(0)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=notebook.as_uri(), version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=uris[2], version=2),
                changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)])]))))
    assert "TFG904" not in [d.code for d in await waiting]


@pytest.mark.asyncio
async def test_a_notebook_name_bound_in_an_earlier_cell_is_read(client: LanguageClient):
    """The cells are one program: `tf` imported in cell 1 is TensorFlow in cell 2 (as the command line reads it)."""
    notebook = client.root / "alone.ipynb"
    notebook.write_text("{}")
    uris = [_cell_uri(notebook, 0), _cell_uri(notebook, 1)]
    uris.append(_cell_uri(notebook, 2))
    texts = ["import tensorflow as tf\n", "y = tf.gather(tf.ones((3, 4)), [0, 1], 1)\n",
             "ds = tf.data.Dataset.range(8).prefetch(tf.data.experimental.AUTOTUNE)\n"]
    waiting = asyncio.ensure_future(_diagnostics(client, uris[1]))
    await asyncio.sleep(0)
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=notebook.as_uri(), notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=u) for u in uris]),
        cell_text_documents=[types.TextDocumentItem(uri=u, language_id="python", version=1, text=t)
                             for u, t in zip(uris, texts)]))
    assert [d.code for d in await waiting] == ["TFG905"]
    finding = next(d for d in client.diagnostics[uris[2]] if d.code == "TFG904")
    fix_all = await _actions(client, uris[2], finding, only=["source.fixAll.tflint-gpu"])
    changes = fix_all[0].edit.changes
    assert list(changes) == [uris[2]]  # the unsafe TFG905 fix of cell 2 is not applied
    assert _apply(texts[2], changes[uris[2]]) == "ds = tf.data.Dataset.range(8).prefetch(tf.data.AUTOTUNE)\n"


def neovim_snippet() -> str:
    """The README's Neovim snippet (the ```lua block of its Neovim item), as a user copies it."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    item = readme[readme.index("\n* Neovim"):]
    block = re.search(r"```lua\n(.*?)```", item, re.S).group(1)
    return textwrap.dedent(block)


def test_neovim_receives_the_diagnostics_and_applies_the_quick_fix(tmp_path):
    """A real editor, once: headless Neovim runs the README's snippet as its init.lua (0.7.2 here, as
    Debian 12 ships it: the snippet's 0.7 branch; 0.8+ takes vim.lsp.start), which starts `tflint-gpu
    server` on opening a Python file; Neovim receives the diagnostic, applies the quick fix through
    `vim.lsp.buf.code_action`, saves the file, and attaches a second Python file to the same server."""
    import os
    import shutil
    import subprocess

    nvim = shutil.which("nvim")
    if nvim is None:
        if os.environ.get("TFLINT_GPU_REQUIRE_NVIM"):  # .ci/run installed it: the test must run
            pytest.fail("nvim is not on PATH")
        pytest.skip("Neovim is not installed (Debian: apt-get install neovim)")
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-gpu]\n")
    path = tmp_path / "pipe.py"
    path.write_text(SOURCE)
    (tmp_path / "second.py").write_text("x = 1\n")
    init = tmp_path / "config" / "nvim" / "init.lua"
    init.parent.mkdir(parents=True)
    init.write_text(neovim_snippet())
    # `tflint-gpu` on PATH is this checkout's, run by this interpreter (the snippet's cmd, unchanged)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "tflint-gpu"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tflint_gpu "$@"\n')
    shim.chmod(0o755)
    log = tmp_path / "nvim.log"
    env = _env()
    env.update(NVIM_OUT=str(log), NVIM_FILE=str(path), NVIM_SECOND=str(tmp_path / "second.py"),
               PATH=os.pathsep.join([str(bin_dir), env.get("PATH", "")]),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"))
    script = ROOT / "tests" / "fixtures" / "nvim" / "quickfix.lua"
    # the user's init.lua (not --clean, which skips it and filetype detection), no shada, no plugins
    subprocess.run([nvim, "--headless", "-u", str(init), "-i", "NONE", "--noplugin", "-c", f"luafile {script}"],
                   env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=300)
    lines = log.read_text().splitlines()
    assert lines[0].startswith("nvim "), lines
    assert lines[1].startswith("diagnostic TFG904 2:48 "), lines
    assert "chose tflint-gpu: Use `tf.data.AUTOTUNE` (TFG904)" in lines, lines
    assert lines[-3:] == ["applied true", "cleared true", "second attached true, same server true"], lines
    assert path.read_text() == SOURCE.replace("tf.data.experimental.AUTOTUNE", "tf.data.AUTOTUNE")


def test_the_readme_s_neovim_snippet_runs_on_neovim_0_7():
    """Debian 12's Neovim is 0.7.2: no vim.lsp.start, no vim.fs (0.8). The snippet calls them only
    where they exist; what it calls unguarded exists in 0.7."""
    snippet = neovim_snippet()
    assert "vim.fs." not in snippet
    guarded = snippet[snippet.index("if vim.lsp.start then"):snippet.index("else  -- Neovim 0.7")]
    assert snippet.count("vim.lsp.start(") == guarded.count("vim.lsp.start(") == 1
    for name in ("vim.api.nvim_create_autocmd", "vim.lsp.start_client", "vim.lsp.buf_attach_client",
                 "vim.lsp.get_client_by_id", "vim.fn.findfile"):
        assert name in snippet


# -- availability (issue 34): a raw JSON-RPC client over the server's stdio ----------------------

class RawClient:
    """Talks LSP to ``tflint-gpu server`` byte by byte: any message can be sent (malformed ones
    too), every publication is kept with its version and time, and the exit code is read."""

    def __init__(self, root: Path) -> None:
        import json
        import subprocess
        import threading

        self.json = json
        self.process = subprocess.Popen([sys.executable, "-m", "tflint_gpu", "server"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(), cwd=root)
        self.lock = threading.Condition()
        self.responses = {}
        self.published = []  # (time, uri, version, diagnostics)
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        self.notify("initialized", {})

    def _read(self) -> None:
        import time

        stream = self.process.stdout
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = self.json.loads(stream.read(length))
            with self.lock:
                if message.get("method") == "textDocument/publishDiagnostics":
                    params = message["params"]
                    self.published.append((time.monotonic(), params["uri"], params.get("version"),
                                           params["diagnostics"]))
                elif "method" not in message:
                    self.responses[message.get("id")] = message
                self.lock.notify_all()

    def send_bytes(self, body: bytes) -> None:
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_bytes(self.json.dumps(message).encode("utf-8"))

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def answer(self, ident, timeout: float = 60.0) -> dict:
        with self.lock:
            assert self.lock.wait_for(lambda: ident in self.responses, timeout=timeout), f"no answer to {ident}"
            return self.responses.pop(ident)

    def request(self, method: str, params, timeout: float = 60.0) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer(self.next_id, timeout)

    def publications(self, uri: str):
        with self.lock:
            return [p for p in self.published if p[1] == uri]

    def wait_published(self, uri: str, count: int = 1, timeout: float = 120.0):
        with self.lock:
            assert self.lock.wait_for(lambda: len([p for p in self.published if p[1] == uri]) >= count,
                                      timeout=timeout), f"no diagnostics for {uri}"
            return [p for p in self.published if p[1] == uri][count - 1]

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                              "version": version, "text": text}})
        return uri

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    def end(self, shutdown: bool = True) -> int:
        if shutdown:
            self.request("shutdown", None)
        self.notify("exit", None)
        return self.process.wait(timeout=60)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def raw(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-gpu]\n")
    client = RawClient(tmp_path)
    client.root = tmp_path
    yield client
    client.kill()


PROC = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")


def _large_document(functions: int) -> str:
    """Realistic TensorFlow code, ``functions`` defs long (about 140 bytes each)."""
    parts = ["import tensorflow as tf\n"]
    for i in range(functions):
        parts.append(f"\n\ndef step_{i}(x):\n"
                     f"    ds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.experimental.AUTOTUNE)\n"
                     f"    return tf.reduce_sum(x) + {i}, ds\n")
    return "".join(parts)


def test_a_small_document_is_answered_while_a_large_one_is_checked(raw):
    """A hover and an edit of a small document are answered while a large document (seconds of
    analysis, minutes on a loaded machine) is being checked: the message loop never analyses."""
    import time

    small = raw.open(raw.root / "small.py", SOURCE)
    finding = next(d for d in raw.wait_published(small)[3] if d["code"] == "TFG904")
    large = raw.open(raw.root / "large.py", _large_document(8000))  # 1.1 MB
    time.sleep(0.5)  # the large document's check has started
    asked = time.monotonic()
    hover = raw.request("textDocument/hover", {"textDocument": {"uri": small},
                                               "position": finding["range"]["start"]}, timeout=600)
    answered = time.monotonic()
    assert "TFG904" in hover["result"]["contents"]["value"]
    actions = raw.request("textDocument/codeAction", {
        "textDocument": {"uri": small}, "range": finding["range"],
        "context": {"diagnostics": [finding], "only": ["quickfix"]}}, timeout=600)["result"]
    acted = time.monotonic()
    assert any("tf.data.AUTOTUNE" in a["title"] for a in actions)
    raw.notify("textDocument/didChange", {"textDocument": {"uri": small, "version": 2},
                                          "contentChanges": [{"text": SOURCE + "\nx = 1\n"}]})
    changed = raw.wait_published(small, 2, timeout=600)
    assert changed[2] == 2 and "TFG904" in [d["code"] for d in changed[3]]
    assert not raw.publications(large)  # all of this while the large document was being checked
    assert answered - asked < 5.0 and acted - answered < 5.0 and changed[0] - acted < 5.0
    raw.notify("textDocument/didClose", {"textDocument": {"uri": large}})  # its check is ended
    assert raw.end() == 0


def test_a_check_of_an_older_version_publishes_nothing(raw):
    """A document changed while its check runs: only its newest version's diagnostics are published."""
    path = raw.root / "edited.py"
    uri = raw.open(path, _large_document(8000))
    import time

    time.sleep(0.5)
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                          "contentChanges": [{"text": SOURCE}]})
    first = raw.wait_published(uri, timeout=600)
    assert first[2] == 2 and [d["code"] for d in first[3]].count("TFG904") == 1
    time.sleep(1.0)
    assert [p[2] for p in raw.publications(uri)] == [2]
    assert raw.end() == 0


def test_a_burst_of_edits_is_checked_once_at_its_latest_version(raw):
    """A document checked in the server's own worker thread (under 64 KiB) edited ten times while
    its first check runs or waits: one publication, of the last version (no stale diagnostics, no
    queue of old versions)."""
    import time

    text = SOURCE + _large_document(300)  # 42 KB
    uri = raw.open(raw.root / "typed.py", text)
    for version in range(2, 12):
        text += f"\nx_{version} = {version}\n"
        raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                              "contentChanges": [{"text": text}]})
    assert raw.wait_published(uri, timeout=600)[2] == 11
    time.sleep(2.0)
    assert [p[2] for p in raw.publications(uri)] == [11]
    assert raw.end() == 0


@PROC
def test_a_save_does_not_start_a_large_documents_check_again(raw):
    """Saving a document whose check is under way (or done) for the text saved lets that check go
    on: the same child process publishes, once."""
    import time

    path = raw.root / "saved.py"
    uri = raw.open(path, _large_document(8000))
    children = Path(f"/proc/{raw.process.pid}/task/{raw.process.pid}/children")
    deadline = time.monotonic() + 120
    while not children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.05)
    first = children.read_text().split()
    assert first
    raw.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    time.sleep(1.0)
    assert children.read_text().split() in (first, [])  # the same child, or it has finished
    raw.wait_published(uri, timeout=600)
    time.sleep(1.0)
    assert len(raw.publications(uri)) == 1
    raw.notify("textDocument/didSave", {"textDocument": {"uri": uri}})  # checked already: nothing to do
    time.sleep(1.0)
    assert not children.read_text().split() and len(raw.publications(uri)) == 1
    assert raw.end() == 0


@PROC
def test_a_closed_large_document_leaves_no_memory_behind(raw):
    """What a document's check took is given back when it closes: the server holds about no more
    after ``didClose`` of a 420 KB document than before it was opened (generous: 60 MiB; a server
    that checked it on its own threads still held 305 MiB more)."""
    import time

    small = raw.open(raw.root / "small.py", SOURCE)
    raw.wait_published(small)
    time.sleep(0.5)
    before = raw.rss_mib()
    large = raw.open(raw.root / "large.py", _large_document(3000))
    assert len(raw.wait_published(large, timeout=900)[3]) >= 3000
    raw.notify("textDocument/didClose", {"textDocument": {"uri": large}})
    raw.request("textDocument/hover", {"textDocument": {"uri": small}, "position": {"line": 0, "character": 0}})
    time.sleep(1.0)
    assert raw.rss_mib() - before < 60


def test_every_request_gets_a_result_or_an_error(raw):
    """Parameters of the wrong shape: -32602; JSON that does not parse: -32700; a message that is
    not a JSON-RPC request: -32600 (LSP's base protocol). The server goes on answering after each."""
    uri = raw.open(raw.root / "ok.py", SOURCE)
    raw.wait_published(uri)
    assert raw.request("textDocument/hover", {})["error"]["code"] == -32602  # no textDocument, no position
    wrong = {"textDocument": {"uri": 5}, "position": {"line": "a", "character": 0}}
    assert raw.request("textDocument/hover", wrong)["error"]["code"] == -32602
    assert raw.request("textDocument/codeAction", {"textDocument": {"uri": uri}})["error"]["code"] == -32602
    assert raw.request("textDocument/hover", None)["error"]["code"] == -32602  # no params at all
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 90, "method": ')
    assert raw.answer(None)["error"]["code"] == -32700
    raw.send({"jsonrpc": "2.0", "id": 91, "method": 5, "params": {}})
    assert raw.answer(91)["error"]["code"] == -32600
    raw.send({"id": 92, "method": "textDocument/hover", "params": {}})  # no "jsonrpc"
    assert raw.answer(92)["error"]["code"] == -32600
    hover = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 50}})
    assert "TFG904" in hover["result"]["contents"]["value"]
    assert raw.end() == 0


def test_a_document_over_its_time_budget_gets_one_diagnostic(raw):
    """`file-timeout` holds in the server (here in the child process checking a large document):
    one error diagnostic saying so, as the command line's one line."""
    folder = raw.root / "budget"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[tool.tflint-gpu]\nfile-timeout = 1\n")
    uri = raw.open(folder / "slow.py", _large_document(3000))
    diagnostics = raw.wait_published(uri, timeout=600)[3]
    assert [(d["message"], d["severity"]) for d in diagnostics] == [("analysis stopped after 1 s", 1)]
    assert raw.end() == 0


@PROC
def test_a_child_checking_a_document_dies_with_the_server(raw):
    """A server killed while a large document is checked leaves no process behind (the check of
    this 3.6 MB document takes a minute: its process is gone well before)."""
    import os
    import time

    raw.open(raw.root / "large.py", _large_document(25000))
    children = Path(f"/proc/{raw.process.pid}/task/{raw.process.pid}/children")
    deadline = time.monotonic() + 120
    while not children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.1)
    pids = [int(pid) for pid in children.read_text().split()]
    assert pids
    while min(_rss_mib(pid) for pid in pids) < 300 and time.monotonic() < deadline:
        time.sleep(0.1)  # the child has read its document and is analysing it
    raw.process.kill()
    raw.process.wait()
    deadline = time.monotonic() + 20
    while any(os.path.exists(f"/proc/{pid}") and "Z" not in _state(pid) for pid in pids) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in pids if os.path.exists(f"/proc/{pid}") and "Z" not in _state(pid)]


def _rss_mib(pid: int) -> float:
    try:
        line = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0.0
    return int(line.split()[1]) / 1024


def _state(pid: int) -> str:
    try:
        return next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("State:"))
    except (OSError, StopIteration):
        return "Z"


def test_a_large_documents_fix_all_only_when_asked_by_kind(raw):
    """A large document's fix-all runs in a child process: it is offered when its kind is asked for
    (as on save), not computed for every code action request an editor sends as the cursor moves."""
    text = SOURCE + _large_document(600)  # 84 KB
    uri = raw.open(raw.root / "big.py", text)
    finding = next(d for d in raw.wait_published(uri, timeout=600)[3] if d["code"] == "TFG904")

    def kinds(only):
        context = {"diagnostics": [finding]}
        if only is not None:
            context["only"] = only
        answer = raw.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": finding["range"],
                                                         "context": context}, timeout=600)
        return [a.get("kind") for a in answer["result"]]

    assert "source.fixAll.tflint-gpu" not in kinds(None) and "quickfix" in kinds(None)
    assert kinds(["source.fixAll"]) == ["source.fixAll.tflint-gpu"]
    assert raw.end() == 0


def test_exit_without_shutdown_exits_with_1(raw):
    assert raw.end(shutdown=False) == 1


LEGACY = textwrap.dedent("""\
    import os
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import tensorflow as tf

    m = tf.keras.metrics.Mean()
    m.reset_states()
    opt = tf.keras.optimizers.Adam(lr=0.1)
    """)


@pytest.mark.asyncio
async def test_a_document_that_sets_tf_use_legacy_keras_is_read_as_the_command_line_reads_it(client: LanguageClient):
    """The file's own TF_USE_LEGACY_KERAS (before `import tensorflow`) makes tf.keras tf_keras: the engine
    decides it for every front end, so the server reports what `tflint-gpu` reports (issue 34)."""
    import subprocess

    uri, diagnostics = await _open(client, "legacy.py", LEGACY)
    served = sorted((d.code, d.range.start.line + 1, d.message) for d in diagnostics if d.code.startswith("TFG9"))
    assert [(code, line) for code, line, _ in served] == [("TFG901", 7)]
    assert served[0][2].startswith("tf_keras optimizers ignore `lr=`")
    cli = subprocess.run([sys.executable, "-m", "tflint_gpu", "--no-cache", "--output-format", "concise",
                          "legacy.py"], cwd=client.root, env=_env(), capture_output=True, text=True, timeout=300)
    assert [line.split(":")[1] + " " + line.split(" ")[1] for line in cli.stdout.splitlines()
            if ": TFG9" in line] == ["7 TFG901"]
