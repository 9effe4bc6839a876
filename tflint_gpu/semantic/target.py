"""The project's target: which TensorFlow, and which Keras ``tf.keras`` is.

Read from the project's files the way a person would read them: the pins of
``tensorflow`` (and its other distributions: ``tensorflow-gpu``,
``tensorflow[and-cuda]``, ``tensorflow-macos``...), ``keras`` and
``tf_keras`` in ``requirements*.txt``, ``pyproject.toml`` (PEP 621 and
poetry), ``setup.cfg``/``setup.py`` (read with ``ast``, never run),
``environment.yml`` and ``Pipfile``; a Dockerfile's ``FROM
tensorflow/tensorflow:2.x``; ``TF_USE_LEGACY_KERAS`` set in code, ``.env``,
a Dockerfile or the README; and the README's ``pip install`` commands.

What decides Keras (TensorFlow 2.16 made ``tf.keras`` Keras 3):

* TensorFlow capped below 2.16 (``==2.15.0``, ``<2.16``, ``~=2.12.0``,
  ``tensorflow-gpu==2.4``): Keras 2;
* ``keras`` capped below 3 (``keras<3``, ``keras==2.15``): Keras 2, and TF at
  most 2.15 (TF 2.16 requires Keras 3);
* ``TF_USE_LEGACY_KERAS`` set to a true value, or ``tf_keras`` among the
  dependencies: Keras 2 under TF 2.16+;
* otherwise (no pin, or no upper bound: ``>=2.10``, ``~=2.12``): the newest
  TensorFlow, Keras 3.

Each ``Target`` carries why (``file:line: text``). The functions reading one
kind of file are pure (text in, ``Evidence`` out); ``target_folder`` and
``read_folder`` are the only ones that touch the file system. Nothing here
imports the driver or a rule.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from tflint_gpu.globs import STOP, nearest_upward

Version = Tuple[int, int]

# The first TensorFlow whose tf.keras is Keras 3.
KERAS3_TF: Version = (2, 16)
# The first TensorFlow whose tf.keras optimizers are the new ones (built for a fixed set of variables,
# handing a schedule the int64 iterations, ignoring lr=): TF 2.11's release note; Keras 3 kept them.
NEW_OPTIMIZERS_TF: Version = (2, 11)

# Distributions of TensorFlow itself (PEP 503 normalised names); nightlies are the newest.
TF_DISTRIBUTIONS = frozenset({
    "tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-macos", "tensorflow-intel",
    "tensorflow-aarch64", "tensorflow-rocm", "intel-tensorflow", "tensorflow-cpu-aws",
})
TF_NIGHTLIES = frozenset({"tf-nightly", "tf-nightly-gpu", "tf-nightly-cpu", "tf-nightly-macos", "tf-nightly-intel"})
TF_KERAS_DISTRIBUTIONS = frozenset({"tf-keras", "tf-keras-nightly"})
KERAS_DISTRIBUTIONS = frozenset({"keras", "keras-nightly"})

# Evidence kinds.
TENSORFLOW = "tensorflow"
KERAS = "keras"
TF_KERAS = "tf_keras"
LEGACY_ENV = "legacy-env"

# Tiers: what is declared to install wins over a container image, which wins over prose.
DECLARED, IMAGE, PROSE, CODE = 0, 1, 2, 3

# Where a target comes from.
SETTING, PROJECT, DEFAULT = "setting", "project", "default"


@dataclass(frozen=True)
class Evidence:
    """One thing read: ``kind`` (``tensorflow``, ``keras``, ``tf_keras``,
    ``legacy-env``), the newest ``(major, minor)`` the pin allows (None: no
    upper bound), where (``file:line``) and the text itself."""

    kind: str
    upper: Optional[Version]
    where: str
    text: str
    tier: int = DECLARED
    # Among what the project itself installs (not an extra, a dev or test group, a
    # requirements-dev.txt): only such a `keras` or `tf_keras` pin tells what `tf.keras` is.
    main: bool = True

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


def _optional(found: Iterable[Evidence]) -> List[Evidence]:
    return [dataclasses.replace(e, main=False) for e in found]


# Requirements files for development, tests, docs...: not what the project runs with.
_OPTIONAL_FILE = re.compile(r"dev|test|doc|lint|ci\b|extra|optional|example|bench|build", re.IGNORECASE)


@dataclass(frozen=True)
class Target:
    """The TensorFlow a project runs and what ``tf.keras`` is there.

    ``tf``: the newest ``(major, minor)`` TensorFlow it allows (None: the newest
    release); ``keras``: 2 or 3; ``why``: the lines that decided it;
    ``source``: ``setting``, ``project`` (read from its files) or ``default``."""

    tf: Optional[Version]
    keras: int
    why: Tuple[str, ...] = ()
    source: str = DEFAULT
    # Does a file's own ``TF_USE_LEGACY_KERAS`` (``file_target``) make it Keras 2? Not for
    # ``upgrade``'s destination: moving to Keras 3 means dropping that line too.
    file_settings: bool = True

    @property
    def keras3(self) -> bool:
        return self.keras == 3

    def at_least(self, version: Version) -> bool:
        """Does the target's TensorFlow reach ``version`` (the newest release always does)?"""
        return self.tf is None or self.tf >= version

    @property
    def spelling(self) -> str:
        """The ``target-version`` value meaning this target: ``tf2.15``, ``tf2.16``,
        ``tf2.16-keras2``, ``latest``, ``latest-keras2``."""
        base = "latest" if self.tf is None else f"tf{self.tf[0]}.{self.tf[1]}"
        if self.keras == 2 and self.at_least(KERAS3_TF):
            return base + "-keras2"
        return base

    def describe(self) -> str:
        """``TF 2.15, Keras 2`` / ``the newest TF (2.16+), Keras 3``."""
        tf = "the newest TF (2.16+)" if self.tf is None else f"TF {self.tf[0]}.{self.tf[1]}"
        keras = "Keras 3" if self.keras3 else ("Keras 2 (tf_keras)" if self.at_least(KERAS3_TF) else "Keras 2")
        return f"{tf}, {keras}"

    def with_why(self, why: Sequence[str], source: str) -> "Target":
        return Target(self.tf, self.keras, tuple(why), source, self.file_settings)


