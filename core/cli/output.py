"""What ``chunkscope`` prints: component listings as a table or JSON, numbers as a reader says them, output files,
and progress on stderr.

A listing is the registry's ``describe()``: one line per component, then one per
declared parameter with its kind, default, bounds and help.

Every JSON the CLI prints goes through :func:`json_text`: a number that is not finite
(NaN, ±Infinity: a score from a damaged vector, a metric over nothing) is written as
``null``, never as the ``NaN`` that Python's json writes and no JSON parser reads.
"""

from __future__ import annotations

import json
import math
import numbers
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import ConfigError


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as strict JSON (RFC 8259): a float that is not finite becomes null; other objects their str()."""
    return json.dumps(finite(data), indent=indent, ensure_ascii=False, default=str, allow_nan=False)


def finite(value: Any) -> Any:
    """``value`` with every float that is NaN or infinite (numpy's included) replaced by None, at any depth."""
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, numbers.Real):  # float, numpy floats and integers
        number = float(value)
        if not math.isfinite(number):
            return None
        return int(value) if isinstance(value, numbers.Integral) else number
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    if hasattr(value, "tolist"):  # a numpy array or scalar
        return finite(value.tolist())
    return value


def listing(entries: list[dict[str, Any]], fmt: str) -> int:
    if fmt == "json":
        write(json_text(entries) + "\n", None)
        return 0
    lines = []
    for entry in entries:
        extra = ""
        if entry.get("extensions"):
            extra = f"  [{' '.join(entry['extensions'])}]"
        if entry.get("keys"):
            extra = f"  -> {', '.join(entry['keys'])}"
        lines.append(f"{entry['name']}{extra}: {entry['summary']}")
        for spec in entry["params"]:
            lines.append(
                f"    {spec['name']} ({_kind(spec)}, default {_default(spec['default'])}{_bounds(spec)}): {spec['help']}"
            )
        lines.append("")
    write("\n".join(lines), None)
    return 0


def _kind(spec: dict[str, Any]) -> str:
    kind = spec["kind"]
    if spec.get("choices"):
        kind = "|".join(spec["choices"])
    return f"{kind}, optional" if spec.get("optional") else kind


def _default(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _bounds(spec: dict[str, Any]) -> str:
    parts = []
    if spec.get("ge") is not None:
        parts.append(f">= {number(spec['ge'])}")
    if spec.get("le") is not None:
        parts.append(f"<= {number(spec['le'])}")
    return ", " + " and ".join(parts) if parts else ""


def number(value: Any) -> str:
    if value is None:  # e.g. the size_limit of a splitter that has none
        return "none"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.4g}"
    return str(value)


def write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{output}: cannot be written ({exc.strerror or exc})") from None


class StderrProgress:
    """Progress on stderr: one rewritten line on a terminal, else a line at each 10% and at each new phase."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last: tuple[int, str] | None = None
        self._width = 0

    def __call__(self, fraction: float, text: str) -> None:
        percent = int(round(100 * fraction))
        line = f"chunkscope: {percent:3d}% {text}"
        if self.live:
            self.stream.write("\r" + line.ljust(self._width))
            self._width = max(self._width, len(line))
            self.stream.flush()
            return
        # A phase is the text without its counts ("Embedding: 32 of 900 chunks" -> "Embedding:  of  chunks").
        key = (percent // 10, "".join(c for c in text if not c.isdigit()))
        if key != self._last:
            self._last = key
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.live and self._width:
            self.stream.write("\n")
            self.stream.flush()


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "(no rows)"
    columns = list(dict.fromkeys(key for row in rows for key in row))
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    widths = [max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)]
    lines = ["  ".join(column.ljust(width) for column, width in zip(columns, widths, strict=True))]
    lines += ["  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return "" if value is None else str(value)


def print_json(data: Any) -> None:
    # Strict JSON: a score that is not a number is null, never NaN (core.cli.output.json_text).
    sys.stdout.write(json_text(data) + "\n")
