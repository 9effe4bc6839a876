"""How fast the language server answers an edit, and how much memory it holds.

    python benchmarks/server_latency.py [--file F] [--project DIR] [--changes N] [--open N]

It starts ``tflint-gpu server`` and talks LSP to it over stdio, as an editor does:

* latency: a file of about 1,000 lines (by default the largest module of
  installed ``keras/src`` between 900 and 1,100 lines, with a TensorFlow import
  so every rule reads it) is opened; then ``--changes`` edits are sent one at a
  time, each waiting for its diagnostics. The figure is the time from sending
  ``textDocument/didChange`` (every other one in the middle of the file, the
  others at its end) to receiving its ``publishDiagnostics``, the
  server warm (the debounce included), as median and worst; and, for scale, the
  time of one ``lint_source`` of the same text in this process;
* memory: ``--open`` files of a large project (by default ``keras/src``) are
  opened one after another, each waiting for its diagnostics; the server's
  resident memory (``/proc``, Linux) is printed before and after, and the
  bound it is checked against (``MEMORY_BOUND_MIB``) with the verdict.

* while a large document is checked (``--large``, sizes in bytes, default
  300,000 and 4,500,000; ``--large-only`` skips the rows above): a small
  document (``examples/TFG904/before.py``) is open; a large one, made of the
  ``examples/*/before.py`` files repeated with their top-level defs renamed
  (``synthetic_document``), is opened; until its diagnostics arrive, a hover
  on the small document's first finding and an edit of the small document
  (to its diagnostics) are timed, one after the other. Printed: their median
  and worst, how long the large document took, and the server's resident
  memory before the large document was opened and after its ``didClose``.

Figures are printed, never asserted in a test: machines here are noisy.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional

MEMORY_BOUND_MIB = 1024  # the README's stated bound for a large project's open files


def _keras_src() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("keras")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("keras is not installed: give --file and --project")
    return Path(list(spec.submodule_search_locations)[0]) / "src"


class Client:
    """A minimal LSP client over the server's stdio (JSON-RPC with Content-Length headers)."""

    def __init__(self, root: Path) -> None:
        here = str(Path(__file__).resolve().parents[1])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
        self.process = subprocess.Popen([sys.executable, "-m", "tflint_gpu", "server"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env)
        self.lock = threading.Condition()
        self.published: Dict[str, List[float]] = {}
        self.counts: Dict[str, int] = {}  # diagnostics in the last publication of each document
        self.last: Dict[str, list] = {}  # the last diagnostics of each document
        self.responses: Dict[int, dict] = {}
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}})
        self.notify("initialized", {})

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _read(self) -> None:
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
            message = json.loads(stream.read(length))
            with self.lock:
                if message.get("method") == "textDocument/publishDiagnostics":
                    self.published.setdefault(message["params"]["uri"], []).append(time.perf_counter())
                    self.counts[message["params"]["uri"]] = len(message["params"]["diagnostics"])
                    self.last[message["params"]["uri"]] = message["params"]["diagnostics"]
                elif "id" in message and "method" not in message:
                    self.responses[message["id"]] = message
                self.lock.notify_all()

    def request(self, method: str, params: dict, timeout: float = 120.0) -> dict:
        self.next_id += 1
        ident = self.next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        with self.lock:
            if not self.lock.wait_for(lambda: ident in self.responses, timeout=timeout):
                raise SystemExit(f"no answer to {method} within {timeout} s")
            return self.responses.pop(ident)

    def notify(self, method: str, params: dict) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_published(self, uri: str, count: int, timeout: float = 120.0) -> float:
        """The time the ``count``-th diagnostics of ``uri`` arrived."""
        with self.lock:
            if not self.lock.wait_for(lambda: len(self.published.get(uri, [])) >= count, timeout=timeout):
                raise SystemExit(f"no diagnostics for {uri} within {timeout} s")
            return self.published[uri][count - 1]

    def open(self, path: Path, text: str, wait: bool = True) -> str:
        uri = path.resolve().as_uri()
        seen = len(self.published.get(uri, []))
        document = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})
        if wait:
            self.wait_published(uri, seen + 1)
        return uri

    def seen(self, uri: str) -> int:
        with self.lock:
            return len(self.published.get(uri, []))

    def rss_mib(self) -> Optional[float]:
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def close(self) -> None:
        self.request("shutdown", {})
        self.notify("exit", {})
        self.process.wait(timeout=30)


