"""Version guards: does a branch of a TensorFlow/Keras version comparison run under Keras 3?

Code written for several TensorFlow releases picks its API by the version:

    policy = mp.global_policy() if tf_version >= (2, 4, 0) else mp.experimental.global_policy()
    if LooseVersion(tf.__version__) < "2.4": ...
    if int(tf.__version__.split(".")[1]) < 4: ...

The branch for old releases never runs where the removed API is gone, so a
rule about removed APIs must leave it alone (as it leaves the ``else:`` of
``if hasattr(...)`` alone). ``VersionTests.runs(test, scope, body)`` tells,
for the ``if``/conditional expression test ``test``, whether the body
(``body=True``) or the ``else`` runs under TensorFlow 2.16+ with Keras 3:
True, False, or None when the test compares a version with something that
cannot be read (``tf_version >= MIN_TF``): then either branch may be the
fallback. A test that compares no version is not a version test
(``is_version_test``).

How: the test is evaluated, as Python would, once for each TensorFlow
release that ships Keras 3 (2.16 to 2.21) and each Keras 3 release, with
``tf.__version__`` (``tf.version.VERSION``, ``keras.__version__``,
``tf.keras.__version__``, ``importlib.metadata.version("tensorflow")``) set to
that release's string. What the file does with the string is evaluated too:
``split``, indexing and slices, ``int``/``float``/``str``/``tuple``/``list``,
``map(int, ...)`` and comprehensions of those, ``startswith``,
``packaging.version.parse``/``Version`` (and its ``release``, ``major``,
``minor``, ``micro``), ``distutils``' ``LooseVersion``/``StrictVersion``,
``pkg_resources.parse_version``, comparisons, ``and``/``or``/``not``, and
names bound to any of these. So ``float(tf.__version__[:3]) >= 2.4`` is False
under TF 2.21 (``"2.2"``), as it is when the program runs. A name the file
does not bind but whose words say it holds the TensorFlow or Keras version
(``tf_version``, ``TF_VERSION``, ``self.keras_version``) is tried as a string,
as a tuple of ints (2 and 3 parts) and as a parsed version: the answer counts
only when every reading that compares without a TypeError agrees.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ASSIGNED, IMPORT, ScopeInfo, lookup
from tflint_gpu.semantic.names import Resolver

# Releases that run Keras 3 as tf.keras (TensorFlow 2.16+), and Keras 3 releases.
TF_RELEASES = ("2.16.0", "2.16.2", "2.17.1", "2.18.1", "2.19.1", "2.20.0", "2.21.0")
KERAS_RELEASES = ("3.0.0", "3.3.3", "3.5.0", "3.8.0", "3.10.0", "3.12.0", "3.15.1")
_TF_SOURCES = frozenset({"tensorflow.__version__", "tensorflow.version.VERSION", "tensorflow.VERSION",
                         "tensorflow.version.__version__"})
_KERAS_SOURCES = frozenset({"keras.__version__", "keras.version.__version__"})
_KERAS2_RAW = ("tf_keras", "tensorflow.python.keras")
_DISTRIBUTIONS = {"tensorflow": "tensorflow", "tensorflow-cpu": "tensorflow", "tensorflow-gpu": "tensorflow",
                  "tensorflow_cpu": "tensorflow", "tensorflow_gpu": "tensorflow", "keras": "keras"}
_METADATA_VERSION = frozenset({"importlib.metadata.version", "importlib_metadata.version"})
_PACKAGING = ("packaging.", "pkg_resources.", "setuptools.", "distutils.", "looseversion.")
_PARSE_NAMES = frozenset({"parse", "Version", "parse_version"})
_LOOSE_NAMES = frozenset({"LooseVersion", "StrictVersion"})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_DEPTH = 12
_STRING_METHODS = frozenset({"split", "startswith", "endswith", "strip", "lstrip", "rstrip", "partition"})
_VERSION_WORDS = frozenset({"ver", "version"})
# Words of a name that holds a bound to compare with, not the version installed.
_BOUND_WORDS = frozenset({"min", "max", "minimum", "maximum", "required", "req", "supported", "target",
                          "expected", "latest", "oldest", "newest", "last", "first", "next", "least"})
# How a name holding "the version" in an unknown form may be read.
_READINGS = ("str", "tuple3", "tuple2", "parsed", "loose")


class _Unknown:
    """A value the evaluation cannot tell; ``version``: it depends on a version it could not read."""

    __slots__ = ("version",)

    def __init__(self, version: bool) -> None:
        self.version = version


UNKNOWN = _Unknown(False)  # something other than a version (a flag, a setting)
VERSION_UNKNOWN = _Unknown(True)  # a version compared with what cannot be read


class _Invalid(Exception):
    """This reading of an opaque version name does not type-check (Python would raise)."""


def _release(text: str) -> Tuple[int, ...]:
    parts = []
    for part in text.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        parts.append(int(digits.group()))
        if digits.group() != part:
            break
    return tuple(parts)


class _Ordered:
    """Comparisons through ``_key(other)``, which gives both sides' keys (or
    raises TypeError where the other side is not a version of the same sort)."""

    __slots__ = ()

    def _key(self, other: Any) -> Tuple[Any, Any]:
        raise NotImplementedError

    def __lt__(self, other: Any) -> bool:
        a, b = self._key(other)
        return a < b

    def __le__(self, other: Any) -> bool:
        a, b = self._key(other)
        return a <= b

    def __gt__(self, other: Any) -> bool:
        a, b = self._key(other)
        return a > b

    def __ge__(self, other: Any) -> bool:
        a, b = self._key(other)
        return a >= b

    def __ne__(self, other: Any) -> bool:
        return not self == other


class Parsed(_Ordered):
    """``packaging.version.Version``: compares with other parsed versions only, by release."""

    __slots__ = ("release",)

    def __init__(self, text: str) -> None:
        self.release = _release(text)

    def _key(self, other: Any) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
        if not isinstance(other, Parsed):
            raise TypeError("not a version")
        width = max(len(self.release), len(other.release))
        return (self.release + (0,) * (width - len(self.release)),
                other.release + (0,) * (width - len(other.release)))

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Parsed):
            return False
        a, b = self._key(other)
        return a == b

    def __hash__(self) -> int:  # pragma: no cover - not used as a key
        return hash(self.release)

    def attribute(self, name: str) -> Any:
        if name == "release":
            return self.release
        if name in ("major", "minor", "micro"):
            index = ("major", "minor", "micro").index(name)
            return self.release[index] if index < len(self.release) else 0
        if name == "base_version":
            return ".".join(str(p) for p in self.release)
        return UNKNOWN


class Loose(_Ordered):
    """``distutils.version.LooseVersion``: a string on the other side is parsed too."""

    __slots__ = ("version",)

    def __init__(self, text: str) -> None:
        self.version = [int(p) if p.isdigit() else p for p in re.split(r"[.\-_+]", text) if p]

    def _key(self, other: Any) -> Tuple[List[Any], List[Any]]:
        if isinstance(other, str):
            other = Loose(other)
        if not isinstance(other, Loose):
            raise TypeError("not a version")
        return self.version, other.version

    def __eq__(self, other: Any) -> bool:
        a, b = self._key(other)
        return a == b

    def __hash__(self) -> int:  # pragma: no cover - not used as a key
        return hash(tuple(self.version))

    def attribute(self, name: str) -> Any:
        return list(self.version) if name == "version" else UNKNOWN


def version_words(name: str) -> Optional[str]:
    """"tensorflow"/"keras" when a name says it holds that version
    (``tf_version``, ``TF_VERSION``, ``tfVersion``, ``keras_ver``), else None
    (also for a bound: ``MIN_TF_VERSION``)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not any(w in _VERSION_WORDS for w in words) or any(w in _BOUND_WORDS for w in words):
        return None
    if "keras" in words:
        return "keras"
    if "tf" in words or "tensorflow" in words:
        return "tensorflow"
    return None


