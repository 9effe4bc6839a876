"""Write docs/rules/: one page a registered rule (CODE.md) and the index (README.md).

    python scripts/gen_rule_docs.py          # write the pages (and remove those of codes no longer registered)
    python scripts/gen_rule_docs.py --check  # exit 1, naming the files, when the pages are out of date

Each page is ``tflint_gpu.rules.docs.page(rule)``, the text ``tflint-gpu rule CODE``
prints: the rule's docstring, its row of examples/RESULTS.md and its example pair.
Run it after changing a rule's docstring, its examples or examples/RESULTS.md
(tests/test_rule_docs.py fails until the committed pages match). It imports no TensorFlow.
The wheel ships these files as tflint_gpu/docs/rules/ (pyproject.toml maps the folder, no
copy), where ``rule_url`` finds the page a finding links to when installed.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tflint_gpu.rules import docs  # noqa: E402

PAGE = re.compile(r"^[A-Z]+[0-9]+\.md$")


def stale(target: Path, files: dict) -> list:
    """Pages of codes that are no longer registered."""
    return sorted(p.name for p in target.glob("*.md") if PAGE.match(p.name) and p.name not in files)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page differs")
    parser.add_argument("--out", type=Path, default=docs.DOCS_DIR, help="the folder (default: docs/rules/)")
    args = parser.parse_args(argv)
    files = docs.generated()
    differ = [name for name, text in files.items()
              if not (args.out / name).is_file() or (args.out / name).read_text(encoding="utf-8") != text]
    old = stale(args.out, files)
    if args.check:
        for name in differ + old:
            print(f"{args.out / name}: out of date; run: python scripts/gen_rule_docs.py", file=sys.stderr)
        return 1 if differ or old else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name in differ:
        (args.out / name).write_text(files[name], encoding="utf-8", newline="\n")
    for name in old:
        (args.out / name).unlink()
    print(f"{len(files)} files in {args.out}: {len(differ)} written, {len(old)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