NEWEST = Target(None, 3, ("no TensorFlow pin found: the newest release",), DEFAULT)

_SPELLING = re.compile(r"^(?:tf(?P<major>\d+)\.(?P<minor>\d+)|(?P<latest>latest))(?:-keras(?P<keras>[23]))?$")
SPELLINGS = ("tf2.N (e.g. tf2.15: Keras 2; tf2.16: Keras 3), tf2.N-keras2 (TF 2.16+ with tf_keras), latest, "
             "latest-keras2")


class TargetError(ValueError):
    """A ``target-version`` value that means nothing (the message is one line)."""


def parse_target(value: str, source: str = SETTING, why: str = "") -> Target:
    """The target a ``target-version`` value names; raises TargetError."""
    if not isinstance(value, str):
        raise TargetError(f"expected a string such as \"tf2.15\", got {value!r}")
    match = _SPELLING.match(value)
    if match is None:
        hint = ""
        loose = re.match(r"^(?:tf|tensorflow)?\s*(?:=+\s*)?v?(\d+)\.(\d+)", value.strip(), re.IGNORECASE)
        if loose is not None:
            hint = f" (did you mean `tf{loose.group(1)}.{loose.group(2)}`?)"
        raise TargetError(f"invalid target version `{value}`{hint}; expected {SPELLINGS}")
    keras = int(match.group("keras")) if match.group("keras") else None
    if match.group("latest"):
        tf = None
    else:
        tf = (int(match.group("major")), int(match.group("minor")))
        if tf[0] != 2:
            raise TargetError(f"invalid target version `{value}`: tflint-gpu checks TensorFlow 2 code (tf2.0 to tf2.N)")
    default_keras = 3 if tf is None or tf >= KERAS3_TF else 2
    if keras == 3 and default_keras == 2:
        raise TargetError(f"invalid target version `{value}`: tf.keras is Keras 2 before TF 2.16 "
                          f"(use tf{tf[0]}.{tf[1]}, or tf2.16 for Keras 3)")
    return Target(tf, keras or default_keras, (why,) if why else (), source)


# -- specifiers -----------------------------------------------------------------

_VERSION = re.compile(r"^v?(\d+)(?:\.(\d+|\*))?(?:\.(\d+|\*))?(?:[.-]?(?:a|b|c|rc|alpha|beta|pre|preview|dev|post)"
                      r"[.-]?\d*)*(?:\+[\w.]+)?(\.\*)?$", re.IGNORECASE)
_CLAUSE = re.compile(r"^\s*(?:(===|==|~=|!=|<=|>=|<|>|\^|~|=)\s*)?(\S+?)\s*$")
# Spaces before an operator separate clauses (`>=2.4 <2.16`); read from the start of a run only, so a
# long run of spaces is scanned once, not once from each of its positions.
_OPERATOR_GAP = re.compile(r"(?<!\s)\s+(?=[<>=!~^])")


def _parts(text: str) -> Optional[Tuple[List[Optional[int]], bool]]:
    """([major, minor, patch] with None for a missing part or a wildcard,
    wildcard?) of a version, or None when it is not one."""
    match = _VERSION.match(text.strip())
    if match is None:
        return None
    raw = [match.group(1), match.group(2), match.group(3)]
    wildcard = bool(match.group(4)) or "*" in raw
    parts: List[Optional[int]] = []
    for part in raw:
        if part is None or part == "*":
            break
        parts.append(int(part))
    prerelease = re.search(r"(a|b|c|rc|alpha|beta|pre|preview|dev)\d*", text[len(match.group(1)):], re.IGNORECASE)
    if prerelease and not wildcard:
        parts.append(-1)  # marks a pre-release: `<2.16.0rc0` excludes 2.16
    return parts, wildcard


_UNBOUNDED = "unbounded"
# The minor of a bound on the major only (`<3`, `==2.*`, `~=2.12`): any 2.x.
ANY_MINOR = 10 ** 6


