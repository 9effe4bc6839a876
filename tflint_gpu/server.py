"""``tflint-gpu server``: a language server over stdio (pygls 2, lsprotocol).

It publishes diagnostics when a Python document is opened, changed or saved,
each with its rule code and severity, and offers code actions: apply a
finding's fix (safe; unsafe ones labelled as such, only where the rule has
one), fix every safe finding of the document
(``source.fixAll.tflint-gpu``), and add ``# noqa: CODE`` to the line. Hovering
over a finding shows the rule's summary, why it matters and a link to its page.

Settings are those of each document's nearest configuration (as the command
line and the flake8 plugin read them), read again when a configuration file
(``config.CONFIG_NAMES``), an ignore file (``.gitignore``, ``.ignore``) or a file the target
is read from (a requirements file, a Dockerfile...: ``target.declares``) is saved or changes on
disk (``rereads``); a client that registers file watchers dynamically is asked to watch them
(``watch_files``). A document that the command line's walk would skip
(excluded or git-ignored: ``Documents.is_excluded``) gets no diagnostics, as in Ruff's
server. A document that does not parse gets one
diagnostic at the error, a broken configuration one diagnostic naming it; the
server goes on. Columns are converted to the client's position encoding.

The thread that reads messages never analyses: a document is checked on one
worker thread (``_Lane``), or, from ``LARGE_DOCUMENT`` characters, in a child
process of its own (``child_main``), which holds the GIL and the memory of its
parse and analysis, is ended when the document changes or closes, and gives its
memory back when it ends. A check whose document changed meanwhile publishes
nothing; a change arriving while a check waits to start is read by that check.
Hovers and code actions are answered from the findings of the document's
current text (waiting for its check, a hover at most ``HOVER_WAIT`` seconds).
Every request gets a result or an error: JSON that does not parse gets -32700,
a message that is not a JSON-RPC request -32600, parameters of the wrong shape
-32602; ``exit`` ends the process with 0 after ``shutdown``, else 1.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import pickle
import queue
import sys
import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

import tflint_gpu
from tflint_gpu import config
from tflint_gpu import notebook as notebook_cells
from tflint_gpu.documents import Documents
from tflint_gpu.engine.budget import AnalysisTimeout
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import ParseError, file_noqa, lint_source, using_fixable
from tflint_gpu.findings import Edit, Finding, Safety
from tflint_gpu.engine.noqa import NoqaIndex
from tflint_gpu.engine.reparse import Reparser
from tflint_gpu.rules.base import all_rules, describe
from tflint_gpu.rules.docs import rule_url, section
from tflint_gpu.semantic.target import DECLARATION_GLOBS, declares

SOURCE = "tflint-gpu"
FIX_ALL = "source.fixAll.tflint-gpu"
CONFIG_FILES = config.CONFIG_NAMES
# Files whose change makes every open document be checked again: they decide which files are skipped.
IGNORE_FILES = (".gitignore", ".ignore", "exclude")  # (`exclude`: .git/info/exclude)
# A change is checked at once (no wait of its own: a wait is latency); the changes that arrive
# while a check of the document waits to start are read by it, so a burst of typing is checked
# once, at its latest text.
# A document of this many characters or more is checked in a child process: LibCST's native
# parser holds the GIL for the whole parse (about 0.5 s for 300 KB, 13 s for 4.5 MB measured
# here), which a thread of this process would take from the thread answering requests.
LARGE_DOCUMENT = 64 * 1024
LARGE_CHECKS = 1  # child processes working at once (each may take gigabytes for megabytes of text)
HOVER_WAIT = 1.0  # seconds a hover waits for its document's check before answering with nothing
_log = logging.getLogger(__name__)


def rereads(path: str) -> bool:
    """Does a change of the file ``path`` change the settings of documents, or which are skipped
    (a configuration file, an ignore file, ``.git/info/exclude``, a file the target is read from)?"""
    name = os.path.basename(path)
    if name == "exclude":
        return os.path.basename(os.path.dirname(path)) == "info"
    return name in CONFIG_FILES or name in IGNORE_FILES or declares(path)  # (a pin: the target)


WATCHER_ID = "tflint-gpu/watched-files"


def watched_globs() -> List[str]:
    """The files ``rereads`` names, as the globs an editor watches for the server (``initialized``)."""
    return (["**/" + name for name in CONFIG_FILES + IGNORE_FILES if name != "exclude"]
            + ["**/.git/info/exclude"] + list(DECLARATION_GLOBS))


def watch_files(ls: LanguageServer) -> None:
    """Ask a client that registers watchers dynamically to report changes of ``watched_globs`` (as
    Ruff's server does): a configuration, an ignore file or a pin changed outside the editor (a
    ``git checkout``, a terminal) is read again. A client without the capability is not asked."""
    workspace = ls.client_capabilities.workspace
    watching = workspace.did_change_watched_files if workspace is not None else None
    if watching is None or not watching.dynamic_registration:
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in watched_globs()])
    future = ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
        id=WATCHER_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)]))
    # A client that refuses: saves and its own notifications still reach the server.
    future.add_done_callback(lambda done: done.cancelled() or done.exception())


def uri_path(uri: str) -> str:
    """The file system path of a ``file:`` URI (else the URI itself, as a name)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _utf16(line: str, column: int) -> int:
    return len(line[:column].encode("utf-16-le")) // 2


