"""One text checked on its own, as the flake8 plugin and the language server see it.

A text comes with its path and no run around it: its settings are those of the
nearest configuration above the file, resolved as the command line resolves
them (``config.Resolver``: ``extend`` chains, globs relative to the file that
states them; ``is_excluded`` says whether a walk of its project would skip the
file: excluded, git-ignored, ``files.force_excluded``), and its project index (the
configuration's folder, else the file's folder raised out of its packages) is
made on first use and kept for the other files of that project, its modules
summarised as imports reach them. ``Documents.reload`` forgets them (a
configuration, an ignore file or a project module changed).
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

from tflint_gpu import config
from tflint_gpu.files import force_excluded
from tflint_gpu.globs import GitIgnores
from tflint_gpu.semantic.project import ProjectFile, ProjectIndex

STDIN_NAMES = ("-", "stdin", "")


class Documents:
    """Settings per folder and project indexes per root, kept between texts."""

    def __init__(self) -> None:
        self._resolver = config.Resolver()
        self._indexes: Dict[str, ProjectIndex] = {}
        self._ignores = GitIgnores()

    def settings_for(self, path: str) -> config.Settings:
        """The settings of the nearest configuration above ``path``, computed once per folder
        (raises ``config.ConfigError``)."""
        folder = str(Path(path).resolve().parent) if path not in STDIN_NAMES else str(Path.cwd())
        return self._resolver.settings_for_folder(folder)

    def is_excluded(self, path: str) -> bool:
        """Would the command line's walk skip ``path`` (``files.force_excluded``: excluded, it or
        a folder above it below its configuration's folder; git-ignored with
        ``respect-gitignore``)? The flake8 plugin and the language server check no such file,
        as Ruff's server and its pre-commit hook (``--force-exclude``) do not. Never for stdin."""
        if path in STDIN_NAMES:
            return False
        return force_excluded(str(Path(path).resolve()), self.settings_for(path), self._ignores, False)

    def project_for(self, path: str, settings: config.Settings) -> Optional[ProjectFile]:
        """The view of ``path``'s project (None for stdin or a file outside any project)."""
        if path in STDIN_NAMES:
            return None
        root = settings.project_root([path])
        if root is None:
            return None
        if root not in self._indexes:
            from tflint_gpu.engine.cache import ProjectCache

            store = ProjectCache(None)
            self._indexes[root] = ProjectIndex(root, loader=store.load, by_text=store.of_text)
        return ProjectFile(self._indexes[root], str(Path(path).resolve()))

    def reload(self) -> None:
        self._resolver = config.Resolver()
        self._indexes.clear()
        self._ignores = GitIgnores()