def _clause_upper(op: str, version: str, conda: bool = False):
    """The newest (major, minor) one clause allows; _UNBOUNDED; or None when unreadable."""
    parsed = _parts(version)
    if parsed is None:
        return None
    parts, wildcard = parsed
    numbers = [p for p in parts if p is not None and p >= 0]
    prerelease = -1 in parts
    if not numbers:
        return None
    if op == "=" and conda:  # conda's `tensorflow=2.15`: 2.15.*
        op, wildcard = "==", True
    if op in ("==", "===", "="):
        if wildcard and len(numbers) < 2:
            return numbers[0], ANY_MINOR
        return numbers[0], numbers[1] if len(numbers) > 1 else 0
    if op == "~=":
        if len(numbers) <= 2:
            return numbers[0], ANY_MINOR
        return numbers[0], numbers[1]
    if op == "^":  # poetry: ^2.12 is >=2.12,<3
        return numbers[0], ANY_MINOR
    if op == "~":  # poetry: ~2.12 is >=2.12,<2.13
        if len(numbers) >= 2:
            return numbers[0], numbers[1]
        return numbers[0], ANY_MINOR
    if op == "<=":
        return numbers[0], numbers[1] if len(numbers) > 1 else 0
    if op == "<":
        major, minor = numbers[0], numbers[1] if len(numbers) > 1 else 0
        rest = numbers[2:]
        if any(rest) and not (prerelease and all(r == 0 for r in rest)):
            return major, minor  # <2.15.1: 2.15.0 is allowed
        if prerelease and len(numbers) > 2 and not all(r == 0 for r in rest):
            return major, minor
        if minor > 0:
            return major, minor - 1
        return major - 1, ANY_MINOR
    if op in (">", ">=", "!="):
        return _UNBOUNDED
    if op == "" or op is None:
        return numbers[0], numbers[1] if len(numbers) > 1 else 0  # a bare version (poetry, Pipfile): ==
    return None


def newest_allowed(specifier: str, conda: bool = False):
    """The newest ``(major, minor)`` a version specifier allows: None when it sets
    no upper bound (``>=2.10``, ``~=2.12``, ``*``, empty), or ``False`` when it
    cannot be read. Commas join clauses (the tightest wins); ``||`` (poetry) or
    ``|`` (conda) separate alternatives (the loosest wins)."""
    text = specifier.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if text in ("", "*"):
        return None
    alternatives = [alternative.strip() for alternative in re.split(r"\|\|?", text)]
    best: Optional[Version] = None
    first = True
    for alternative in alternatives:
        upper: object = _UNBOUNDED
        clauses = [c for part in alternative.split(",") for c in _OPERATOR_GAP.split(part) if c.strip()]
        if not clauses:
            return False
        for clause in clauses:
            match = _CLAUSE.match(clause)
            if match is None:
                return False
            found = _clause_upper(match.group(1) or "", match.group(2), conda)
            if found is None:
                return False
            if found is not _UNBOUNDED and (upper is _UNBOUNDED or found < upper):
                upper = found
        if upper is _UNBOUNDED:
            return None
        best = upper if first or (best is not None and upper > best) else best  # type: ignore[operator]
        first = False
    return best


def normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _kind(name: str) -> Optional[str]:
    name = normalize_name(name)
    if name in TF_DISTRIBUTIONS or name in TF_NIGHTLIES:
        return TENSORFLOW
    if name in KERAS_DISTRIBUTIONS:
        return KERAS
    if name in TF_KERAS_DISTRIBUTIONS:
        return TF_KERAS
    return None


_REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<rest>.*)$")
_WHEEL_VERSION = re.compile(r"/(?:tensorflow|tf_keras|keras)(?:_[a-z0-9]+)?-(\d+)\.(\d+)[^/]*\.whl", re.IGNORECASE)


def requirement(text: str, where: str, tier: int = DECLARED, conda: bool = False) -> Optional[Evidence]:
    """Evidence from one requirement (PEP 508: ``tensorflow[and-cuda]==2.15.0;
    python_version>='3.9'``; ``tensorflow @ https://.../tensorflow-2.15.0-...whl``;
    with ``conda``: ``tensorflow=2.15``, ``conda-forge::tensorflow 2.15.*``), or
    None when it names none of TensorFlow, Keras, tf_keras or cannot be read."""
    text = text.strip()
    if len(text) > 1 and text[0] in "\"'" and text[-1] == text[0]:
        text = text[1:-1]
    if conda and "::" in text:
        text = text.split("::", 1)[1]
    match = _REQUIREMENT.match(text)
    if match is None:
        return None
    name = match.group("name").rstrip(".")
    kind = _kind(name)
    if kind is None:
        return None
    rest = match.group("rest")
    if rest.startswith("@"):
        wheel = _WHEEL_VERSION.search(rest)
        upper = (int(wheel.group(1)), int(wheel.group(2))) if wheel else None
        return Evidence(kind, upper, where, text, tier) if wheel else None
    rest = rest.split(";", 1)[0].strip()
    if conda and rest and rest[0].isdigit():
        rest = "=" + rest.split()[0]  # `tensorflow 2.15.*`
    elif conda and rest.startswith("=") and not rest.startswith("=="):
        rest = "=" + rest[1:].split("=", 1)[0]  # `tensorflow=2.15.0=gpu_py39h...`: the version part
    if normalize_name(name) in TF_NIGHTLIES:
        return Evidence(kind, None, where, text, tier)
    upper = newest_allowed(rest, conda)
    if upper is False:
        return None
    return Evidence(kind, _bound(kind, upper), where, " ".join(text.split()), tier)


def _bound(kind: str, upper: Optional[Version]) -> Optional[Version]:
    """A TensorFlow bound on the major only (``<3``, ``~=2.12``) is no bound: the newest 2.x is the newest."""
    if kind == TENSORFLOW and upper is not None and upper[1] >= ANY_MINOR and upper[0] >= 2:
        return None
    return upper


# -- readers, one a kind of file (pure: text in, evidence out) --------------------


