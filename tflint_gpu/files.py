"""Which files to check: walk the given paths, skip excluded and git-ignored directories."""
from __future__ import annotations

import codecs
import hashlib
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:  # a type only: the runner imports this module and must not load the rules
    from tflint_gpu.config import Resolver, Settings
    from tflint_gpu.globs import GitIgnores

SOURCE_SUFFIXES = (".py", ".ipynb")


def force_excluded(path: str, settings: "Settings", ignores: Optional["GitIgnores"] = None,
                   is_dir: Optional[bool] = None) -> bool:
    """Is ``path``, a file or folder that arrives by name, one that a walk of its project would
    skip? The one answer for ``--force-exclude`` (a path on the command line, a
    ``--stdin-filename``), the flake8 plugin and the language server (which always skip such
    files, as Ruff's server does): it, or a folder above it below its configuration's folder,
    is excluded (``exclude``/``extend-exclude``); or, with ``respect-gitignore``, git ignores it
    (``.gitignore``, ``.git/info/exclude``, ``.ignore``); or it is a notebook that ``include``
    leaves out. (A script that ``include`` leaves out, say one without the ``.py`` suffix, is
    still checked: a file named is a file meant, as in Ruff.) ``settings``: those of ``path``;
    ``ignores``: the ignore files read so far (a new reader if None)."""
    if is_dir is None:
        is_dir = os.path.isdir(path)
    if settings.is_excluded(path, is_dir):
        return True
    if not is_dir and path.lower().endswith(".ipynb") and not settings.is_included(path):
        return True
    if not settings.respect_gitignore:
        return False
    if ignores is None:
        from tflint_gpu.globs import GitIgnores

        ignores = GitIgnores()
    return ignores.ignored_path(path, is_dir)


def discover(paths: Sequence[str], settings: Union["Settings", "Resolver"], force_exclude: Optional[bool] = False,
             origins: Optional[Dict[str, str]] = None) -> Tuple[List[str], List[str]]:
    """The source files under ``paths`` and the paths that do not exist.

    ``settings``: one ``Settings`` for every file, or a ``Resolver`` (each folder's
    own: the nearest configuration's). In directories, the files whose name (or
    path) matches an ``include`` glob (default ``*.py`` and ``*.ipynb``), less
    the files and folders an ``exclude`` glob matches and, with
    ``respect-gitignore`` (the setting of the folder walked), those ignored by
    ``.gitignore`` files, ``.git/info/exclude`` and ``.ignore`` files (a folder named
    that git ignores: only the ignore files in it). A path named
    explicitly is checked (a ``.ipynb`` one as a notebook) unless ``force_exclude``
    (None: the ``force-exclude`` setting of the path) and ``force_excluded`` says a
    walk would skip it. ``origins``: filled with each file's path as given.
    """
    from tflint_gpu.globs import GitIgnores

    for_folder = settings.settings_for_folder if hasattr(settings, "settings_for_folder") else \
        (lambda folder: settings)
    ignores = GitIgnores()
    found: List[str] = []
    missing: List[str] = []
    for path in paths:
        if os.path.isdir(path):
            top = for_folder(path)
            respect = top.respect_gitignore
            ignored = respect and ignores.ignored_path(path, True)
            forced = top.force_exclude if force_exclude is None else force_exclude
            if forced and force_excluded(path, top, ignores, True):
                continue
            floor = os.path.abspath(path) if ignored else None
            for directory, subdirs, files in os.walk(path):
                here = for_folder(directory)
                subdirs[:] = [d for d in sorted(subdirs)
                              if not here.excludes_entry(os.path.join(directory, d), True)
                              and not (respect and ignores.ignored(os.path.join(directory, d), True, floor))]
                for name in sorted(files):
                    full = os.path.join(directory, name)
                    if here.is_included(full) and not here.excludes_entry(full) \
                            and not (respect and ignores.ignored(full, False, floor)):
                        found.append(full)
                        if origins is not None:
                            origins.setdefault(full, path)
        elif os.path.isfile(path):
            own = for_folder(os.path.dirname(os.path.abspath(path)))
            forced = own.force_exclude if force_exclude is None else force_exclude
            if not (forced and force_excluded(path, own, ignores, False)):
                found.append(path)
                if origins is not None:
                    origins.setdefault(path, path)
        else:
            missing.append(path)
    return list(dict.fromkeys(found)), missing


