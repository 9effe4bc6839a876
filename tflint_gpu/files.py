"""Which files to check: walk the given paths, skip excluded directories."""
from __future__ import annotations

import codecs
import io
import os
import tokenize
from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Sequence, Tuple

if TYPE_CHECKING:  # a type only: the runner imports this module and must not load the rules
    from tflint_gpu.config import Settings

SOURCE_SUFFIXES = (".py", ".ipynb")


def discover(paths: Sequence[str], settings: "Settings", force_exclude: bool = False) -> Tuple[List[str], List[str]]:
    """The source files under ``paths`` and the paths that do not exist.

    In directories, the files whose name (or path from the root) matches an
    ``include`` pattern (default ``*.py`` and ``*.ipynb``); a file named
    explicitly is checked (a ``.ipynb`` one as a notebook) unless ``force_exclude``
    and it is excluded, or is a notebook that ``include`` leaves out.
    """
    found: List[str] = []
    missing: List[str] = []
    for path in paths:
        if os.path.isdir(path):
            for directory, subdirs, files in os.walk(path):
                subdirs[:] = sorted(d for d in subdirs if not settings.is_excluded(os.path.join(directory, d)))
                for name in sorted(files):
                    full = os.path.join(directory, name)
                    if settings.is_included(full) and not settings.is_excluded(full):
                        found.append(full)
        elif os.path.isfile(path):
            # With --force-exclude (pre-commit), a notebook is also left out when `include` leaves
            # notebooks out; a script without the .py suffix is still checked.
            if not (force_exclude and (settings.is_excluded(path)
                                       or (path.lower().endswith(".ipynb") and not settings.is_included(path)))):
                found.append(path)
        else:
            missing.append(path)
    return list(dict.fromkeys(found)), missing


@dataclass
class SourceText:
    """A file's text and how to write it back byte-for-byte the same way."""

    text: str
    encoding: str = "utf-8"
    bom: bool = False


def decode(data: bytes) -> SourceText:
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8):]
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    # Decoding bytes keeps "\r\n" as it is; LibCST keeps line endings.
    return SourceText(data.decode(encoding), encoding, bom)


def encode(source: SourceText, text: str) -> bytes:
    data = text.encode(source.encoding)
    return (codecs.BOM_UTF8 + data) if source.bom else data


def write_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping its permissions."""
    mode = os.stat(path).st_mode
    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.tflint-gpu.tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.chmod(temporary, mode & 0o7777)
    os.replace(temporary, path)