class Checked:
    """One document's findings at one version of its text. A notebook cell also knows its
    notebook and the notebook's code cells in order (a fix may edit another cell)."""

    def __init__(self, text: str, path: str, findings: Sequence[Finding], problem: Optional[types.Diagnostic],
                 notebook: Optional[str] = None, cells: Sequence[str] = ()) -> None:
        self.text = text
        self.path = path
        self.lines = text.split("\n")
        self.findings = list(findings)
        self.problem = problem
        self.notebook = notebook
        self.cells = list(cells)
        self.fixed: Optional[Tuple[str]] = None  # (the text with every safe fix), once asked


REPARSED = 16  # documents whose last module is kept (``TflintServer.reparsers``)

# A problem of a document, as a check reports it (made a diagnostic where the text's lines are known):
# ("config", message), ("stopped", message: over the file's time budget), ("syntax", row, col, reason)
# or ("crash", kind, message).
Problem = Optional[tuple]


def lint_document(documents: Documents, text: str, path: str,
                  reparser: Optional[Reparser] = None) -> Tuple[List[Finding], Problem]:
    """The findings of one text under its settings, or the problem that stopped them."""
    try:
        settings = documents.settings_for(path)
        if documents.is_excluded(path) or file_noqa(text):
            return [], None
        return lint_source(text, path, settings.rules_for(path),
                           project=documents.project_for(path, settings),
                           target=settings.target_for(path), reparser=reparser, budget=settings.file_timeout,
                           unfixable=settings.unfixable).findings, None
    except config.ConfigError as error:
        return [], ("config", str(error))
    except AnalysisTimeout as error:  # `file-timeout`: one diagnostic, as the command line's one line
        return [], ("stopped", str(error))
    except ParseError as error:
        row, col = error.position or (1, 1)
        return [], ("syntax", row, col, error.reason)
    except Exception as error:  # a crash of the analysis: a message, never the server's end
        return [], ("crash", type(error).__name__, str(error))


def fix_document(documents: Documents, text: str, path: str) -> Optional[str]:
    """The text with every safe fix applied (None: its configuration or syntax is broken)."""
    try:
        settings = documents.settings_for(path)
        with using_fixable(settings.unfixable):  # `unfixable` rules: no quick fix, left alone by fix all
            return fix_source(text, path, settings.rules_for(path), unsafe=False,
                              project=documents.project_for(path, settings)).source
    except (config.ConfigError, ParseError):
        return None


def lint_notebook(documents: Documents, sources: List[str], path: str) -> Tuple[List[Finding], Dict[int, tuple]]:
    """A notebook's code cells linted in order; the problems by cell number (1-based)."""
    problems: Dict[int, tuple] = {}
    try:
        settings = documents.settings_for(path)
        if documents.is_excluded(path):
            return [], problems
        with using_fixable(settings.unfixable):
            found, skipped = notebook_cells.lint_cells(
                sources, path, settings.rules_for(path), project=documents.project_for(path, settings),
                target=settings.target_for(path))
        for p in skipped:
            problems[p.cell] = ("syntax", p.row or 1, p.col or 1, p.reason)
        return list(found), problems
    except config.ConfigError as error:
        return [], {1: ("config", str(error))}
    except Exception as error:
        return [], {0: ("crash", type(error).__name__, str(error))}