def from_requirements(text: str, name: str) -> List[Evidence]:
    """``requirements.txt`` lines (comments, options, ``\\`` continuations, hashes skipped)."""
    found: List[Evidence] = []
    optional = bool(_OPTIONAL_FILE.search(os.path.basename(name)))
    for number, line in _logical_lines(text):
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not line or line.startswith("-"):
            continue
        line = re.split(r"(?<!\s)\s+--", line, 1)[0]  # `--hash=...`, per-requirement options
        evidence = requirement(line, f"{name}:{number}")
        if evidence is not None:
            found.append(evidence)
    return _optional(found) if optional else found


def requirements_includes(text: str) -> List[str]:
    """Files a requirements file includes (``-r``, ``-c``, ``--requirement``, ``--constraint``)."""
    found = []
    for _, line in _logical_lines(text):
        match = re.match(r"^\s*(?:-r|-c|--requirement|--constraint)(?:\s*=\s*|\s+|(?=\S))(\S+)", line)
        if match:
            found.append(match.group(1))
    return found


def _logical_lines(text: str) -> Iterable[Tuple[int, str]]:
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        number, line = index + 1, lines[index]
        while line.endswith("\\") and index + 1 < len(lines):
            index += 1
            line = line[:-1] + " " + lines[index]
        yield number, line
        index += 1


def _line_of(text: str, needle: str, name: str, after: int = 0) -> str:
    """``name:line`` of the first line (from ``after``) holding ``needle``."""
    for number, line in enumerate(text.splitlines(), 1):
        if number > after and needle in line:
            return f"{name}:{number}"
    return name


def toml_module():
    """``tomllib`` (``tomli`` before Python 3.11), imported when first asked: most runs read no TOML file."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def _toml(text: str) -> Optional[Dict]:
    tomllib = toml_module()
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def from_pyproject(text: str, name: str) -> List[Evidence]:
    """``[project] dependencies``/``optional-dependencies``, poetry's dependency
    tables (``tensorflow = "^2.12"``, ``{version = "..."}``) and PDM's dev lists."""
    data = _toml(text)
    if not isinstance(data, dict):
        return []
    found: List[Evidence] = []
    project = data.get("project")
    if isinstance(project, dict):
        lists = [(project.get("dependencies"), True)]
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            lists.extend((items, False) for items in optional.values())
        for items, main in lists:
            for item in items if isinstance(items, list) else ():
                if isinstance(item, str):
                    evidence = requirement(item, _line_of(text, item, name))
                    if evidence is not None:
                        found.append(evidence if main else dataclasses.replace(evidence, main=False))
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        tables = [(poetry.get("dependencies"), True), (poetry.get("dev-dependencies"), False)]
        groups = poetry.get("group")
        if isinstance(groups, dict):
            tables.extend((g.get("dependencies"), key == "main") for key, g in groups.items() if isinstance(g, dict))
        for table, main in tables:
            if isinstance(table, dict):
                items = _table_dependencies(table, text, name)
                found.extend(items if main else _optional(items))
    pdm = tool.get("pdm") if isinstance(tool, dict) else None
    if isinstance(pdm, dict) and isinstance(pdm.get("dev-dependencies"), dict):
        for items in pdm["dev-dependencies"].values():
            for item in items if isinstance(items, list) else ():
                if isinstance(item, str):
                    evidence = requirement(item, _line_of(text, item, name))
                    if evidence is not None:
                        found.append(dataclasses.replace(evidence, main=False))
    return found


def _table_dependencies(table: Dict, text: str, name: str) -> List[Evidence]:
    """``package = "spec"`` / ``package = {version = "spec", ...}`` (poetry, Pipfile)."""
    found = []
    for package, spec in table.items():
        if not isinstance(package, str) or _kind(package) is None:
            continue
        if isinstance(spec, dict):
            spec = spec.get("version", "*")
        if isinstance(spec, list):  # poetry's multiple constraints: the loosest
            spec = " || ".join(s.get("version", "*") if isinstance(s, dict) else str(s) for s in spec)
        if not isinstance(spec, str):
            continue
        where = _line_of_key(text, package, name)
        upper = newest_allowed(spec)
        if upper is False:
            continue
        if normalize_name(package) in TF_NIGHTLIES:
            upper = None
        kind = _kind(package)
        shown = f"{package} = {spec!r}".replace("'", '"')
        found.append(Evidence(kind, _bound(kind, upper), where, shown))
    return found


def _line_of_key(text: str, key: str, name: str) -> str:
    pattern = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=", re.IGNORECASE)
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return f"{name}:{number}"
    return name


def from_pipfile(text: str, name: str) -> List[Evidence]:
    """``[packages]`` and ``[dev-packages]`` of a Pipfile."""
    data = _toml(text)
    if not isinstance(data, dict):
        return []
    found: List[Evidence] = []
    for section in ("packages", "dev-packages"):
        table = data.get(section)
        if isinstance(table, dict):
            items = _table_dependencies(table, text, name)
            found.extend(items if section == "packages" else _optional(items))
    return found


def from_setup_cfg(text: str, name: str) -> List[Evidence]:
    """``[options] install_requires`` and ``[options.extras_require]`` of setup.cfg."""
    import configparser  # here: most runs read no setup.cfg

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    values = []
    if parser.has_option("options", "install_requires"):
        values.append((parser.get("options", "install_requires"), True))
    if parser.has_section("options.extras_require"):
        values.extend((v, False) for _, v in parser.items("options.extras_require"))
    found = []
    for value, main in values:
        for item in re.split(r"[\n;]", value) if "\n" in value else [value]:
            item = item.split("#", 1)[0].strip()
            if item:
                evidence = requirement(item, _line_of(text, item, name))
                if evidence is not None:
                    found.append(evidence if main else dataclasses.replace(evidence, main=False))
    return found


