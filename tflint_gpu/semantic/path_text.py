"""What a string template is known to end with once it is filled in: the text after its last
replacement field, for printf-style ``%`` formatting (``"ep%03d-loss%.3f.h5" % (...)``) and
``str.format`` (``"generator-{}.h5".format(step)``). Plain functions of the template's text,
shared by the file's path reading (``semantic.migration.path_ending``) and the project index's
(``semantic.project``), which read LibCST and CPython's ``ast`` respectively."""
from __future__ import annotations

import re
import string
from typing import Optional

# A %-conversion of printf-style formatting (``%03d``, ``%.3f``, ``%(name)s``, ``%%`` too).
_PERCENT = re.compile(r"%(?:\([^()]*\))?[-#0 +]*(?:\*|[1-9]\d*)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa%]")
_FORMATTER = string.Formatter()


def percent_tail(template: str) -> Optional[str]:
    """The text after the last conversion of a ``%`` template (None when it ends with one)."""
    return _PERCENT.split(template)[-1] or None


def format_tail(template: str) -> Optional[str]:
    """The text after the last replacement field of a ``str.format`` template, its ``{{``/``}}``
    read as braces (None when it ends with a field or is no valid template)."""
    try:
        parts = list(_FORMATTER.parse(template))
    except ValueError:
        return None
    if not parts:
        return None
    literal, field, _, _ = parts[-1]
    return literal if field is None and literal else None


# The last part of a path with a suffix: a dot, a letter, letters and digits, at its end (as TFG908 reads it).
_SUFFIX = re.compile(r"\.[A-Za-z][A-Za-z0-9]*$")


def renamed_file(text: str, old: tuple, new: str) -> Optional[str]:
    """``text`` (the text a path ends with) renamed to end in ``new``: a last suffix among ``old``
    (``".h5"``, ``".ckpt"``...) replaced, or ``new`` appended to a last part that has no suffix when
    ``""`` is among ``old`` (``"logs/vit"`` -> ``"logs/vit.weights.h5"``); None when the text already
    ends in ``new``, ends with ``/``, ends with a template field, or has another suffix."""
    last = text.rsplit("/", 1)[-1]
    if not last or text.endswith(new) or not (last[-1].isalnum() or last[-1] in "_-}"):
        return None
    suffix = _SUFFIX.search(last)
    if suffix is None:
        # a name that ends with a ``%`` conversion (``model_%03d``) is a template, not a file name
        return text + new if "" in old and not ("%" in last and percent_tail(last) is None) else None
    if suffix.group(0).lower() not in old:
        return None
    return text[:len(text) - len(suffix.group(0))] + new
