"""The run's record: ``OUT/manifest.jsonl``, a JSON object a line, appended in shard order as the run goes.

A header line (the configuration), a ``part`` line once a part file is in place, an ``input`` line once every row
of that input is in recorded parts (:mod:`core.batch.dataset` writes the lines, :class:`core.batch.shards.ShardRecorder`
appends them). ``--resume`` and the report read it back (:func:`read_manifest`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from core.batch.storage import OutputStore

MANIFEST = "manifest.jsonl"
MANIFEST_VERSION = 1
# A paced checkpoint: a local manifest is synced at most every so many seconds; on object storage it is rewritten
# whole, at most every so many seconds and 20 times its last rewrite's time.
CHECKPOINT_SECONDS = 10.0
REWRITE_SHARE = 20


def manifest_line(line: dict[str, Any]) -> str:
    """One manifest line: the object as JSON text ending in a newline."""
    return json.dumps(line, ensure_ascii=False, default=str) + "\n"


class Manifest:
    """``manifest.jsonl``: one JSON object a line, appended as the run goes.

    On a local disk each line is flushed as it is written (a killed process leaves it
    in the file) and synced at :meth:`checkpoint`: a ``paced`` one (after a shard) syncs
    only when :data:`CHECKPOINT_SECONDS` have passed since the last sync, and the end, a
    stop or a refused write always syncs (a sync is ~0.2 ms of the driver's CPU: one a
    shard was 5% of its work on 21 MB, and 6 s of a 30,000-shard run). Object storage cannot append: there
    the lines wait for :meth:`checkpoint`, which rewrites the whole manifest, so a part
    and the input lines it completes appear together; a ``paced`` checkpoint (after a
    shard) rewrites it only when :data:`CHECKPOINT_SECONDS` and twenty times the last
    rewrite's time have passed, so rewriting a growing manifest takes at most ~5% of a
    run, not a rewrite a shard. Either way a machine lost in between loses only lines
    whose inputs ``--resume`` then does again (their parts, unrecorded, are removed).
    """

    def __init__(self, out: OutputStore) -> None:
        self.out = out
        self._handle: Any = None
        if out.local:
            # Unbuffered: a line goes to the file in one write, so a failed write leaves no bytes
            # in a buffer for a later flush to add after it (a torn line is the most it leaves).
            with out.failing("write", MANIFEST):
                self._handle = open(out.local_path(MANIFEST), "ab", buffering=0)  # noqa: SIM115
        self._text: list[str] = [] if out.local else [read_text(out, MANIFEST)]
        self._waiting = False
        self._next_checkpoint = 0.0  # when a paced checkpoint syncs (local) or rewrites (object storage) again
        self.lines_written = 0  # whole lines, so far

    def write(self, line: dict[str, Any]) -> None:
        self.write_text(manifest_line(line))

    def write_lines(self, lines: Iterable[str]) -> None:
        """Lines already JSON (a shard's, as its writer made them), each written on its own."""
        if self._handle is None:
            for text in lines:
                self.write_text(text)
            return
        with self.out.failing("write", MANIFEST):
            for text in lines:
                self._append(text.encode("utf-8"))
                self.lines_written += 1

    def write_text(self, text: str) -> None:
        """One line, JSON text ending in a newline."""
        if self._handle is None:
            self._text.append(text)
            self._waiting = True
            self.lines_written += 1
            return
        # A killed process leaves the line in the file; a lost machine, up to the last checkpoint.
        with self.out.failing("write", MANIFEST):
            self._append(text.encode("utf-8"))
        self.lines_written += 1

    def _append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:  # a full disk may take part of a line, then refuse the rest with ENOSPC
            view = view[self._handle.write(view) :]

    def checkpoint(self, paced: bool = False) -> None:
        """Make every line written so far durable (``paced``: unless the last sync or rewrite was recent)."""
        if self._handle is not None:
            if paced and time.monotonic() < self._next_checkpoint:
                return
            with self.out.failing("write", MANIFEST):
                os.fsync(self._handle.fileno())
            self._next_checkpoint = time.monotonic() + CHECKPOINT_SECONDS
        elif self._waiting and not (paced and time.monotonic() < self._next_checkpoint):
            started = time.monotonic()
            self._text = ["".join(self._text)]
            self.out.write_bytes(self._text[0].encode("utf-8"), MANIFEST)
            self._waiting = False
            took = time.monotonic() - started
            self._next_checkpoint = started + took + max(CHECKPOINT_SECONDS, REWRITE_SHARE * took)

    def close(self) -> None:
        try:
            self.checkpoint()
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Close the file without another write (after a failed one: the lines in it are what counts)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_text(out: OutputStore, *names: str) -> str:
    """A text file of the output ("" when it is missing)."""
    return out.read_bytes(*names).decode("utf-8") if out.exists(*names) else ""


def read_manifest(out: Path | OutputStore) -> list[dict[str, Any]]:
    """The manifest's lines (``out``: the manifest's local path, or the output); a torn last line is ignored.

    A torn line is what a process killed mid-write leaves.
    """
    if isinstance(out, OutputStore):
        text = read_text(out, MANIFEST)
    else:
        text = out.read_text(encoding="utf-8") if out.is_file() else ""
    return parse_lines(split_lines(text))


def split_lines(text: str) -> list[str]:
    """The lines of manifest text: cut at "\n" alone, never at the other breaks ``str.splitlines`` knows (U+2028,
    U+0085, ...): JSON leaves those unescaped in a string, so a file name holding one would cut its line in two."""
    rows = text.split("\n")
    if rows and not rows[-1]:
        rows.pop()
    return rows


def parse_lines(rows: list[str]) -> list[dict[str, Any]]:
    """The objects of these manifest lines, in order; a line that is not one (torn, damaged, blank) is skipped."""
    if not rows:
        return []
    try:
        # One parse for the whole file: a parse a line costs the report ~1-3 ms more at 1,000 inputs. Any torn or
        # damaged line makes the whole invalid (an object cut short never closes), so it goes line by line.
        lines = json.loads("[" + ",".join(rows) + "]")
        if len(lines) == len(rows) and all(isinstance(line, dict) for line in lines):
            return lines
    except json.JSONDecodeError:
        pass
    lines = []
    for line in rows:
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict):
            lines.append(parsed)
    return lines


# What manifest_blocks reads at a time: ~4 MB of lines, ~4,000 inputs with their metrics.
BLOCK_BYTES = 4 << 20


def manifest_blocks(out: OutputStore) -> Iterator[list[dict[str, Any]]]:
    """The manifest's objects a block of about :data:`BLOCK_BYTES` at a time, in order (a report reads a manifest
    of millions of lines without holding them all); each block is :func:`parse_lines` of whole lines."""
    block_bytes = BLOCK_BYTES
    if not out.exists(MANIFEST):
        return
    with out.failing("read", MANIFEST), out.open_input_file(MANIFEST) as handle:
        rest = b""
        while True:
            data = handle.read(block_bytes)
            if not data:
                break
            data = rest + data if rest else data
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if cut:
                yield parse_lines(split_lines(data[:cut].decode("utf-8")))
        if rest:  # a torn last line; its bytes may end inside a character
            yield parse_lines(split_lines(rest.decode("utf-8", "replace")))
