"""The lock (constraints.txt) is what the tests run on: a fresh install gets exactly these versions.

Every distribution that ChunkScope with its test extras needs, followed through each requirement's own
requirements, must be pinned there at the version installed here. A package moved by hand, or a new
dependency added to pyproject.toml without `make lock`, fails here instead of on a fresh machine.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "constraints.txt"
PIN = re.compile(r"^([A-Za-z0-9._-]+)==(\S+)$")


def locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in LOCK.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"constraints.txt line is not a plain pin: {line!r}"
        pins[canonicalize_name(match[1])] = match[2]
    return pins


def applies(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({**default_environment(), "extra": extra}) for extra in extras or {""})


def installed_closure(root: str, extras: set[str]) -> dict[str, str]:
    """Every installed distribution ``root[extras]`` needs, transitively, with its installed version."""
    found: dict[str, str] = {}
    todo = [(root, extras)]
    while todo:
        name, wanted = todo.pop()
        distribution = metadata.distribution(name)
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if not applies(requirement, wanted):
                continue
            key = canonicalize_name(requirement.name)
            try:
                version = metadata.version(requirement.name)
            except metadata.PackageNotFoundError:
                continue  # an optional dependency this platform does not take
            if key not in found:
                found[key] = version
                todo.append((requirement.name, set(requirement.extras)))
    return found


def test_every_package_the_project_needs_is_locked_at_the_version_installed_here() -> None:
    pins = locked()
    needed = installed_closure("chunkscope", {"dev", "llm"})
    assert len(needed) > 100  # the frameworks, torch, Ray: the walk really followed the requirements
    unpinned = sorted(name for name in needed if name not in pins)
    moved = {name: (version, pins[name]) for name, version in needed.items() if name in pins and version != pins[name]}
    assert not unpinned, f"installed but not in constraints.txt (run make lock): {unpinned}"
    assert not moved, f"installed version differs from the lock (installed, locked): {moved}"


def test_the_llm_extra_is_locked_with_everything_it_pulls_in() -> None:
    pins = locked()
    for root in ("openai", "llama-index-llms-openai-like"):
        needed = {canonicalize_name(root): metadata.version(root), **installed_closure(root, set())}
        unpinned = sorted(name for name in needed if name not in pins)
        moved = {name: (version, pins[name]) for name, version in needed.items() if name in pins and version != pins[name]}
        assert not unpinned and not moved, (root, unpinned, moved)


def test_the_lock_keeps_lxml_below_the_release_that_breaks_markitdowns_docx_reader() -> None:
    major, minor = (int(part) for part in locked()["lxml"].split(".")[:2])
    assert (major, minor) < (6, 2)