class _Lane:
    """One daemon thread that runs jobs in the order given (so the settings, project indexes
    and reparsers it uses are never used by two threads at once); ``run`` awaits a job's
    result on the event loop, which goes on answering meanwhile."""

    def __init__(self) -> None:
        self.jobs: "queue.SimpleQueue" = queue.SimpleQueue()
        self.thread: Optional[threading.Thread] = None

    async def run(self, function: Callable, *args):
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if self.thread is None:
            self.thread = threading.Thread(target=self._serve, name="tflint-gpu-check", daemon=True)
            self.thread.start()
        self.jobs.put((loop, future, function, args))
        return await future

    def _serve(self) -> None:
        while True:
            loop, future, function, args = self.jobs.get()
            try:
                outcome = (True, function(*args))
            except BaseException as error:
                outcome = (False, error)
            try:
                loop.call_soon_threadsafe(_settle, future, outcome)
            except RuntimeError:  # the loop is closed: the server is ending
                return
            del loop, future, function, args, outcome  # nothing of a job kept until the next one


def _settle(future: "asyncio.Future", outcome: Tuple[bool, Any]) -> None:
    if future.cancelled():
        return
    succeeded, value = outcome
    if succeeded:
        future.set_result(value)
    else:
        future.set_exception(value)


PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tflint_gpu.__file__)))


class _Child:
    """One job in a child process (``child_main``): ended by ``cancel``."""

    def __init__(self) -> None:
        self.process: Optional[asyncio.subprocess.Process] = None
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.process is not None and self.process.returncode is None:
            try:
                self.process.kill()
            except ProcessLookupError:
                pass

    async def run(self, job: tuple):
        """The job's value; None if cancelled. Raises RuntimeError where the child failed."""
        if self.cancelled:
            return None
        # The package's folder first in the path, not the working folder (a checked project's
        # `tflint_gpu/` or `libcst.py` there is never imported); the working folder is the server's.
        code = (f"import sys; sys.path[0] = {PACKAGE_PARENT!r}; "
                f"from tflint_gpu.server import child_main; child_main({os.getpid()})")
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", code, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        try:
            out, _ = await self.process.communicate(pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL))
        finally:
            self.cancel()  # a request cancelled meanwhile: the child ends with it
        if self.process.returncode != 0 and self.cancelled and not out:
            return None
        try:
            reply = pickle.loads(out)  # our own child's answer
        except Exception:
            raise RuntimeError(f"the check process ended with code {self.process.returncode}") from None
        if reply[0] == "ok":
            return reply[1]
        raise RuntimeError(f"{reply[1]}: {reply[2]}")