def from_setup_py(text: str, name: str) -> List[Evidence]:
    """Requirement strings in list, tuple or set displays and dict values of a
    setup.py (``install_requires=[...]``, ``REQUIRED = [...]``, ``extras_require``),
    read with ``ast``: the file is never run."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    # Extras, test and build requirements (dict values, `tests_require=`..., and the names
    # handed to those) are not what the project runs with.
    optional_roots: List[ast.AST] = []
    optional_names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in _SETUP_OPTIONAL:
            optional_roots.append(node.value)
            optional_names.update(n.id for n in ast.walk(node.value) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Dict):
            optional_roots.extend(v for v in node.values if v is not None)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in optional_names
                                                for t in node.targets):
            optional_roots.append(node.value)
    optional = {id(n) for root in optional_roots for n in ast.walk(root)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [v for v in node.values if v is not None]
        else:
            continue
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                evidence = requirement(item.value, f"{name}:{item.lineno}")
                if evidence is not None:
                    found.append(dataclasses.replace(evidence, main=False) if id(item) in optional else evidence)
    return found


_SETUP_OPTIONAL = frozenset({"extras_require", "tests_require", "setup_requires"})


def from_environment_yml(text: str, name: str) -> List[Evidence]:
    """conda's ``dependencies:`` items (``- tensorflow=2.15``) and their ``- pip:`` list."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        match = re.match(r"^\s*-\s+([^#\s](?:[^#]*[^#\s])?)\s*(?:#.*)?$", line)
        if match is None:
            continue
        item = match.group(1).strip().strip("\"'")
        pip = re.search(r"(?:^|\s)-\s*pip:\s*$", line)
        if pip or item.endswith(":"):
            continue
        evidence = requirement(item, f"{name}:{number}", conda="==" not in item and "=" in item or " " in item)
        if evidence is not None:
            found.append(evidence)
    return found


_QUOTE = r"""\\?["']"""
# TensorFlow reads the variable when it is imported and takes exactly "1", "true" and "True"
# (tensorflow/__init__.py; run under TF 2.21: "yes", "on" or "TRUE" leave tf.keras Keras 3).
_TRUE = r"""(?:\\?["']\s*)?(?-i:(1|true|True))(?![\w.])"""  # after a `\s*` of its own: one run of spaces, one reading
# Loose (a shell, a .env file, a Dockerfile, prose): `TF_USE_LEGACY_KERAS=1`, `ENV TF_USE_LEGACY_KERAS 1`.
_LEGACY_SET = re.compile(r"TF_USE_LEGACY_KERAS" + r"(?:" + _QUOTE + r")?(?:\s*(?:\]\s*=|,|:|=)|[ \t])\s*" + _TRUE,
                         re.IGNORECASE)
# In Python code and notebooks: the name as a string key set to a true value (`os.environ["..."] = "1"`,
# `setdefault("...", "1")`, `putenv`, `{"...": "1"}`) or IPython's `%env ...=1`; not a message that
# mentions `TF_USE_LEGACY_KERAS=True` in its text.
_LEGACY_CODE = re.compile(r"(?:" + _QUOTE + r"TF_USE_LEGACY_KERAS" + _QUOTE + r"\s*(?:\]\s*=|,|:)\s*"
                          r"|%(?:set_)?env\s+TF_USE_LEGACY_KERAS(?:\s*=)?\s*)" + _TRUE, re.IGNORECASE)
# In a README: those, and shell commands (`export TF_USE_LEGACY_KERAS=1`, `set ...=1`,
# `TF_USE_LEGACY_KERAS=1 python train.py`); not a sentence or a table naming the variable.
_LEGACY_SHELL = re.compile(
    r"(?:" + _LEGACY_CODE.pattern + r")"
    r"|(?:^|[\s`;&|(])(?:export|set|setx|env)\s+TF_USE_LEGACY_KERAS\s*=\s*" + _TRUE +
    r"|^\s*(?:[$>]\s*|`)?TF_USE_LEGACY_KERAS\s*=\s*" + _TRUE + r"\s+\S", re.IGNORECASE)


def legacy_env(text: str, name: str, tier: int = CODE, comments: str = "#") -> List[Evidence]:
    """Places that set ``TF_USE_LEGACY_KERAS`` to a true value (``os.environ[...] =
    "1"``, ``setdefault``, ``%env``, ``export``, ``ENV``, ``.env`` lines); not
    reads (``os.environ.get(..., "1")``, ``getenv``) nor comments. In code
    (``tier`` CODE) only the forms that set it from Python or IPython."""
    if "TF_USE_LEGACY_KERAS" not in text:
        return []
    pattern = {CODE: _LEGACY_CODE, PROSE: _LEGACY_SHELL}.get(tier, _LEGACY_SET)
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in pattern.finditer(line):
            before = line[:match.start()]
            content = before.lstrip()
            if content.startswith('"') and text.lstrip().startswith("{"):
                content = content[1:]  # a notebook's JSON line: the cell's text starts after the quote
            if comments and comments in content:
                continue  # in a comment
            if re.search(r"(?:\bget|getenv)\(\s*$", before):
                continue  # a read with a default
            found.append(Evidence(LEGACY_ENV, None, f"{name}:{number}", " ".join(line.strip().split())[:120],
                                  tier))
            break
    return found