@dataclass
class SourceText:
    """A file's text and how to write it back byte-for-byte the same way."""

    text: str
    encoding: str = "utf-8"
    bom: bool = False


class SourceEncodingError(LookupError):
    """The file declares an encoding Python does not know, or one its UTF-8 BOM
    contradicts: CPython refuses to read it. The message is one line."""


def decode(data: bytes) -> SourceText:
    """The text of a Python file, decoded as CPython decodes it (BOM, then the
    ``coding`` declaration, else UTF-8). Raises SourceEncodingError (a
    LookupError) for an unusable declaration, UnicodeDecodeError for bytes
    that are not in the encoding."""
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8):]
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        # Not UTF-8 in the first two lines and nothing declared: the UnicodeDecodeError says where.
        data.decode("utf-8")
        raise SourceEncodingError(error.msg) from None  # "unknown encoding: klingon"
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    if bom and encoding != "utf-8":
        raise SourceEncodingError(f"encoding problem: {encoding} with BOM")  # CPython's words
    # Decoding bytes keeps "\r\n" as it is; LibCST keeps line endings.
    return SourceText(data.decode(encoding), encoding, bom)


def encode(source: SourceText, text: str) -> bytes:
    data = text.encode(source.encoding)
    return (codecs.BOM_UTF8 + data) if source.bom else data


class WriteRefused(Exception):
    """A fixed file is not written; the message says why, in a few words."""


def _digest_of(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def write_fixed(path: str, read_digest: str, data: bytes, tree: Optional[str] = None) -> None:
    """Replace the file at ``path`` with ``data`` in one step, if it still holds
    the bytes whose sha256 is ``read_digest``.

    Through a symbolic link the real file is written (the link stays a link), only
    when it is inside the folder ``tree`` (the tree checked; default: the folder
    ``path`` is in), links followed on both sides: a repository cannot commit a
    link that makes ``--fix`` write elsewhere.
    Refused, with ``WriteRefused``: a link to a file outside ``tree``, a file changed since it was read (an edit
    saved meanwhile is never overwritten), a read-only file, a file with other
    hard links (a rename would split them), and a file whose owner a rewrite
    cannot keep. The new file keeps the mode and owner; the temporary file is
    unique in the file's folder, so concurrent runs do not collide.
    """
    real = os.path.realpath(path)
    top = os.path.realpath(tree if tree is not None else (os.path.dirname(path) or os.curdir))
    try:
        inside = os.path.commonpath([real, top]) == top
    except ValueError:  # another drive
        inside = False
    if not inside:
        raise WriteRefused(f"a symbolic link to {real}, outside {top}")
    before = os.stat(real)
    if not stat.S_ISREG(before.st_mode):
        raise WriteRefused("not a regular file")
    if before.st_nlink > 1:
        raise WriteRefused(f"has {before.st_nlink} hard links, which a rewrite would break")
    if not before.st_mode & 0o222 or not os.access(real, os.W_OK):
        raise WriteRefused("read-only")
    if _digest_of(real) != read_digest:
        raise WriteRefused("changed on disk while it was being fixed")
    directory, name = os.path.split(real)
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tflint-gpu.tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, stat.S_IMODE(before.st_mode))
        if hasattr(os, "chown") and (before.st_uid, before.st_gid) != _owner(temporary):
            try:
                os.chown(temporary, before.st_uid, before.st_gid)
            except PermissionError:
                raise WriteRefused("owned by another user, which a rewrite would change") from None
        now = os.stat(real)  # the last look, just before the replace
        if (now.st_size, now.st_mtime_ns) != (before.st_size, before.st_mtime_ns) or _digest_of(real) != read_digest:
            raise WriteRefused("changed on disk while it was being fixed")
        os.replace(temporary, real)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _owner(path: str) -> Tuple[int, int]:
    info = os.stat(path)
    return info.st_uid, info.st_gid