class _Env:
    __slots__ = ("versions", "reading", "touched", "opaque", "locals")

    def __init__(self, versions: Dict[str, str], reading: str) -> None:
        self.versions = versions
        self.reading = reading
        self.touched = False  # a version was read
        self.opaque = False  # ... through a name whose form is not known
        self.locals: Dict[str, Any] = {}


class VersionTests:
    def __init__(self, resolver: Resolver, legacy_env: bool = False) -> None:
        self.resolver = resolver
        self.legacy_env = legacy_env  # tf.keras may be Keras 2 in this file
        self._cache: Dict[Tuple[int, bool], Optional[bool]] = {}
        self._is_test: Dict[int, bool] = {}

    # -- the questions ------------------------------------------------------
    def is_version_test(self, test: cst.BaseExpression, scope: ScopeInfo) -> bool:
        """Does evaluating ``test`` read a TensorFlow or Keras version?"""
        key = id(test)
        if key not in self._is_test:
            env = _Env({"tensorflow": TF_RELEASES[-1], "keras": KERAS_RELEASES[-1]}, "str")
            try:
                self._eval(test, scope, env, 0)
            except _Invalid:
                pass
            self._is_test[key] = env.touched
        return self._is_test[key]

    def runs(self, test: cst.BaseExpression, scope: ScopeInfo, body: bool) -> Optional[bool]:
        """Does the branch of ``test`` (its body if ``body``, else its ``else``)
        run under TensorFlow 2.16+ / Keras 3? True, False, or None (it depends
        on a version the file compares with something unreadable). Only for a
        version test (``is_version_test``)."""
        key = (id(test), body)
        if key in self._cache:
            return self._cache[key]
        verdicts = set()
        for reading in _READINGS:
            outcomes = []
            opaque = False
            for tf_release in TF_RELEASES:
                for keras_release in KERAS_RELEASES:
                    env = _Env({"tensorflow": tf_release, "keras": keras_release}, reading)
                    try:
                        outcomes.append(_truth(self._eval(test, scope, env, 0)))
                    except _Invalid:
                        pass
                    opaque = opaque or env.opaque
            if outcomes:
                verdicts.add(_verdict(outcomes, body))
            if not opaque:
                break  # no name of unknown form: the other readings give the same answers
        result = verdicts.pop() if len(verdicts) == 1 else None
        self._cache[key] = result
        return result

    # -- evaluation -----------------------------------------------------------
    def _eval(self, expr: cst.BaseExpression, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        if depth > _DEPTH:
            return UNKNOWN
        depth += 1
        if isinstance(expr, cst.Integer):
            return int(expr.evaluated_value)
        if isinstance(expr, cst.Float):
            return float(expr.evaluated_value)
        if isinstance(expr, cst.SimpleString):
            value = expr.evaluated_value
            return value if isinstance(value, str) else UNKNOWN
        if isinstance(expr, (cst.Tuple, cst.List)):
            items = []
            for element in expr.elements:
                if isinstance(element, cst.StarredElement):
                    return UNKNOWN
                value = self._eval(element.value, scope, env, depth)
                if isinstance(value, _Unknown):
                    return value
                items.append(value)
            return tuple(items) if isinstance(expr, cst.Tuple) else items
        if isinstance(expr, cst.UnaryOperation):
            value = self._eval(expr.expression, scope, env, depth)
            if isinstance(expr.operator, cst.Not):
                return value if isinstance(value, _Unknown) else not value
            if isinstance(expr.operator, cst.Minus) and isinstance(value, (int, float)):
                return -value
            return UNKNOWN
        if isinstance(expr, cst.BooleanOperation):
            return self._boolean(expr, scope, env, depth)
        if isinstance(expr, cst.Comparison):
            return self._comparison(expr, scope, env, depth)
        if isinstance(expr, cst.IfExp):
            test = _truth(self._eval(expr.test, scope, env, depth))
            if isinstance(test, _Unknown):
                return test
            return self._eval(expr.body if test else expr.orelse, scope, env, depth)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, scope, env, depth)
        if isinstance(expr, (cst.GeneratorExp, cst.ListComp)):
            return self._comprehension(expr, scope, env, depth)
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, env, depth)
        if isinstance(expr, cst.Name):
            return self._name(expr, scope, env, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, scope, env, depth)
        return UNKNOWN

    def _source(self, expr: cst.BaseExpression, scope: ScopeInfo) -> Optional[str]:
        """"tensorflow"/"keras" when ``expr`` names that version string."""
        raw = self.resolver.raw_qualname(expr, scope)
        if raw is None:
            return None
        qualname = self.resolver.qualname(expr, scope)
        if qualname in _TF_SOURCES:
            return "tensorflow"
        if qualname in _KERAS_SOURCES and not raw.startswith(_KERAS2_RAW):
            if self.legacy_env and raw.startswith("tensorflow."):
                return _LEGACY  # tf.keras may be Keras 2 here: a version, but not Keras 3's
            return "keras"
        return None

    def _version(self, module: str, env: _Env) -> Any:
        env.touched = True
        return VERSION_UNKNOWN if module == _LEGACY else env.versions[module]

    def _opaque(self, module: str, env: _Env) -> Any:
        text = self._version(module, env)
        env.opaque = True
        reading = env.reading
        if reading == "str":
            return text
        if reading == "tuple3":
            return _release(text)[:3]
        if reading == "tuple2":
            return _release(text)[:2]
        if reading == "parsed":
            return Parsed(text)
        return Loose(text)

    def _name(self, expr: cst.Name, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        if expr.value in env.locals:
            return env.locals[expr.value]
        source = self._source(expr, scope)
        if source is not None:
            return self._version(source, env)
        found = lookup(expr.value, scope)
        if found is not None and found.kind == ASSIGNED:
            values = found.values
            if values and all(isinstance(v, cst.BaseExpression) for v in values):
                results = [self._eval(v, found.scope, env, depth) for v in values]
                first = results[0]
                if not isinstance(first, _Unknown) and all(_same(first, r) for r in results[1:]):
                    return first
        words = version_words(expr.value)
        if words is not None and (found is None or found.kind in (ASSIGNED, IMPORT)):
            return self._opaque(words, env)
        return UNKNOWN

    def _attribute(self, expr: cst.Attribute, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        source = self._source(expr, scope)
        if source is not None:
            return self._version(source, env)
        name = expr.attr.value
        if name in ("release", "major", "minor", "micro", "base_version", "version"):
            base = self._eval(expr.value, scope, env, depth)
            if isinstance(base, (Parsed, Loose)):
                return base.attribute(name)
        words = version_words(name)
        if words is not None and self.resolver.raw_qualname(expr, scope) is None:
            return self._opaque(words, env)  # self.tf_version, config.TF_VERSION
        return UNKNOWN

    def _boolean(self, expr: cst.BooleanOperation, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        deciding = not isinstance(expr.operator, cst.And)  # the value that ends `and`/`or`
        left = _truth(self._eval(expr.left, scope, env, depth))
        if left is deciding:
            return deciding
        right = _truth(self._eval(expr.right, scope, env, depth))
        if right is deciding:
            return deciding
        if isinstance(left, _Unknown) or isinstance(right, _Unknown):
            return VERSION_UNKNOWN if VERSION_UNKNOWN in (left, right) else UNKNOWN
        return not deciding

    def _comparison(self, expr: cst.Comparison, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        before = env.touched
        env.touched = False
        left = self._eval(expr.left, scope, env, depth)
        operands = [left] + [self._eval(c.comparator, scope, env, depth) for c in expr.comparisons]
        reads_version = env.touched
        env.touched = before or reads_version
        if any(isinstance(o, _Unknown) for o in operands):
            return VERSION_UNKNOWN if reads_version or any(o is VERSION_UNKNOWN for o in operands) else UNKNOWN
        result = True
        for target, a, b in zip(expr.comparisons, operands, operands[1:]):
            try:
                value = _compare(target.operator, a, b)
            except TypeError:
                raise _Invalid() from None
            if value is None:
                return VERSION_UNKNOWN if reads_version else UNKNOWN
            result = result and value
        return result

    def _subscript(self, expr: cst.Subscript, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        value = self._eval(expr.value, scope, env, depth)
        if isinstance(value, _Unknown) or len(expr.slice) != 1:
            return UNKNOWN if not isinstance(value, _Unknown) else value
        index = expr.slice[0].slice
        if not isinstance(value, (str, tuple, list)):
            return UNKNOWN
        try:
            if isinstance(index, cst.Index):
                position = self._eval(index.value, scope, env, depth)
                if not isinstance(position, int):
                    return UNKNOWN
                return value[position]
            if isinstance(index, cst.Slice):
                bounds = []
                for part in (index.lower, index.upper, index.step):
                    bound = None if part is None else self._eval(part, scope, env, depth)
                    if bound is not None and not isinstance(bound, int):
                        return UNKNOWN
                    bounds.append(bound)
                return value[slice(*bounds)]
        except (IndexError, ValueError):
            return UNKNOWN
        return UNKNOWN

    def _comprehension(self, expr, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        clause = expr.for_in
        if clause.inner_for_in is not None or clause.ifs or not isinstance(clause.target, cst.Name):
            return UNKNOWN
        items = self._eval(clause.iter, scope, env, depth)
        if isinstance(items, _Unknown) or not isinstance(items, (str, tuple, list)):
            return UNKNOWN if not isinstance(items, _Unknown) else items
        name = clause.target.value
        saved = env.locals.get(name, _MISSING)
        results = []
        try:
            for item in items:
                env.locals[name] = item
                value = self._eval(expr.elt, scope, env, depth)
                if isinstance(value, _Unknown):
                    return value
                results.append(value)
        finally:
            if saved is _MISSING:
                env.locals.pop(name, None)
            else:
                env.locals[name] = saved
        return tuple(results) if isinstance(expr, cst.GeneratorExp) else results

    def _call(self, expr: cst.Call, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        if any(a.star or a.keyword is not None for a in expr.args):
            return UNKNOWN
        func = expr.func
        args = expr.args
        if isinstance(func, cst.Attribute) and func.attr.value in _STRING_METHODS:
            receiver = self._eval(func.value, scope, env, depth)
            if isinstance(receiver, _Unknown):
                return receiver
            values = [self._eval(a.value, scope, env, depth) for a in args]
            if any(isinstance(v, _Unknown) for v in values):
                return UNKNOWN
            return _method(receiver, func.attr.value, values)
        qualname = self.resolver.qualname(func, scope)
        if qualname in _METADATA_VERSION and len(args) == 1:
            distribution = self._eval(args[0].value, scope, env, depth)
            module = _DISTRIBUTIONS.get(distribution) if isinstance(distribution, str) else None
            return self._version(module, env) if module is not None else UNKNOWN
        if qualname == "keras.version" and not args and self._source_ok(func, scope):
            return self._version("keras", env)
        last = qualname.rsplit(".", 1)[-1] if qualname is not None else (
            func.value if isinstance(func, cst.Name) else None)
        if last is not None and len(args) == 1 and (
                last in _LOOSE_NAMES or last == "parse_version"
                or (last in _PARSE_NAMES and qualname is not None and qualname.startswith(_PACKAGING))):
            text = self._eval(args[0].value, scope, env, depth)
            if isinstance(text, _Unknown):
                return text
            if not isinstance(text, str):
                return UNKNOWN
            return Loose(text) if last in _LOOSE_NAMES else Parsed(text)
        if isinstance(func, cst.Name) and lookup(func.value, scope) is None:
            return self._builtin(func.value, args, scope, env, depth)
        return UNKNOWN

    def _source_ok(self, func: cst.BaseExpression, scope: ScopeInfo) -> bool:
        raw = self.resolver.raw_qualname(func, scope) or ""
        return not raw.startswith(_KERAS2_RAW) and not (self.legacy_env and raw.startswith("tensorflow."))

    def _builtin(self, name: str, args, scope: ScopeInfo, env: _Env, depth: int) -> Any:
        if name == "map" and len(args) == 2 and isinstance(args[0].value, cst.Name) \
                and args[0].value.value in ("int", "str", "float") and lookup(args[0].value.value, scope) is None:
            items = self._eval(args[1].value, scope, env, depth)
            if isinstance(items, _Unknown):
                return items
            if not isinstance(items, (str, tuple, list)):
                return UNKNOWN
            convert = {"int": int, "str": str, "float": float}[args[0].value.value]
            try:
                return [convert(item) for item in items]
            except (TypeError, ValueError):
                return UNKNOWN
        if name not in ("int", "float", "str", "tuple", "list") or len(args) != 1:
            return UNKNOWN
        value = self._eval(args[0].value, scope, env, depth)
        if isinstance(value, _Unknown):
            return value
        try:
            if name == "int":
                return int(value) if isinstance(value, (str, int, float)) else UNKNOWN
            if name == "float":
                return float(value) if isinstance(value, (str, int, float)) else UNKNOWN
            if name == "str":
                return value if isinstance(value, str) else (str(value) if isinstance(value, (int, float)) else UNKNOWN)
            if not isinstance(value, (str, tuple, list)):
                return UNKNOWN
            return tuple(value) if name == "tuple" else list(value)
        except (TypeError, ValueError):
            return UNKNOWN


_MISSING = object()
_LEGACY = "legacy"


def _verdict(outcomes: List[Any], body: bool) -> Optional[bool]:
    """Does the branch run, given the test's value in each release: True if
    it runs in some (or depends on something other than a version), False if
    it runs in none, None if that depends on a version that cannot be read."""
    if any(o is UNKNOWN or o is body for o in outcomes):
        return True
    if all(o is (not body) for o in outcomes):
        return False
    return None


def _truth(value: Any) -> Any:
    if isinstance(value, _Unknown):
        return value
    if isinstance(value, (bool, int, float, str, tuple, list)):
        return bool(value)
    return UNKNOWN


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, _Unknown) or isinstance(b, _Unknown) or type(a) is not type(b):
        return False
    if isinstance(a, (Parsed, Loose)):
        return a == b
    return a == b


def _compare(operator: cst.BaseCompOp, a: Any, b: Any) -> Optional[bool]:
    if isinstance(operator, cst.LessThan):
        return a < b
    if isinstance(operator, cst.LessThanEqual):
        return a <= b
    if isinstance(operator, cst.GreaterThan):
        return a > b
    if isinstance(operator, cst.GreaterThanEqual):
        return a >= b
    if isinstance(operator, cst.Equal):
        return a == b
    if isinstance(operator, cst.NotEqual):
        return a != b
    if isinstance(operator, (cst.In, cst.NotIn)):
        if not isinstance(b, (str, tuple, list)) or (isinstance(b, str) and not isinstance(a, str)):
            return None
        found = a in b
        return found if isinstance(operator, cst.In) else not found
    return None


def _method(receiver: Any, name: str, args: List[Any]) -> Any:
    """A string method the version idioms use."""
    if not isinstance(receiver, str):
        return UNKNOWN
    try:
        if name == "split" and len(args) <= 2:
            return receiver.split(*args)
        if name in ("startswith", "endswith") and len(args) == 1 and isinstance(args[0], (str, tuple)):
            return getattr(receiver, name)(args[0])
        if name in ("strip", "lstrip", "rstrip") and len(args) <= 1:
            return getattr(receiver, name)(*args)
        if name == "partition" and len(args) == 1:
            return receiver.partition(args[0])
    except (TypeError, ValueError):
        return UNKNOWN
    return UNKNOWN
