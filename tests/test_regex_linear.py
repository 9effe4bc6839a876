"""Every regular expression of the package runs in linear time on adversarial text.

A backtracking pattern is a stall no budget can interrupt (Python's ``re`` holds the
GIL and checks no signal while it matches): one pattern over commented-out code
once held a 649-file run for nine minutes. This test finds every pattern of the
package (module-level compiled patterns, with how the module uses them, and every
inline ``re.<function>(literal, ...)``), builds inputs from what each part of a
pattern accepts (long runs of one part's characters after the text that leads to
it, the lead-in repeated, two neighbouring parts alternated), and grows each input
until a search takes long enough to time. Growth faster than linear (exponential
or polynomial backtracking) is reported with the pattern, its place and the input.

The battery runs in a child process, so that a pattern that never returns fails
the test (naming the pattern being tried) instead of hanging it.
"""
from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

try:  # Python 3.11+
    import re._constants as _c  # type: ignore[import-not-found]
    import re._parser as _parser  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.9/3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

import tflint_gpu

PACKAGE = Path(tflint_gpu.__file__).resolve().parent
_ANCHORED = {"match", "fullmatch"}
_FUNCTIONS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}
# Inline patterns built at run time from a value (the place: a representative value).
_DYNAMIC = {
    ("semantic/target.py", "re.escape(key)"): "requires",
    ("semantic/attribute_typos.py", "+ key"): "Trainable",
    ("rules/docs.py", "re.escape(key)"): "Measured effect",
}
# Characters tried for each part of a pattern, the likeliest to matter first.
_POOL = (" \t\n\r\f\\#.,:;=-_'\"%()[]{}<>!~^*+/`$&|?@" + "aAzZ09" + "in" + "outps" + "\u00e9")
_START = 8
_LIMIT = 16384  # characters: a linear search of this is well under a millisecond
_SLOW = 0.1  # seconds: below this a time is not judged


# -- finding the patterns -------------------------------------------------------------------------------

def _flags(node: Optional[ast.expr]) -> int:
    if node is None:
        return 0
    return int(eval(compile(ast.Expression(node), "<flags>", "eval"), {"re": re}))  # re.I | re.M ...


def _constant(node: ast.expr) -> Optional[str]:
    """The value of a string expression built of literals only (concatenations included)."""
    if any(not isinstance(n, (ast.Constant, ast.BinOp, ast.Add, ast.expr_context)) for n in ast.walk(node)):
        return None
    value = eval(compile(ast.Expression(node), "<pattern>", "eval"), {})
    return value if isinstance(value, str) else None