def from_dotenv(text: str, name: str) -> List[Evidence]:
    return legacy_env(text, name, DECLARED)


def from_code(text: str, name: str) -> List[Evidence]:
    """A Python file or notebook that sets ``TF_USE_LEGACY_KERAS`` before importing tensorflow
    (``own_settings``; a notebook's code cells in order, named ``name:cell N:line``)."""
    if name.lower().endswith(".ipynb"):
        return _notebook_settings(text, name)
    return own_settings(text, name)


def _notebook_settings(text: str, name: str) -> List[Evidence]:
    if "TF_USE_LEGACY_KERAS" not in text:
        return []
    try:
        cells = json.loads(text).get("cells")
    except (ValueError, AttributeError, RecursionError):
        cells = None
    if not isinstance(cells, list):
        return legacy_env(text, name, CODE)  # not a notebook's JSON: its lines as they are
    found: List[Evidence] = []
    number = 0
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type", "code") != "code":
            continue
        number += 1
        source = cell.get("source", "")
        source = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else source
        if not isinstance(source, str):
            continue
        found.extend(own_settings(source, f"{name}:cell {number}"))
        if any(_TF_IMPORT.match(line) for line in source.splitlines()):
            break  # tensorflow is imported: a later setting comes too late
    return found


# A line importing tensorflow (``import tensorflow as tf``, ``import os, tensorflow``, ``from tensorflow import keras``).
_TF_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+tensorflow\b|import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*"
                        r"tensorflow\b)")


def own_settings(source: str, name: str) -> List[Evidence]:
    """Where the Python ``source`` sets ``TF_USE_LEGACY_KERAS`` to a value TensorFlow takes as true
    (``os.environ[...] = "1"``, ``setdefault``, ``update``, ``putenv``, ``%env``) on a line before
    its first import of tensorflow. Run under TF 2.21: set before ``import tensorflow``, both
    ``tf.keras`` and ``from tensorflow.keras import ...`` are tf_keras; set after it, ``from
    tensorflow.keras import ...`` is Keras 3 (the import already chose its path), so such a
    setting is not counted."""
    if "TF_USE_LEGACY_KERAS" not in source:
        return []
    found = legacy_env(source, name, CODE)
    if not found:
        return []
    first = next((number for number, line in enumerate(source.splitlines(), 1) if _TF_IMPORT.match(line)), None)
    return [e for e in found if first is None or int(e.where.rsplit(":", 1)[1]) < first]


def file_target(target: Optional[Target], source: str, name: str) -> Optional[Target]:
    """The target of one Python file: ``target`` (its project's; None: the newest release),
    Keras 2 where the file itself sets ``TF_USE_LEGACY_KERAS`` before importing tensorflow
    (``own_settings``): then ``tf.keras`` is tf_keras 2 for that program, whatever the project
    pins. The same object when nothing changes: ``target`` as it is where it is Keras 2 already
    or takes no file's setting (``Target.file_settings``: upgrade's destination)."""
    if target is not None and (not target.keras3 or not target.file_settings):
        return target
    found = own_settings(source, name)
    if not found:
        return target
    base = target if target is not None else NEWEST
    why = () if base.source == DEFAULT else base.why
    return Target(base.tf, 2, tuple(why) + (str(found[0]),), PROJECT if base.source == DEFAULT else base.source)


_FROM_IMAGE = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(?:[\w.-]+(?::\d+)?/)?tensorflow/tensorflow(?::(\S+))?",
                         re.IGNORECASE)


def from_dockerfile(text: str, name: str) -> List[Evidence]:
    """``FROM tensorflow/tensorflow:2.15.0-gpu`` (``latest``, ``nightly``: the newest),
    ``pip install`` in ``RUN`` lines and ``ENV TF_USE_LEGACY_KERAS=1``."""
    found: List[Evidence] = []
    for number, line in _logical_lines(text):
        match = _FROM_IMAGE.match(line)
        if match:
            tag = (match.group(1) or "latest").split("@", 1)[0]
            version = re.match(r"^(\d+)\.(\d+)", tag)
            upper = (int(version.group(1)), int(version.group(2))) if version else None
            found.append(Evidence(TENSORFLOW, upper, f"{name}:{number}", " ".join(line.split()), IMAGE))
        elif re.match(r"^\s*RUN\b", line, re.IGNORECASE):
            found.extend(_pip_commands(line, f"{name}:{number}", IMAGE))
    found.extend(legacy_env(text, name, IMAGE))
    return found


_INSTALL = re.compile(r"(?:\bpip3?|\bpython3?\s+-m\s+pip|\buv\s+pip|\bconda|\bmamba)\s+install\s+(?P<args>[^\n`|&;]*)")


def _pip_commands(line: str, where: str, tier: int) -> List[Evidence]:
    found = []
    for match in _INSTALL.finditer(line):
        conda = "conda" in match.group(0)[:6] or "mamba" in match.group(0)[:6]
        args = match.group("args").split()
        skip = False
        for arg in args:
            if skip:
                skip = False
                continue
            if arg.startswith("-"):
                skip = arg in ("-r", "-c", "-e", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
                               "--requirement", "--constraint", "--channel", "-n", "--name", "--prefix", "-p")
                continue
            item = arg.strip("\"'")
            if item.endswith((".", ",", ")")) and not item[-2:-1].isdigit():
                item = item.rstrip(".,)")
            evidence = requirement(item, where, tier, conda=conda and "==" not in item)
            if evidence is not None:
                found.append(evidence)
    return found


