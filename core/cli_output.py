"""What ``chunkscope`` prints: component listings as a table or JSON, numbers as a reader says them, and output files.

A listing is the registry's ``describe()``: one line per component, then one per
declared parameter with its kind, default, bounds and help.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from core.errors import ConfigError


def listing(entries: list[dict[str, Any]], fmt: str) -> int:
    if fmt == "json":
        write(json.dumps(entries, indent=2, ensure_ascii=False) + "\n", None)
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