def _is_re_call(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "re" and node.func.attr in _FUNCTIONS:
        return node.func.attr
    return None


def sites() -> List[Tuple[str, str, int, bool]]:
    """(place, pattern, flags, anchored) for every regular expression of the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        compiled: Dict[str, int] = {}  # module-level names bound to re.compile(...)
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name) and _is_re_call(statement.value) == "compile":
                compiled[statement.targets[0].id] = statement.lineno
        uses: Dict[str, Set[str]] = {name: set() for name in compiled}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in uses:
                uses[node.value.id].add(node.attr)
        if compiled:
            module = importlib.import_module("tflint_gpu." + relative[:-3].replace("/", "."))
            for name, line in compiled.items():
                pattern = getattr(module, name)
                anchored = bool(uses[name]) and uses[name] <= _ANCHORED
                found.append((f"{relative}:{line} {name}", pattern.pattern, pattern.flags, anchored))
        module_level = {id(s.value) for s in tree.body if isinstance(s, ast.Assign)}
        for node in ast.walk(tree):
            function = _is_re_call(node)
            if function is None or id(node) in module_level or not node.args:
                continue
            flags_node = next((k.value for k in node.keywords if k.arg == "flags"), None)
            if flags_node is None:
                position = {"sub": 3, "subn": 3, "split": 3}.get(function, 2 if function != "compile" else 1)
                flags_node = node.args[position] if len(node.args) > position else None
            text = _constant(node.args[0])
            place = f"{relative}:{node.lineno} re.{function}"
            if text is None:
                segment = ast.get_source_segment(source, node.args[0]) or ""
                key = next((k for (file, marker), k in _DYNAMIC.items() if file == relative and marker in segment), None)
                assert key is not None, f"{place}: a pattern built at run time; add it to _DYNAMIC with a value"
                text = eval(compile(ast.Expression(node.args[0]), "<pattern>", "eval"), {"re": re, "key": key})
            found.append((place, text, _flags(flags_node) if flags_node is not None else 0,
                          function in _ANCHORED))
    return found


# -- inputs -----------------------------------------------------------------------------------------------

def _category(name, ch: str) -> bool:
    table = {
        _c.CATEGORY_SPACE: ch.isspace(), _c.CATEGORY_NOT_SPACE: not ch.isspace(),
        _c.CATEGORY_DIGIT: ch.isdigit(), _c.CATEGORY_NOT_DIGIT: not ch.isdigit(),
        _c.CATEGORY_WORD: ch.isalnum() or ch == "_", _c.CATEGORY_NOT_WORD: not (ch.isalnum() or ch == "_"),
    }
    return table.get(name, False)


def _in(items, ch: str, ignore_case: bool) -> bool:
    negate = False
    hit = False
    for op, av in items:
        if op is _c.NEGATE:
            negate = True
        elif op is _c.LITERAL:
            hit = hit or ch == chr(av) or (ignore_case and ch.lower() == chr(av).lower())
        elif op is _c.RANGE:
            hit = hit or av[0] <= ord(ch) <= av[1] or (ignore_case and (
                av[0] <= ord(ch.lower()) <= av[1] or av[0] <= ord(ch.upper()) <= av[1]))
        elif op is _c.CATEGORY:
            hit = hit or _category(av, ch)
    return hit != negate


def _accepted(op, av, ignore_case: bool) -> List[str]:
    if op is _c.LITERAL:
        return [chr(av)]
    if op is _c.NOT_LITERAL:
        chars = [ch for ch in _POOL if ord(ch) != av]
    elif op is _c.ANY:
        chars = ["a", "#", " "]
    elif op is _c.IN:
        chars = [ch for ch in _POOL if _in(av, ch, ignore_case)]
    else:
        return []
    # A few, and the first visible one among them (for the visible lead-in of ``inputs``).
    return chars[:3] + [ch for ch in chars[3:] if not ch.isspace()][:1 if all(c.isspace() for c in chars[:3]) else 0]


def _atoms(pattern, ignore_case: bool) -> List[List[str]]:
    """Per character-consuming part of the pattern, in order, the characters it accepts (a few)."""
    out: List[List[str]] = []

    def visit(sub) -> None:
        for op, av in sub:
            chars = _accepted(op, av, ignore_case)
            if chars:
                out.append(chars)
            elif op is _c.SUBPATTERN:
                visit(av[-1])
            elif op is _c.BRANCH:
                for alternative in av[1]:
                    visit(alternative)
            elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) or op is getattr(_c, "POSSESSIVE_REPEAT", None):
                visit(av[2])
            elif op in (_c.ASSERT, _c.ASSERT_NOT):
                visit(av[1])
            elif op is getattr(_c, "ATOMIC_GROUP", None):
                visit(av)

    visit(pattern)
    return out


def inputs(text: str, flags: int) -> Iterator[Tuple[str, str, str]]:
    """(lead-in, repeated unit, tail): the text searched is lead-in + unit * n + tail."""
    atoms = _atoms(_parser.parse(text, flags), bool(flags & re.IGNORECASE))
    firsts = [chars[0] for chars in atoms]
    # The lead-in again with a visible character for each part that takes one: a run of spaces
    # after `- a` is read differently from one after `- ` (a lazy part must stop inside it).
    visible = [next((ch for ch in chars if not ch.isspace()), chars[0]) for chars in atoms]
    seen = set()
    for i, chars in enumerate(atoms):
        after = firsts[i + 1] if i + 1 < len(atoms) else ""
        for lead in dict.fromkeys(("".join(firsts[:i]), "".join(visible[:i]))):
            for ch in chars[:2]:
                for shape in ((lead, ch, ""), (lead, ch, "\x00"), ("", lead + ch, ""), (lead, ch + after, ""),
                              (lead, ch + "\n", ""), ("", ch, "")):
                    if shape not in seen and shape[1]:
                        seen.add(shape)
                        yield shape
    whole = "".join(firsts)
    if whole and ("", whole, "") not in seen:
        yield "", whole, ""


def _sizes() -> Iterator[int]:
    n = _START
    while n < 32:  # fine steps where exponential backtracking lives
        yield n
        n += 2
    while n <= _LIMIT:
        yield n
        n *= 2


def _time(function, text: str) -> float:
    start = time.perf_counter()
    function(text)
    return time.perf_counter() - start


def superlinear(function, lead: str, unit: str, tail: str) -> Optional[str]:
    """A description of the growth if searching ``lead + unit * n + tail`` grows faster than n."""
    previous: Optional[Tuple[int, float]] = None
    for n in _sizes():
        if len(lead) + len(unit) * n + len(tail) > 4 * _LIMIT:
            break
        spent = _time(function, lead + unit * n + tail)
        if spent >= _SLOW and previous is not None:
            # Judged on the best of three runs of both sizes: one slow run is the machine, not the pattern.
            spent = min(spent, *(_time(function, lead + unit * n + tail) for _ in range(2)))
            earlier = min(_time(function, lead + unit * previous[0] + tail) for _ in range(3))
            previous = (previous[0], earlier)
            ratio = spent / max(previous[1], 1e-6)
            if ratio > (n / previous[0]) ** 1.5:
                return f"n={previous[0]}: {previous[1]:.4f} s, n={n}: {spent:.4f} s"
            return None  # slow but growing linearly (a loaded machine)
        previous = (n, spent)
    return None


def battery(only: Optional[str] = None) -> List[dict]:
    problems = []
    for place, text, flags, anchored in sites():
        if only is not None and only not in place:
            continue
        print("PATTERN", place, flush=True)
        compiled = re.compile(text, flags)
        function = compiled.match if anchored else compiled.search
        for lead, unit, tail in inputs(text, flags):
            growth = superlinear(function, lead, unit, tail)
            if growth is not None:
                problems.append({"place": place, "pattern": text, "input": [lead, unit, tail], "growth": growth})
                break
    return problems


def _run_battery(only: Optional[str] = None, timeout: float = 600) -> Tuple[List[dict], str]:
    command = [sys.executable, __file__] + ([only] if only else [])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as stuck:
        out = stuck.stdout.decode() if isinstance(stuck.stdout, bytes) else (stuck.stdout or "")
        last = [line for line in out.splitlines() if line.startswith("PATTERN")][-1:]
        return [{"place": last[0][8:] if last else "?", "growth": f"no answer in {timeout} s"}], out
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1]), done.stdout


# -- tests --------------------------------------------------------------------------------------------------

def test_every_pattern_of_the_package_is_found():
    places = {place.split(" ")[0].split(":")[0] for place, *_ in sites()}
    # The patterns this test must see (a sample from several modules, including a dynamic one).
    assert {"semantic/symbolic.py", "semantic/target.py", "engine/noqa.py", "notebook.py"} <= places
    assert len(sites()) >= 50


def test_the_battery_finds_catastrophic_patterns():
    """The battery can fail: nested ambiguity (exponential), a run scanned from each of its
    positions (quadratic) and three adjacent runs of one class (cubic) are each reported."""
    for bad in (r"\.(?:[\s\\]|#[^\n]*)*(?:in|out)puts?\b", r"\s*,\s*x", r"a\s*[ \t]+\s*1"):
        function = re.compile(bad).search
        assert any(superlinear(function, *shape) for shape in inputs(bad, 0)), bad


def test_every_pattern_runs_in_linear_time():
    problems, _ = _run_battery()
    assert problems == [], "\n".join(f"{p['place']}: {p.get('pattern', '')!r} on {p.get('input')}: {p['growth']}"
                                     for p in problems)


if __name__ == "__main__":
    print(json.dumps(battery(sys.argv[1] if len(sys.argv) > 1 else None)))


_COMMENTED_OUT = '''import keras
from keras import layers

inputs = keras.Input(shape=(8,))
x = layers.Dense(16)(inputs)
# The old head, kept for reference.
#    # y = layers.Dense(4)(y)  # old head
#    # y = layers.Dense(4)(y)  # old head
#    # y = layers.Dense(4)(y)  # old head
#    # y = layers.Dense(4)(y)  # old head
#    # y = layers.Dense(4)(y)  # old head
#    # y = layers.Dense(4)(y)  # old head
#    # y = layers.Dense(4)(y)  # old head
#    # y = layers.Dense(4)(y)  # old head
model = keras.Model(inputs, x)
'''


def test_commented_out_code_after_a_full_stop_is_read_at_once(tmp_path):
    """The file that held a run for minutes (a comment ending in `.`, then commented-out code
    full of `#`) is checked by the command line with every rule in a few seconds at most."""
    path = tmp_path / "model.py"
    path.write_text(_COMMENTED_OUT + _COMMENTED_OUT.replace("import", "#").replace("model =", "#") * 20)
    done = subprocess.run([sys.executable, "-m", "tflint_gpu", "--select", "ALL", "--no-cache", "--exit-zero",
                           str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_symbolic_attribute_text_reads_every_spelling():
    from tflint_gpu.semantic.symbolic import names_symbolic_attribute

    for text in ("m.outputs", "m . input", "m.\\\n    inputs", "f(m.  # the model's\n  # more\n  outputs)",
                 "(m.\n  output)"):
        assert names_symbolic_attribute(text), text
    for text in ("outputs = 1", "m.outputs_list", "m.out_puts", "# m.inputs_x", "x.input_shape"):
        assert not names_symbolic_attribute(text), text


def test_long_boolean_chains_are_read_in_linear_time(tmp_path):
    """A 10,000-term `and` chain (and a 5,000-term `or` one), as a value and as a test, is checked
    with every rule: each read used to climb every enclosing `and` (quadratic: minutes)."""
    for op, count in (("and", 10000), ("or", 5000)):
        terms = f" {op} ".join(["x"] * count)
        path = tmp_path / f"{op}.py"
        path.write_text(f"import tensorflow as tf\n\nx = tf.constant(1)\ny = {terms}\nif {terms}:\n    pass\n")
        done = subprocess.run([sys.executable, "-m", "tflint_gpu", "--select", "ALL", "--no-cache", "--exit-zero",
                               str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr


def test_a_read_in_a_chain_is_still_classified_as_a_test():
    import libcst as cst

    from tflint_gpu.semantic.uses import _classify

    module = cst.parse_module("if a and not (b or f):\n    pass\ny = a or f\n")
    first, second = module.body
    chain = first.test  # a and not (b or f)
    inner = chain.right.expression  # b or f
    f_name = inner.right
    link = (inner, (chain.right, (chain, (first, None))))
    known: dict = {}
    assert _classify(f_name, None, link, known).kind == "test"
    assert _classify(inner.left, None, link, known).kind == "test"  # answered from `known`
    value = second.body[0].value
    assert _classify(value.right, None, (value, (second.body[0], (second, None))), known).kind == "other"
