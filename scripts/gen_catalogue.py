"""Write tflint_gpu/semantic/data/rule_catalogue.json: what every code is, from the rule classes.

    python scripts/gen_catalogue.py          # write the table
    python scripts/gen_catalogue.py --check  # exit 1 when the committed table differs from the classes

The command line reads the table (``tflint_gpu.catalogue``) instead of importing every rule
module and LibCST to list, describe and select the rules. Run it after adding a rule or changing a
rule's docstring, name, default, fix safety or migration flag (tests/test_startup.py fails until the
table matches; scripts/gen_rule_docs.py is the other generator such a change needs). It imports no
TensorFlow.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tflint_gpu import catalogue  # noqa: E402
from tflint_gpu.rules.base import all_codes  # noqa: E402


def text() -> str:
    return json.dumps(catalogue.table_of(all_codes()), indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the table differs")
    args = parser.parse_args(argv)
    path = Path(catalogue.PATH)
    wanted = text()
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if args.check:
        if current != wanted:
            print(f"{path}: out of date; run: python scripts/gen_catalogue.py", file=sys.stderr)
            return 1
        return 0
    if current != wanted:
        path.write_text(wanted, encoding="utf-8", newline="\n")
    print(f"{path}: {len(json.loads(wanted)['codes'])} codes{'' if current != wanted else ' (unchanged)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
