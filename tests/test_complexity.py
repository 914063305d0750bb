"""No function or class in core/, ui/ or pages/ above cyclomatic complexity 20, as radon counts it.

Ruff's C901 bound (pyproject.toml) counts differently (radon adds boolean operators and comprehensions'
conditions); the house rule is radon's: a function past 20 is split into named steps (docs/architecture.md).
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 20


def test_no_function_is_above_complexity_20() -> None:
    over = []
    for folder in ("core", "ui", "pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for block in cc_visit(path.read_text(encoding="utf-8")):
                if block.complexity > LIMIT:
                    over.append(f"{path.relative_to(ROOT)}:{block.lineno} {block.name} {block.complexity}")
    assert not over, "split these into named steps:\n" + "\n".join(over)
