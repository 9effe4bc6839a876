"""``tflint-gpu server``: a language server over stdio (pygls 2, lsprotocol).

It publishes diagnostics when a Python document is opened, changed (after a
short pause in typing) or saved, each with its rule code and severity, and
offers code actions: apply a finding's fix (safe; unsafe ones labelled as
such, only where the rule has one), fix every safe finding of the document
(``source.fixAll.tflint-gpu``), and add ``# noqa: CODE`` to the line. Hovering
over a finding shows the rule's summary and why it matters.

Settings are those of each document's nearest configuration (as the command
line and the flake8 plugin read them), read again when a ``pyproject.toml``
or ``tflint-gpu.toml`` changes. A document that does not parse gets one
diagnostic at the error, a broken configuration one diagnostic naming it; the
server goes on. Columns are converted to the client's position encoding.
"""
from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from typing import Dict, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

import tflint_gpu
from tflint_gpu import config
from tflint_gpu import notebook as notebook_cells
from tflint_gpu.documents import Documents
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import ParseError, file_noqa, lint_source
from tflint_gpu.findings import Edit, Finding, Safety
from tflint_gpu.engine.noqa import NoqaIndex
from tflint_gpu.engine.reparse import Reparser
from tflint_gpu.rules.base import all_rules, describe
from tflint_gpu.rules.docs import rule_url

SOURCE = "tflint-gpu"
FIX_ALL = "source.fixAll.tflint-gpu"
CONFIG_FILES = ("pyproject.toml", "tflint-gpu.toml")
# A change is checked once the server is free (no wait of its own: a wait is latency). The changes
# that arrived while it was checking are read first, so a burst of typing is checked once, at its
# latest text.
DEBOUNCE_SECONDS = 0.0


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


REPARSED = 16  # documents whose last module is kept (``TflintServer.reparsers``)


class TflintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tflint-gpu", tflint_gpu.__version__,
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
        self.pending: Dict[str, asyncio.TimerHandle] = {}
        self.utf16 = True

    # -- positions ----------------------------------------------------------------
    def position(self, lines: List[str], row: int, col: int) -> types.Position:
        """An LSP position from a finding's 1-based row and 0-based code-point column."""
        line = lines[row - 1] if 0 < row <= len(lines) else ""
        return types.Position(line=max(row - 1, 0), character=_utf16(line, col) if self.utf16 else col)

    def range_of(self, lines: List[str], start: Tuple[int, int], end: Tuple[int, int]) -> types.Range:
        return types.Range(start=self.position(lines, *start), end=self.position(lines, *end))

    # -- checking -----------------------------------------------------------------
    def check(self, uri: str) -> Optional[Checked]:
        """Lint the document's current text; its findings are kept for code actions and hovers.
        A notebook cell is checked with its whole notebook."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            self.check_notebook(notebook.uri)
            return self.checked.get(uri)
        try:
            document = self.workspace.get_text_document(uri)
            text = document.source
        except Exception:  # closed meanwhile
            return None
        path = uri_path(uri)
        findings: List[Finding] = []
        problem = None
        try:
            settings = self.documents.settings_for(path)
            if not settings.is_excluded(path) and not file_noqa(text):
                findings = lint_source(text, path, settings.rules_for(path),
                                       project=self.documents.project_for(path, settings),
                                       target=settings.target_for(path),
                                       reparser=self.reparser(uri), budget=settings.file_timeout).findings
        except config.ConfigError as error:
            problem = self.config_problem(error)
        except ParseError as error:
            row, col = error.position or (1, 1)
            problem = self.syntax_problem(text.split("\n"), row, col, error.reason)
        except Exception as error:  # a crash of the analysis: a message, never the server's end
            self.crashed(path, error)
            return None
        checked = Checked(text, path, findings, problem)
        self.publish(uri, checked, getattr(document, "version", None))
        return checked

    def reparser(self, uri: str) -> Reparser:
        reparser = self.reparsers.pop(uri, None) or Reparser()
        self.reparsers[uri] = reparser
        while len(self.reparsers) > REPARSED:
            self.reparsers.popitem(last=False)
        return reparser

    def check_notebook(self, notebook_uri: str) -> None:
        """Lint a notebook's Python code cells in order, as the command line lints an ``.ipynb``;
        each cell gets its own findings (a cell that does not parse: one diagnostic, cell skipped)."""
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if notebook is None:
            return
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
        path = uri_path(notebook_uri)
        findings: List[Finding] = []
        problems: Dict[int, types.Diagnostic] = {}
        try:
            settings = self.documents.settings_for(path)
            if not settings.is_excluded(path):
                found, skipped = notebook_cells.lint_cells(
                    sources, path, settings.rules_for(path), project=self.documents.project_for(path, settings),
                    target=settings.target_for(path))
                findings = list(found)
                for p in skipped:
                    problems[p.cell] = self.syntax_problem(sources[p.cell - 1].split("\n"), p.row or 1, p.col or 1,
                                                           p.reason)
        except config.ConfigError as error:
            problems[1] = self.config_problem(error)
        except Exception as error:
            self.crashed(path, error)
            return
        for number, (uri, source) in enumerate(zip(uris, sources), start=1):
            mine = [f for f in findings if f.cell == number]
            self.publish(uri, Checked(source, path, mine, problems.get(number), notebook_uri, uris), None)

    def recheck_all(self) -> None:
        """Check every open document again (each notebook once)."""
        notebooks = []
        for uri, checked in list(self.checked.items()):
            if checked.notebook is None:
                self.check(uri)
            elif checked.notebook not in notebooks:
                notebooks.append(checked.notebook)
        for uri in notebooks:
            self.check_notebook(uri)

    def publish(self, uri: str, checked: Checked, version: Optional[int]) -> None:
        self.checked[uri] = checked
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=self.diagnostics(checked)))

    def config_problem(self, error: Exception) -> types.Diagnostic:
        return types.Diagnostic(range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
                                message=f"configuration error: {error}", source=SOURCE,
                                severity=types.DiagnosticSeverity.Error)

    def syntax_problem(self, lines: List[str], row: int, col: int, reason: str) -> types.Diagnostic:
        """One diagnostic at a syntax error (``col`` 1-based, as the parser gives it)."""
        start = self.position(lines, row, max(col - 1, 0))
        return types.Diagnostic(range=types.Range(start=start, end=start), message=reason, source=SOURCE,
                                code="invalid-syntax", severity=types.DiagnosticSeverity.Error)

    def crashed(self, path: str, error: Exception) -> None:
        self.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Error,
            message=f"tflint-gpu: the analysis of {path} crashed ({type(error).__name__}: {error})"))

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

    def schedule(self, uri: str, delay: float) -> None:
        """Check ``uri`` after ``delay`` seconds, unless it changes again before."""
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self.pending[uri] = loop.call_later(delay, self._run_pending, uri)

    def _run_pending(self, uri: str) -> None:
        self.pending.pop(uri, None)
        if self.workspace.get_notebook_document(notebook_uri=uri) is not None:
            self.check_notebook(uri)
        else:
            self.check(uri)

    def current(self, uri: str) -> Optional[Checked]:
        """The findings of the document's current text (checked now if it changed since)."""
        checked = self.checked.get(uri)
        try:
            text = self.workspace.get_text_document(uri).source
        except Exception:
            return checked
        if checked is None or checked.text != text:
            key = checked.notebook if checked is not None and checked.notebook else uri
            if key in self.pending:
                self.pending.pop(key).cancel()
            checked = self.check(uri)
        return checked

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

    def fix_all(self, uri: str, checked: Checked) -> Optional[types.CodeAction]:
        if checked.notebook is not None:
            return self.fix_all_cells(checked)
        if not any(f.fix is not None and f.fix.safety == Safety.SAFE for f in checked.findings):
            return None
        try:
            settings = self.documents.settings_for(checked.path)
            outcome = fix_source(checked.text, checked.path, settings.rules_for(checked.path), unsafe=False,
                                 project=self.documents.project_for(checked.path, settings))
        except (config.ConfigError, ParseError):
            return None
        if outcome.source == checked.text:
            return None
        return types.CodeAction(title="tflint-gpu: fix all safe findings", kind=FIX_ALL,
                                edit=self.workspace_edit(uri, [self.whole_document(checked, outcome.source)]))


    def fix_all_cells(self, checked: Checked) -> Optional[types.CodeAction]:
        """Every safe fix of the notebook, as whole-cell edits of the cells it changes."""
        cells = [self.checked.get(uri) for uri in checked.cells]
        if any(c is None for c in cells) or not any(
                f.fix is not None and f.fix.safety == Safety.SAFE for c in cells for f in c.findings):
            return None
        try:
            settings = self.documents.settings_for(checked.path)
            sources = notebook_cells.fix_cells([c.text for c in cells], checked.path, settings.rules_for(checked.path),
                                               project=self.documents.project_for(checked.path, settings))
        except (config.ConfigError, ParseError):
            return None
        if sources is None:
            return None
        changes = {uri: [self.whole_document(c, new)] for uri, c, new in zip(checked.cells, cells, sources)
                   if new != c.text}
        return types.CodeAction(title="tflint-gpu: fix all safe findings", kind=FIX_ALL,
                                edit=types.WorkspaceEdit(changes=changes)) if changes else None


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position):
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _kind_wanted(only: Optional[Sequence[str]], kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def build_server() -> TflintServer:
    server = TflintServer()
    list(all_rules())

    @server.feature(types.INITIALIZED)
    def initialized(ls: TflintServer, params: types.InitializedParams) -> None:
        encoding = ls.workspace.position_encoding if hasattr(ls.workspace, "position_encoding") else None
        ls.utf16 = encoding in (None, types.PositionEncodingKind.Utf16)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TflintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TflintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TflintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri_path(uri).endswith(CONFIG_FILES) or uri_path(uri).endswith(".py"):
            ls.documents.reload()  # a configuration, or a module other documents import
        if uri_path(uri).endswith(CONFIG_FILES):
            ls.recheck_all()
        else:
            ls.check(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TflintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.checked.pop(uri, None)
        ls.reparsers.pop(uri, None)
        if uri in ls.pending:
            ls.pending.pop(uri).cancel()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: TflintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.check_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: TflintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells.structure if params.change.cells else None
        for gone in (structure.did_close or []) if structure else []:  # a deleted cell keeps no diagnostics
            ls.checked.pop(gone.uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=gone.uri, diagnostics=[]))
        ls.schedule(params.notebook_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: TflintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.documents.reload()
        ls.check_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: TflintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        if uri in ls.pending:
            ls.pending.pop(uri).cancel()
        for cell in params.cell_text_documents:
            ls.checked.pop(cell.uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: TflintServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.documents.reload()
        if any(uri_path(change.uri).endswith(CONFIG_FILES) for change in params.changes):
            ls.recheck_all()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    def code_action(ls: TflintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        checked = ls.current(uri)
        if checked is None:
            return []
        only = params.context.only
        actions: List[types.CodeAction] = []
        if _kind_wanted(only, types.CodeActionKind.QuickFix):
            for finding in checked.findings:
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
        if _kind_wanted(only, FIX_ALL) or _kind_wanted(only, types.CodeActionKind.SourceFixAll):
            fix_all = ls.fix_all(uri, checked)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TflintServer, params: types.HoverParams) -> Optional[types.Hover]:
        checked = ls.current(params.text_document.uri)
        if checked is None:
            return None
        at = types.Range(start=params.position, end=params.position)
        parts = []
        for finding in checked.findings:
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
    """The rule's name and code, and the first two sections of its docs (what it does, why)."""
    docs = rule.docs()
    sections = re.split(r"^## ", docs, flags=re.MULTILINE)
    kept = [s for s in sections if s.startswith(("What it does", "Why is this bad?"))]
    body = "\n".join("**" + s.replace("\n", "**\n", 1) for s in kept).strip() or rule.summary()
    fix = rule.fix_safety.value if rule.fix_safety else "none"
    return f"### {rule.code} {rule.name}\n\nFix: {fix}.\n\n{body}"


def main() -> int:
    build_server().start_io()
    return 0