def from_readme(text: str, name: str) -> List[Evidence]:
    """``pip install tensorflow==2.15`` (and conda) commands of a README, and
    ``TF_USE_LEGACY_KERAS=1`` it tells to set."""
    found: List[Evidence] = []
    for number, line in enumerate(text.splitlines(), 1):
        if "install" in line:
            found.extend(_pip_commands(line, f"{name}:{number}", PROSE))
    commands = _command_lines(text)
    found.extend(e for e in legacy_env(text, name, PROSE, comments="")
                 if int(e.where.rsplit(":", 1)[1]) in commands)
    return found


_COMMAND_START = re.compile(r"^\s*(?:`\s*)?(?:[$>]\s*|export\s|set\s|setx\s|env\s|%|os\.environ|TF_USE_LEGACY_KERAS)")


def _command_lines(text: str) -> set:
    """Numbers of the README lines that are code, not prose: in a fenced block (or a
    reStructuredText ``::`` block), indented by four spaces, or a line that is a
    command (``$ ...``, ``export ...``, ``os.environ[...] = ...``, a backticked command)."""
    numbers = set()
    fence = None
    literal = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if fence is not None:
            numbers.add(number)
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if line.startswith(("    ", "\t")) and stripped:
            if literal or not stripped.startswith(("-", "*", "|")):
                numbers.add(number)
            continue
        literal = stripped.endswith("::")
        if _COMMAND_START.match(line):
            numbers.add(number)
    return numbers


# -- deciding -------------------------------------------------------------------


def _tightest(items: Sequence[Evidence]) -> Tuple[Optional[Version], Optional[Evidence]]:
    """The lowest upper bound among ``items`` and the item that sets it
    (None, first item: none of them is bounded)."""
    bounded = [e for e in items if e.upper is not None]
    if not bounded:
        return None, (items[0] if items else None)
    best = min(bounded, key=lambda e: e.upper)  # type: ignore[arg-type,return-value]
    return best.upper, best


def resolve(evidence: Sequence[Evidence]) -> Target:
    """The target all this evidence says, with why. TensorFlow's pins are read
    from the best tier that has one (declared dependencies, then a Docker
    image, then the README's commands); within the declared files, the
    tightest bound wins (they are installed together), within a README the
    loosest (its commands are alternatives)."""
    why: List[str] = []
    tf_items = [e for e in evidence if e.kind == TENSORFLOW]
    tf: Optional[Version] = None
    if tf_items:
        tier = min(e.tier for e in tf_items)
        items = [e for e in tf_items if e.tier == tier]
        if tier == PROSE:
            bounded = [e for e in items if e.upper is not None]
            source = None if len(bounded) < len(items) else max(bounded, key=lambda e: e.upper)  # type: ignore
            tf = source.upper if source is not None else None
            source = source or next(e for e in items if e.upper is None)
        else:
            tf, source = _tightest(items)
        if source is not None:
            why.append(str(source))
    keras_items = [e for e in evidence if e.kind == KERAS and e.main and e.upper is not None and e.upper[0] < 3]
    legacy = [e for e in evidence if e.kind == LEGACY_ENV]
    tf_keras = [e for e in evidence if e.kind == TF_KERAS and e.main]
    if tf is not None and tf < KERAS3_TF:
        return Target(tf, 2, tuple(why), PROJECT)
    if keras_items:
        keras_pin = min(keras_items, key=lambda e: (e.tier, e.upper))  # type: ignore[arg-type,return-value]
        capped = (2, 15)  # TF 2.16 requires Keras 3
        return Target(capped, 2, tuple(why) + (f"{keras_pin} (TF 2.16 requires Keras 3)",), PROJECT)
    if legacy or tf_keras:
        reason = min(legacy + tf_keras, key=lambda e: e.tier)
        return Target(tf, 2, tuple(why) + (str(reason),), PROJECT)
    if not why:
        return NEWEST
    return Target(tf, 3, tuple(why), PROJECT)


# -- the file system: which folder, which files ------------------------------------

_REQUIREMENTS = re.compile(r"^requirements[\w.-]*\.(?:txt|in)$", re.IGNORECASE)
_DOCKERFILE = re.compile(r"^(?:Dockerfile(?:[.-][\w.-]+)?|[\w.-]+\.[Dd]ockerfile)$")
_README = re.compile(r"^readme(?:\.(?:md|rst|txt|markdown))?$", re.IGNORECASE)
_ENVIRONMENT = re.compile(r"^(?:(?:environment|conda)(?:[-_.][\w.-]*)?|env)\.ya?ml$", re.IGNORECASE)
MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "Pipfile", ".env")
_INSTALLED = ("site-packages", "dist-packages")
MAX_BYTES = 1024 * 1024


def _is_marker(name: str) -> bool:
    return (name in MARKERS or bool(_REQUIREMENTS.match(name)) or bool(_DOCKERFILE.match(name))
            or bool(_README.match(name)) or bool(_ENVIRONMENT.match(name)))


def declares(path: str) -> bool:
    """Is ``path`` a file ``read_folder`` reads (a requirements file, also in ``requirements/``, a
    Dockerfile, also in ``docker/``, a README, an environment file, pyproject.toml...)? Its change can
    change the target of the files below its folder."""
    folder, name = os.path.split(path)
    parent = os.path.basename(folder)
    return (_is_marker(name) or (parent == "requirements" and name.endswith((".txt", ".in")))
            or (parent == "docker" and bool(_DOCKERFILE.match(name))))