def child_main(parent: int = 0) -> None:
    """A child process's work: one job (``("check" | "fix", text, path)``, pickled) read from
    stdin, its outcome (``("ok", value)`` or ``("error", kind, message)``) written to stdout.
    Whatever the analysis prints goes to stderr. It dies with the server (``parent``)."""
    from tflint_gpu.engine.run import die_with_parent

    die_with_parent(parent)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    kind, text, path = pickle.load(sys.stdin.buffer)
    try:
        list(all_rules())
        documents = Documents()
        value = lint_document(documents, text, path) if kind == "check" else fix_document(documents, text, path)
        reply: tuple = ("ok", value)
    except BaseException as error:
        reply = ("error", type(error).__name__, str(error))
    out.write(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
    out.flush()
    os._exit(0)  # nothing to tear down: the memory goes back with the process


# JSON-RPC error codes (LSP: "Base Protocol", "Response Message").
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class _Answered:
    """A message already answered with an error while it was read (``Protocol.structure_message``)."""


ANSWERED = _Answered()


def _valid_id(ident: object) -> bool:
    return isinstance(ident, (int, str)) and not isinstance(ident, bool)


class Protocol(LanguageServerProtocol):
    """pygls's protocol, with an error for every request it cannot read (pygls logs them and
    answers nothing, so the client waits for ever)."""

    def error(self, ident: object, code: int, message: str) -> None:
        self._send_data({"jsonrpc": "2.0", "id": ident if _valid_id(ident) else None,
                         "error": {"code": code, "message": message}})

    def structure_message(self, data: Dict[str, Any]):
        if "jsonrpc" not in data:
            return data
        if "method" in data and (not isinstance(data["method"], str) or "id" in data and not _valid_id(data["id"])):
            self.error(data.get("id"), INVALID_REQUEST, "Invalid Request: `method` must be a string, "
                                                        "`id` a number or a string")
            return ANSWERED
        try:
            return super().structure_message(data)
        except Exception as error:
            if "id" in data and "method" in data:
                if isinstance(error, JsonRpcInvalidParams):
                    self.error(data["id"], INVALID_PARAMS, f"Invalid params for {data['method']}")
                else:
                    self.error(data["id"], INTERNAL_ERROR, f"Cannot read the message: {error}")
            else:
                _log.warning("a message that cannot be read was left unanswered: %s", error)
            return ANSWERED

    def handle_message(self, message) -> None:
        if message is ANSWERED:
            return
        if not hasattr(message, "jsonrpc") or message.jsonrpc != "2.0":
            # Not a JSON-RPC 2.0 message: an object without "jsonrpc", an array, a number...
            ident = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
            self.error(ident, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
            return
        if self._shutdown and hasattr(message, "method") and hasattr(message, "id") \
                and message.method != types.EXIT:
            self.error(message.id, INVALID_REQUEST, "the server is shut down")
            return
        super().handle_message(message)


class TflintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tflint-gpu", tflint_gpu.__version__, protocol_cls=Protocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=types.NotebookDocumentSyncOptions(
                             notebook_selector=[types.NotebookDocumentFilterWithCells(
                                 cells=[types.NotebookCellLanguage(language="python")], notebook="*")],
                             save=True))
        self.documents = Documents()
        self.checked: Dict[str, Checked] = {}
        # The documents checked last (at most REPARSED): each one's last module, whose unchanged
        # statements its next check reuses (a module costs memory: not one per open document).
        self.reparsers: "OrderedDict[str, Reparser]" = OrderedDict()
        self.lane = _Lane()
        # Per document (a notebook's key is the notebook's URI): how often it changed, whether a
        # check of it waits to start or runs, and the child process checking it.
        self.generation: Dict[str, int] = {}
        self.waiting: Set[str] = set()
        self.running: Set[str] = set()
        self.children: Dict[str, _Child] = {}
        self.jobs: Set[_Child] = set()
        self.tasks: Set["asyncio.Task"] = set()
        self._small: Optional[asyncio.Lock] = None
        self._large: Optional[asyncio.Semaphore] = None
        self._changed: Optional[asyncio.Event] = None
        self.shut_down = False
        self.utf16 = True

    def report_server_error(self, error: Exception, source) -> None:
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):  # the body is not JSON
            self.protocol.error(None, PARSE_ERROR, f"Parse error: {error}")
            return
        super().report_server_error(error, source)

    # -- positions ----------------------------------------------------------------
    def position(self, lines: List[str], row: int, col: int) -> types.Position:
        """An LSP position from a finding's 1-based row and 0-based code-point column."""
        line = lines[row - 1] if 0 < row <= len(lines) else ""
        return types.Position(line=max(row - 1, 0), character=_utf16(line, col) if self.utf16 else col)

    def range_of(self, lines: List[str], start: Tuple[int, int], end: Tuple[int, int]) -> types.Range:
        return types.Range(start=self.position(lines, *start), end=self.position(lines, *end))

    # -- checking -----------------------------------------------------------------
    def gates(self) -> Tuple[asyncio.Lock, asyncio.Semaphore, asyncio.Event]:
        if self._small is None:
            self._small, self._large, self._changed = asyncio.Lock(), asyncio.Semaphore(LARGE_CHECKS), asyncio.Event()
        return self._small, self._large, self._changed  # type: ignore[return-value]

    def key_of(self, uri: str) -> str:
        """The document checked for ``uri``: a notebook cell's notebook, else itself."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def check(self, key: str) -> None:
        """Check the document (or notebook) ``key`` at its current text, off the message loop; a
        check of an older text in a child process is ended, one in the worker thread publishes
        nothing."""
        self.generation[key] = self.generation.get(key, 0) + 1
        child = self.children.pop(key, None)
        if child is not None:
            child.cancel()
        if key in self.waiting:
            return  # the check waiting to start will read the latest text
        self.waiting.add(key)
        task = asyncio.ensure_future(self._check(key))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def under_way(self, uri: str) -> bool:
        """Is the document's current text checked already, or a check of it waiting or running (a
        save then needs no check of its own: a large document's would start again)?"""
        checked = self.checked.get(uri)
        document = self.workspace.text_documents.get(uri)
        if document is not None and checked is not None and checked.text == document.source:
            return True
        return uri in self.waiting or uri in self.running

    def forget(self, key: str) -> None:
        """A closed document: its check ended or dropped, nothing of it kept."""
        self.generation[key] = self.generation.get(key, 0) + 1
        child = self.children.pop(key, None)
        if child is not None:
            child.cancel()
        self.reparsers.pop(key, None)
        if key not in self.waiting and key not in self.running:
            self.generation.pop(key, None)

    def size(self, key: str) -> int:
        """The characters a check of ``key`` reads (0 for a notebook: checked in the worker thread)."""
        document = self.workspace.text_documents.get(key)  # (get_text_document reads a closed one's file)
        if document is None or self.workspace.get_notebook_document(notebook_uri=key) is not None:
            return 0
        return len(document.source)

    def snapshot(self, key: str) -> Optional[tuple]:
        """What a check of ``key`` reads, taken on the loop when it starts: ("text", uri, text,
        version, path, reparser) or ("notebook", uri, cell uris, sources, path); None: closed."""
        notebook = self.workspace.get_notebook_document(notebook_uri=key)
        if notebook is not None:
            uris, sources = [], []
            for cell in notebook.cells:
                if cell.kind != types.NotebookCellKind.Code:
                    continue
                try:
                    document = self.workspace.get_text_document(cell.document)
                except Exception:
                    continue
                if (document.language_id or "python") == "python":
                    uris.append(cell.document)
                    sources.append(document.source)
            return ("notebook", key, uris, sources, uri_path(key))
        if key not in self.workspace.text_documents:
            return None
        document = self.workspace.get_text_document(key)
        return ("text", key, document.source, getattr(document, "version", None), uri_path(key), self.reparser(key))

    async def _check(self, key: str) -> None:
        small, large_slots, _ = self.gates()
        started = False
        try:
            while True:
                large = self.size(key) >= LARGE_DOCUMENT
                async with (large_slots if large else small):  # type: ignore[attr-defined]
                    if (self.size(key) >= LARGE_DOCUMENT) != large:
                        continue
                    self.waiting.discard(key)  # a change from now on starts a check of its own
                    started = True
                    generation = self.generation.get(key)
                    snapshot = self.snapshot(key)
                    if snapshot is None:
                        return
                    self.running.add(key)
                    try:
                        outcome = await self._run_check(key, snapshot, large)
                    finally:
                        self.running.discard(key)
                break
            if outcome is not None and self.generation.get(key) == generation:
                self.publish_outcome(snapshot, outcome)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.crashed(uri_path(key), error)
        finally:
            if not started:
                self.waiting.discard(key)
            if key not in self.waiting and key not in self.running and key not in self.workspace.text_documents \
                    and self.workspace.get_notebook_document(notebook_uri=key) is None:
                self.generation.pop(key, None)  # closed meanwhile
            self.gates()[2].set()  # waiters on this document look again

    async def _run_check(self, key: str, snapshot: tuple, large: bool):
        documents = self.documents
        if snapshot[0] == "notebook":
            _, _, _, sources, path = snapshot
            return await self.lane.run(lint_notebook, documents, sources, path)
        _, uri, text, _, path, reparser = snapshot
        if not large:
            return await self.lane.run(lint_document, documents, text, path, reparser)
        child = self.children[key] = _Child()
        try:
            return await child.run(("check", text, path))
        finally:
            if self.children.get(key) is child:
                del self.children[key]

    def publish_outcome(self, snapshot: tuple, outcome) -> None:
        if snapshot[0] == "notebook":
            _, notebook_uri, uris, sources, path = snapshot
            findings, problems = outcome
            if 0 in problems:
                self.crashed(path, problems[0])
                return
            for number, (uri, source) in enumerate(zip(uris, sources), start=1):
                mine = [f for f in findings if f.cell == number]
                lines = source.split("\n")
                self.publish(uri, Checked(source, path, mine, self.problem(lines, problems.get(number)),
                                          notebook_uri, uris), None)
            return
        _, uri, text, version, path, _ = snapshot
        findings, problem = outcome
        if problem is not None and problem[0] == "crash":
            self.crashed(path, problem)
            return
        self.publish(uri, Checked(text, path, findings, self.problem(text.split("\n"), problem)), version)

    def problem(self, lines: List[str], problem: Problem) -> Optional[types.Diagnostic]:
        if problem is None:
            return None
        if problem[0] == "config":
            return self.config_problem(problem[1])
        if problem[0] == "stopped":
            return types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
                                    message=problem[1], source=SOURCE, severity=types.DiagnosticSeverity.Error)
        _, row, col, reason = problem
        return self.syntax_problem(lines, row, col, reason)

    def reparser(self, uri: str) -> Reparser:
        reparser = self.reparsers.pop(uri, None) or Reparser()
        self.reparsers[uri] = reparser
        while len(self.reparsers) > REPARSED:
            self.reparsers.popitem(last=False)
        return reparser

    def reload(self) -> None:
        """Settings and project indexes read afresh (a check under way keeps the ones it has)."""
        self.documents = Documents()

    def recheck_all(self) -> None:
        """Check every open document again (each notebook once)."""
        keys: List[str] = []
        for uri, checked in list(self.checked.items()):
            key = checked.notebook or uri
            if key not in keys:
                keys.append(key)
        for key in keys:
            self.check(key)

    def publish(self, uri: str, checked: Checked, version: Optional[int]) -> None:
        self.checked[uri] = checked
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=self.diagnostics(checked)))

    def config_problem(self, error) -> types.Diagnostic:
        return types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
                                message=f"configuration error: {error}", source=SOURCE,
                                severity=types.DiagnosticSeverity.Error)

    def syntax_problem(self, lines: List[str], row: int, col: int, reason: str) -> types.Diagnostic:
        """One diagnostic at a syntax error (``col`` 1-based, as the parser gives it)."""
        start = self.position(lines, row, max(col - 1, 0))
        return types.Diagnostic(range=types.Range(start=start, end=start), message=reason, source=SOURCE,
                                code="invalid-syntax", severity=types.DiagnosticSeverity.Error)

    def crashed(self, path: str, error) -> None:
        """A message that the analysis crashed: ``error`` an exception or ("crash", kind, message)."""
        kind, text = (error[1], error[2]) if isinstance(error, tuple) else (type(error).__name__, error)
        self.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Error,
            message=f"tflint-gpu: the analysis of {path} crashed ({kind}: {text})"))

    def diagnostics(self, checked: Checked) -> List[types.Diagnostic]:
        found = [self.diagnostic(checked, f) for f in checked.findings]
        return ([checked.problem] if checked.problem else []) + found

    def diagnostic(self, checked: Checked, finding: Finding) -> types.Diagnostic:
        rule = describe(finding.code)
        fix = finding.fix
        url = rule_url(finding.code)
        return types.Diagnostic(
            range=self.range_of(checked.lines, (finding.row, finding.col), (finding.end_row, finding.end_col)),
            message=finding.message, source=SOURCE, code=finding.code,
            code_description=types.CodeDescription(href=url) if url else None,
            severity=types.DiagnosticSeverity.Warning,
            data={"name": rule.name if rule else finding.name,
                  "fix": fix.safety.value if fix is not None else None})

    async def current(self, uri: str, wait: Optional[float] = None) -> Optional[Checked]:
        """The findings of the document's current text: once its check is done (at most ``wait``
        seconds: None after), checked now if no check of it is under way or waiting."""
        loop = asyncio.get_running_loop()
        deadline = None if wait is None else loop.time() + wait
        asked = False
        while True:
            checked = self.checked.get(uri)
            try:
                text = self.workspace.get_text_document(uri).source
            except Exception:
                return checked
            if checked is not None and (checked.text is text or checked.text == text):
                return checked
            key = self.key_of(uri)
            if key not in self.waiting and key not in self.running:
                if asked:
                    return None  # its check ended with no findings to give (a crash)
                self.check(key)
                asked = True
            changed = self.gates()[2]
            changed.clear()
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return None
            try:
                await asyncio.wait_for(changed.wait(), remaining)
            except asyncio.TimeoutError:
                return None

    # -- edits --------------------------------------------------------------------
    def fix_edit(self, uri: str, checked: Checked, edits: Sequence[Edit]) -> types.WorkspaceEdit:
        """A fix's edits; in a notebook each goes to the cell it names (``CellEdit.cell``)."""
        changes: Dict[str, List[types.TextEdit]] = {}
        for e in edits:
            number = getattr(e, "cell", 0)
            target = checked.cells[number - 1] if checked.cells and 0 < number <= len(checked.cells) else uri
            lines = self.checked[target].lines if target in self.checked else checked.lines
            changes.setdefault(target, []).append(
                types.TextEdit(range=self.range_of(lines, e.start, e.end), new_text=e.content))
        return types.WorkspaceEdit(changes=changes)

    def workspace_edit(self, uri: str, edits: List[types.TextEdit]) -> types.WorkspaceEdit:
        return types.WorkspaceEdit(changes={uri: edits})

    @staticmethod
    def whole_document(checked: Checked, new_text: str) -> types.TextEdit:
        last = len(checked.lines)
        end = types.Position(line=last - 1, character=len(checked.lines[-1].encode("utf-16-le")) // 2)
        return types.TextEdit(range=types.Range(start=types.Position(0, 0), end=end), new_text=new_text)

    def noqa_edit(self, checked: Checked, finding: Finding) -> Optional[types.TextEdit]:
        """``# noqa: CODE`` at the end of the line Python reads the finding's comment on (its first
        line, or the last of a multi-line string or continuation there), or the code added to the
        ``# noqa:`` already there; None where a blanket ``# noqa`` covers the line already
        (``engine.noqa``: as ``check --add-noqa`` writes it)."""
        edit = NoqaIndex(checked.text).add_edit(finding.row, [finding.code])
        if edit is None:
            return None
        return types.TextEdit(range=self.range_of(checked.lines, edit.start, edit.end), new_text=edit.content)

    async def fix_all(self, uri: str, checked: Checked) -> Optional[types.CodeAction]:
        if checked.notebook is not None:
            return await self.fix_all_cells(checked)
        if not any(f.fix is not None and f.fix.safety == Safety.SAFE for f in checked.findings):
            return None
        if checked.fixed is None:
            if len(checked.text) >= LARGE_DOCUMENT:
                _, large_slots, _ = self.gates()
                async with large_slots:
                    child = _Child()
                    self.jobs.add(child)
                    try:
                        fixed = await child.run(("fix", checked.text, checked.path))
                    finally:
                        self.jobs.discard(child)
            else:
                fixed = await self.lane.run(fix_document, self.documents, checked.text, checked.path)
            checked.fixed = (fixed,)
        fixed = checked.fixed[0]
        if fixed is None or fixed == checked.text:
            return None
        return types.CodeAction(title="tflint-gpu: fix all safe findings", kind=FIX_ALL,
                                edit=self.workspace_edit(uri, [self.whole_document(checked, fixed)]))

    async def fix_all_cells(self, checked: Checked) -> Optional[types.CodeAction]:
        """Every safe fix of the notebook, as whole-cell edits of the cells it changes."""
        cells = [self.checked.get(uri) for uri in checked.cells]
        if any(c is None for c in cells) or not any(
                f.fix is not None and f.fix.safety == Safety.SAFE for c in cells for f in c.findings):
            return None
        sources = await self.lane.run(fix_cells, self.documents, [c.text for c in cells], checked.path)
        if sources is None:
            return None
        changes = {uri: [self.whole_document(c, new)] for uri, c, new in zip(checked.cells, cells, sources)
                   if new != c.text}
        return types.CodeAction(title="tflint-gpu: fix all safe findings", kind=FIX_ALL,
                                edit=types.WorkspaceEdit(changes=changes)) if changes else None

    def end_children(self) -> None:
        """End every child process (at shutdown and exit)."""
        for child in list(self.children.values()) + list(self.jobs):
            child.cancel()
        self.children.clear()


def fix_cells(documents: Documents, sources: List[str], path: str) -> Optional[List[str]]:
    """A notebook's cells with every safe fix (None: its configuration or a cell is broken)."""
    try:
        settings = documents.settings_for(path)
        with using_fixable(settings.unfixable):
            return notebook_cells.fix_cells(sources, path, settings.rules_for(path),
                                            project=documents.project_for(path, settings))
    except (config.ConfigError, ParseError):
        return None


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position):
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _on_lines(findings: Sequence[Finding], first: int, last: int) -> List[Finding]:
    """The findings on the 0-based lines ``first`` to ``last`` (a large document has thousands:
    only these are made diagnostics and compared with the range asked about)."""
    return [f for f in findings if f.row - 1 <= last and first <= f.end_row - 1]