def _thousand_lines(src: Path) -> Path:
    sizes = []
    for path in src.rglob("*.py"):
        n = path.read_text(encoding="utf-8", errors="replace").count("\n")
        if 900 <= n <= 1100:
            sizes.append((n, str(path)))
    if not sizes:
        sys.exit(f"no module of about 1,000 lines under {src}: give --file")
    return Path(max(sizes)[1])


def _editable_line(text: str) -> Optional[int]:
    """The index of an indented line of code near the middle of ``text`` (no string, no
    continuation on it), where a typed comment leaves the file Python."""
    lines = text.split("\n")
    for index in range(len(lines) // 2, len(lines)):
        line = lines[index].rstrip()
        if line[:1] == " " and not line.lstrip().startswith("#") and not line.endswith("\\") \
                and not any(quote in line for quote in ('"', "'", "#")):
            return index
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, help="the file to edit (default: a ~1,000-line keras/src module)")
    parser.add_argument("--project", type=Path, help="the project whose files are opened (default: keras/src)")
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--open", type=int, default=300, help="files of the project to open for the memory row")
    parser.add_argument("--large", default="300000,4500000",
                        help="sizes (bytes, comma-separated) of the large documents checked while a small one is "
                             "used; empty: none")
    parser.add_argument("--large-only", action="store_true", help="only the rows of the large documents")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.large.split(",") if size.strip()]
    if args.large_only:
        return _measure_large(sizes)
    source_project = args.project or _keras_src()
    source_path = args.file or _thousand_lines(source_project)
    # A copy: the default excludes (as Ruff's) leave out anything under site-packages, so the
    # installed files themselves would be answered with no analysis at all.
    workdir = Path(tempfile.mkdtemp(prefix="tflint-gpu-server-"))
    project = workdir / source_project.name
    shutil.copytree(source_project, project, ignore=shutil.ignore_patterns("__pycache__"))
    try:
        path = project / source_path.resolve().relative_to(source_project.resolve())
    except ValueError:  # a file outside the project: beside it
        path = project / source_path.name
        shutil.copyfile(source_path, path)
    try:
        _measure(args, project, path, source_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return _measure_large(sizes) if sizes else 0


def _measure(args, project: Path, path: Path, shown: Path) -> int:
    text = path.read_text(encoding="utf-8")
    if "import tensorflow" not in text:
        text = "import tensorflow as tf\n" + text  # every rule reads it (a file without TensorFlow is skipped early)
    lines = text.count("\n")

    from tflint_gpu.engine.lint import lint_source
    from tflint_gpu.rules.base import all_rules

    rules = list(all_rules())
    expected = len(lint_source(text, str(path), rules).findings)
    alone = []
    for _ in range(5):
        start = time.perf_counter()
        lint_source(text, str(path), rules)
        alone.append(time.perf_counter() - start)

    middle = _editable_line(text)

    def edit(text: str, version: int) -> str:
        """Every other change in the middle of the file (a comment typed on a line there), else at its end."""
        if version % 2 or middle is None:
            return text + f"\nx_{version} = {version}\n"
        lines = text.split("\n")
        lines[middle] += f"  # {version}"
        return "\n".join(lines)

    client = Client(project)
    try:
        uri = client.open(path, text)
        latencies = []
        for version in range(2, args.changes + 2):
            edited = edit(text, version)
            seen = len(client.published[uri])
            sent = time.perf_counter()
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": edited}]})
            latencies.append(client.wait_published(uri, seen + 1) - sent)
        published = client.counts[uri]
        before = client.rss_mib()
        files = sorted(project.rglob("*.py"))[:args.open]
        for other in files:
            client.open(other, other.read_text(encoding="utf-8", errors="replace"))
        after = client.rss_mib()
    finally:
        client.close()
    ms = [x * 1000 for x in latencies]
    print(f"file: {shown} ({lines} lines; a copy, in a copy of its project)")
    print(f"lint_source of the file in this process: {min(alone) * 1000:.0f} ms (best of 5), "
          f"{expected} findings of all rules; the server's last diagnostics: {published}")
    print(f"change -> diagnostics, warm server ({len(ms)} changes): median {statistics.median(ms):.0f} ms, "
          f"worst {max(ms):.0f} ms (target 200 ms)")
    if before is not None and after is not None:
        verdict = "within" if after <= MEMORY_BOUND_MIB else "OVER"
        print(f"server memory: {before:.0f} MiB with one document, {after:.0f} MiB with {len(files) + 1} open "
              f"documents of {project} ({verdict} the {MEMORY_BOUND_MIB} MiB bound)")
    return 0


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def synthetic_document(size: int) -> str:
    """About ``size`` bytes of realistic TensorFlow code: the ``examples/*/before.py`` files one
    after another, again and again, each copy's top-level defs and classes renamed (``name_7``)."""
    parts = []
    for path in sorted(EXAMPLES.glob("*/before.py")):
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        names = [node.name for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        parts.append((text, re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None))
    pieces, total, copy = [], 0, 0
    while total < size:
        text, defs = parts[copy % len(parts)]
        if defs is not None:
            text = defs.sub(lambda match: f"{match.group(1)}_{copy}", text)
        pieces.append(text)
        total += len(text.encode("utf-8")) + 1
        copy += 1
    return "\n".join(pieces)


def _measure_large(sizes: List[int], timeout: float = 900.0) -> int:
    """A small document's hover and diagnostics while each large document is checked, and the
    server's memory before the large one is opened and after it is closed."""
    workdir = Path(tempfile.mkdtemp(prefix="tflint-gpu-server-large-"))
    try:
        # No time budget: the whole check of the large document is measured (the default stops it at 60 s).
        (workdir / "pyproject.toml").write_text("[tool.tflint-gpu]\nfile-timeout = 0\n")
        small_path = workdir / "small.py"
        small_text = (EXAMPLES / "TFG904" / "before.py").read_text(encoding="utf-8")
        small_path.write_text(small_text)
        client = Client(workdir)
        try:
            small = client.open(small_path, small_text)
            first = client.last[small][0]["range"]["start"]
            version = 1
            for size in sizes:
                text = synthetic_document(size)
                path = workdir / f"large_{size}.py"
                path.write_text(text)
                time.sleep(1.0)
                before = client.rss_mib()
                opened = time.perf_counter()
                large = client.open(path, text, wait=False)
                hovers, edits = [], []
                while client.seen(large) == 0 and time.perf_counter() - opened < timeout:
                    sent = time.perf_counter()
                    answer = client.request("textDocument/hover", {"textDocument": {"uri": small},
                                                                   "position": first}, timeout=timeout)
                    hovers.append(time.perf_counter() - sent)
                    if not answer.get("result"):
                        raise SystemExit(f"no hover on the small document: {answer}")
                    version += 1
                    seen = client.seen(small)
                    sent = time.perf_counter()
                    client.notify("textDocument/didChange", {
                        "textDocument": {"uri": small, "version": version},
                        "contentChanges": [{"text": small_text + f"\nx_{version} = {version}\n"}]})
                    edits.append(client.wait_published(small, seen + 1, timeout=timeout) - sent)
                    time.sleep(0.2)
                if client.seen(large) == 0:
                    client.wait_published(large, 1, timeout=timeout)
                took = client.published[large][0] - opened
                findings = client.counts[large]
                peak = client.rss_mib()
                client.notify("textDocument/didClose", {"textDocument": {"uri": large}})
                client.request("textDocument/hover", {"textDocument": {"uri": small}, "position": first},
                               timeout=timeout)
                time.sleep(2.0)
                after = client.rss_mib()
                hover_ms = [x * 1000 for x in hovers]
                edit_ms = [x * 1000 for x in edits]
                print(f"large document of {len(text.encode('utf-8')):,} bytes ({text.count(chr(10)):,} lines): "
                      f"diagnostics ({findings}) after {took:.1f} s")
                print(f"  while it was checked, the small document's hover ({len(hover_ms)}): median "
                      f"{statistics.median(hover_ms):.0f} ms, worst {max(hover_ms):.0f} ms; change -> diagnostics "
                      f"({len(edit_ms)}): median {statistics.median(edit_ms):.0f} ms, worst {max(edit_ms):.0f} ms")
                if before is not None and after is not None:
                    print(f"  server memory: {before:.0f} MiB before opening it, {peak:.0f} MiB with it checked, "
                          f"{after:.0f} MiB after its didClose")
        finally:
            client.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