# The same files as globs, for an editor that watches files for the language server (over-approximate:
# a file they match that ``declares`` refuses costs a check, not a wrong answer).
DECLARATION_GLOBS = ("**/requirements*.{txt,in}", "**/requirements/*.{txt,in}", "**/Dockerfile*", "**/*.[Dd]ockerfile",
                     "**/[Rr][Ee][Aa][Dd][Mm][Ee]*", "**/{environment,conda,env}*.{yml,yaml}",
                     "**/{pyproject.toml,setup.py,setup.cfg,Pipfile,.env}")


def target_folder(start: str, cache: Optional[Dict[str, Optional[str]]] = None) -> Optional[str]:
    """The nearest folder from ``start`` upward whose dependency declarations,
    Dockerfiles or README say something of TensorFlow, Keras or tf_keras
    (``read_folder`` finds evidence): a folder holding such files that name
    none of them (a sub-project's README, a ``FROM python`` Dockerfile) does
    not end the search. The search ends at a repository's root (a folder
    with ``.git``), at an installed package's folder (``site-packages``: its
    README is no project's) and at the file system's root. ``cache``:
    answers per folder, shared between calls."""

    def found_in(current: str) -> Optional[str]:
        if os.path.basename(current) in _INSTALLED:
            return STOP
        try:
            names = os.listdir(current)
        except OSError:
            names = []
        if (any(_is_marker(n) for n in names) or ("requirements" in names and os.path.isdir(
                os.path.join(current, "requirements")))) and read_folder(current):
            return current
        return STOP if ".git" in names else None

    return nearest_upward(os.path.abspath(start), cache if cache is not None else {}, found_in)


def _read(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_BYTES:
        return None
    return decode(data)


_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def decode(data: bytes) -> str:
    """The text of a project file in the encoding it comes in: its BOM's (UTF-8, UTF-16 and
    UTF-32, either byte order: PowerShell's ``>`` writes UTF-16), UTF-16 without a BOM when
    every other byte is zero where ASCII would be, else UTF-8. Undecodable bytes become U+FFFD."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding, errors="replace")
    head = data[:4096]
    if len(head) >= 2 and b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if odd.count(0) * 2 >= len(odd) and even.count(0) == 0:
            return data.decode("utf-16-le", errors="replace")
        if even.count(0) * 2 >= len(even) and odd.count(0) == 0:
            return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")


def read_folder(folder: str) -> List[Evidence]:
    """Everything the declaration files of ``folder`` say (names relative to it):
    its requirements files (and ``requirements/*.txt``, following ``-r``/``-c``
    within the folder), pyproject.toml, setup.cfg, setup.py, Pipfile,
    environment.yml, Dockerfiles (also in ``docker/``), ``.env`` and the README."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found: List[Evidence] = []
    seen = set()

    def requirements(relative: str, depth: int = 0) -> None:
        full = os.path.normpath(os.path.join(folder, relative))
        if full in seen or depth > 5 or os.path.commonpath([full, os.path.abspath(folder)]) != os.path.abspath(folder):
            return
        seen.add(full)
        text = _read(full)
        if text is None:
            return
        name = os.path.relpath(full, folder).replace(os.sep, "/")
        found.extend(from_requirements(text, name))
        for include in requirements_includes(text):
            requirements(os.path.join(os.path.dirname(name), include), depth + 1)

    for name in names:
        if _REQUIREMENTS.match(name):
            requirements(name)
    sub = os.path.join(folder, "requirements")
    if os.path.isdir(sub):
        for name in sorted(os.listdir(sub)):
            if name.endswith((".txt", ".in")):
                requirements(os.path.join("requirements", name))
    readers = {"pyproject.toml": from_pyproject, "setup.cfg": from_setup_cfg, "setup.py": from_setup_py,
               "Pipfile": from_pipfile, ".env": from_dotenv}
    for name in names:
        reader = readers.get(name)
        if reader is None:
            if _ENVIRONMENT.match(name):
                reader = from_environment_yml
            elif _DOCKERFILE.match(name):
                reader = from_dockerfile
            elif _README.match(name):
                reader = from_readme
        if reader is not None and os.path.isfile(os.path.join(folder, name)):
            text = _read(os.path.join(folder, name))
            if text is not None:
                found.extend(reader(text, name))
    docker = os.path.join(folder, "docker")
    if os.path.isdir(docker):
        for name in sorted(os.listdir(docker)):
            if _DOCKERFILE.match(name):
                text = _read(os.path.join(docker, name))
                if text is not None:
                    found.extend(from_dockerfile(text, f"docker/{name}"))
    return found


def project_target(root: str) -> Tuple[Target, Optional[str]]:
    """The target read from the project around ``root`` (``target_folder``), and that folder."""
    folder = target_folder(root)
    if folder is None:
        return NEWEST, None
    return resolve(read_folder(folder)), folder


def relative_why(target: Target, folder: Optional[str], base: Optional[str] = None) -> Target:
    """``target`` with its reasons named from ``base`` (default: the current folder) when ``folder`` is elsewhere."""
    if folder is None:
        return target
    prefix = os.path.relpath(folder, base or os.getcwd())
    if prefix in (".", ""):
        return target
    prefix = Path(prefix).as_posix()
    return target.with_why(tuple(f"{prefix}/{w}" if not w.startswith(("no ", "--")) else w for w in target.why),
                           target.source)