def _kind_wanted(only: Optional[Sequence[str]], kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def build_server() -> TflintServer:
    server = TflintServer()
    list(all_rules())

    @server.feature(types.INITIALIZED)
    def initialized(ls: TflintServer, params: types.InitializedParams) -> None:
        encoding = ls.workspace.position_encoding if hasattr(ls.workspace, "position_encoding") else None
        ls.utf16 = encoding in (None, types.PositionEncodingKind.Utf16)
        watch_files(ls)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: TflintServer, params: Any) -> None:
        ls.shut_down = True
        ls.end_children()

    @server.feature(types.EXIT)
    def exit_(ls: TflintServer, params: Any) -> None:
        ls.end_children()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TflintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TflintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TflintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = uri_path(uri)
        settings_changed = rereads(path)
        if settings_changed or path.endswith(".py"):
            ls.reload()  # a configuration, an ignore file, a pin, or a module other documents import
        if settings_changed:
            ls.recheck_all()
        elif not ls.under_way(uri):
            ls.check(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TflintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.checked.pop(uri, None)
        ls.forget(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: TflintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.check(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: TflintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells.structure if params.change.cells else None
        for gone in (structure.did_close or []) if structure else []:  # a deleted cell keeps no diagnostics
            ls.checked.pop(gone.uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=gone.uri, diagnostics=[]))
        ls.check(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: TflintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.reload()
        ls.check(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: TflintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.forget(params.notebook_document.uri)
        for cell in params.cell_text_documents:
            ls.checked.pop(cell.uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: TflintServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.reload()
        if any(rereads(uri_path(change.uri)) for change in params.changes):
            ls.recheck_all()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    async def code_action(ls: TflintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        checked = await ls.current(uri)
        if checked is None:
            return []
        only = params.context.only
        actions: List[types.CodeAction] = []
        if _kind_wanted(only, types.CodeActionKind.QuickFix):
            for finding in _on_lines(checked.findings, params.range.start.line, params.range.end.line):
                diagnostic = ls.diagnostic(checked, finding)
                if not _overlaps(diagnostic.range, params.range):
                    continue
                if finding.fix is not None:
                    unsafe = finding.fix.safety == Safety.UNSAFE
                    label = " (unsafe)" if unsafe else ""
                    actions.append(types.CodeAction(
                        title=f"tflint-gpu: {finding.fix.message}{label} ({finding.code})",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=not unsafe,
                        edit=ls.fix_edit(uri, checked, finding.fix.edits)))
                noqa = ls.noqa_edit(checked, finding)
                if noqa is not None:
                    actions.append(types.CodeAction(
                        title=f"tflint-gpu: add `# noqa: {finding.code}` to this line",
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                        edit=ls.workspace_edit(uri, [noqa])))
        # A large document's fix-all (a child process, seconds to minutes) only when asked by kind, as
        # on save: not for every lightbulb request an editor sends as the cursor moves.
        asked = only is not None or len(checked.text) < LARGE_DOCUMENT
        if asked and (_kind_wanted(only, FIX_ALL) or _kind_wanted(only, types.CodeActionKind.SourceFixAll)):
            fix_all = await ls.fix_all(uri, checked)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: TflintServer, params: types.HoverParams) -> Optional[types.Hover]:
        checked = await ls.current(params.text_document.uri, HOVER_WAIT)
        if checked is None:
            return None
        at = types.Range(start=params.position, end=params.position)
        parts = []
        for finding in _on_lines(checked.findings, params.position.line, params.position.line):
            diagnostic = ls.diagnostic(checked, finding)
            rule = describe(finding.code)
            if rule is not None and _overlaps(diagnostic.range, at):
                parts.append(hover_text(rule))
        if not parts:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value="\n\n---\n\n".join(dict.fromkeys(parts))))

    return server


def hover_text(rule) -> str:
    """The rule's code and name, its summary, its "Why is this bad?", the fix's safety and the link to
    its page (``rule_url``, as the diagnostic's ``codeDescription``): the rest is on the page."""
    parts = [f"### {rule.code} {rule.name}", rule.summary()]
    reason = section(rule, "Why is this bad?")
    if reason:
        parts.append(f"**Why is this bad?**\n{reason}")
    parts.append(f"Fix: {rule.fix_label() or 'none'}.")
    url = rule_url(rule.code)
    if url:
        parts.append(f"[{rule.code}: the rule's page]({url}) (or `tflint-gpu rule {rule.code}`)")
    else:
        parts.append(f"The rule's page: `tflint-gpu rule {rule.code}`")
    return "\n\n".join(parts)


def main() -> int:
    """Serve over stdio; the exit code is 0 after a ``shutdown`` request, else 1 (LSP: ``exit``)."""
    server = build_server()
    server.start_io()
    server.end_children()
    return 0 if server.shut_down else 1
