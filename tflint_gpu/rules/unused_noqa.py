"""TFG001 unused-noqa: a code the engine reports on ``# noqa`` comments (``engine.noqa``).

Not a Rule subclass: it visits no node and runs no TensorFlow, so it has no
cases or example pair; it is described and selected as rules are
(``rules.base.ENGINE_CODES``, ``all_codes``).
"""
from __future__ import annotations

from typing import ClassVar, List, Tuple

from tflint_gpu.rules.base import ENGINE_CODES, Documented, Safety, all_codes


class UnusedNoqa(Documented):
    """A `# noqa` comment names a TFG code that suppresses nothing on its line.

    ## What it does
    Reports a `# noqa: ...` comment that names a TFG code with no finding of
    that code on its line, a code that does not exist (`TFG999`), the same
    code twice, or a code of ours written in lower case (`# noqa: tfg904`,
    which names no code and suppresses nothing, as Ruff warns). A code counts
    as unused only when its rule ran on the file: a rule left out by the
    selection, a per-file ignore or the target never makes its `noqa` unused. A blanket `# noqa` and other tools' codes (`E501`,
    `F401`) are never reported, nor a comment that names `TFG001` itself. It
    is the counterpart of Ruff's RUF100.

    ## Why is this bad?
    A suppression that outlived its finding hides the next real finding on
    that line, and one naming an unknown code (a typo) suppresses nothing.

    ## Example
    ```python
    x = tf.zeros(3)  # noqa: TFG201
    ```

    Use instead:
    ```python
    x = tf.zeros(3)
    ```

    ## Fix safety
    Safe: the fix removes the unused codes from the comment, or the comment
    (with the reason written after its codes) when none is left; a code of
    another tool stays; a lower-case code is written in upper case (the
    directive then suppresses what it names). It changes comments only.

    ## Measured effect
    None: it concerns comments. Off by default, as RUF100 is in Ruff: turn it
    on with `--extend-select TFG001` (or `select`), for example in CI after
    `tflint-gpu check --add-noqa`. It is not reported through flake8, which
    reads `# noqa` itself.
    """

    code: ClassVar[str] = "TFG001"
    name: ClassVar[str] = "unused-noqa"
    message: ClassVar[str] = "Unused `noqa` directive"
    fix_safety: ClassVar[Safety] = Safety.SAFE
    default_enabled: ClassVar[bool] = False
    migration: ClassVar[object] = False
    needs: ClassVar[Tuple[Tuple[str, ...], ...]] = ()
    node_types: ClassVar[Tuple[str, ...]] = ()
    reads_index: ClassVar[Tuple[str, ...]] = ()
    cases: ClassVar[List[object]] = []

    @staticmethod
    def known_codes() -> Tuple[str, ...]:
        """Every code there is (the engine, which imports no rule, asks this)."""
        return tuple(entry.code for entry in all_codes())


ENGINE_CODES[UnusedNoqa.code] = UnusedNoqa
