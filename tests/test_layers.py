"""core/'s rooms and the direction of its imports, as docs/architecture.md draws them.

Read from the source (every ``import`` and ``from ... import``, absolute or relative, at module level, inside
functions and under ``TYPE_CHECKING``, and every module named in a string: a registry's provider,
``importlib.import_module("core.x")``, ``"core.x:Name"``, ``f"core.x.{name}"``), so a new arrow the wrong way
fails here before anyone has to find it in a picture. The same reading covers ui/, pages/ and app.py, which
stand above core/ beside the CLI and never reach into it.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"

# Bottom-up, as in docs/architecture.md: a module may import from its own room and from rooms listed before it.
# Rooms on one line are peers: neither imports the other (the loaders do not reach into the embedder's room
# for its cache folder; what two peers share sits below both).
ROOMS = [
    ("core.errors", "core.schema", "core.words"),
    ("core.runtime",),
    ("core.params",),
    ("core.registry", "core.limits"),
    ("core.tokens",),
    ("core.translate",),
    ("core.loaders", "core.spans", "core.embed", "core.llm"),
    ("core.splitters",),
    ("core.engines", "core.extractors", "core.postprocessors"),
    ("core.config_parts",),
    ("core.config_link",),
    ("core.config",),
    ("core.documents",),
    ("core.query", "core.measure"),
    ("core.evaluation",),
    ("core.output",),
    ("core.batch",),
    ("core.cli",),
    ("core", "core.__main__"),
]
# A folder held lower than its room: the speed code equals a plain rule over text, so it reads the model, the
# tokens and its own room (the plain rules it must equal), nothing of the loaders, the spans or the embedder.
CEILINGS = {"core.splitters.fast": "core.tokens"}
# The faces above core/ (the app's pages and their helpers) stand beside the CLI: they never import it.
FACES = ["ui", "pages", "app.py"]
FACES_NEVER_IMPORT = ("core.cli", "core.__main__")
# A string that is a dotted module path, with an attribute after a colon or a dot: ``core.engines``,
# ``core.engines.base:Engine``.
_DOTTED = re.compile(r"core(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_]\w*)?")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in CORE.rglob("*.py")}


def _room(module: str) -> tuple[int, str]:
    """The room ``module`` lives in: its level and its name (the longest prefix that names a room)."""
    best: tuple[int, str] | None = None
    for level, rooms in enumerate(ROOMS):
        for room in rooms:
            if (module == room or module.startswith(room + ".")) and (best is None or len(room) > len(best[1])):
                best = (level, room)
    assert best is not None, f"{module} is in no room: add it to docs/architecture.md and ROOMS"
    return best


def _relative_base(module: str, level: int, is_package: bool) -> str:
    """The package a relative import with ``level`` dots starts from, in ``module``."""
    parts = module.split(".")
    keep = len(parts) - level + (1 if is_package else 0)
    return ".".join(parts[:keep])


def _named(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names of core modules one syntax node imports or names (an attribute may follow them)."""
    if isinstance(node, ast.ImportFrom):
        base = _relative_base(module, node.level, is_package) if node.level else ""
        target = ".".join(part for part in (base, node.module or "") if part)
        return [f"{target}.{alias.name}" for alias in node.names] if target.startswith("core") else []
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.startswith("core")]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value):
        return [node.value.partition(":")[0]]  # a provider, import_module's argument, "module:attribute"
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        prefix = str(node.values[0].value)  # f"core.loaders.{name}": some module of core.loaders
        if _DOTTED.fullmatch(prefix.rstrip(".")) and (prefix.endswith(".") or len(node.values) == 1):
            return [prefix.rstrip(".")]
    return []


def _imports(module: str, source: str | None = None, is_package: bool | None = None) -> set[str]:
    """The core modules ``module`` imports, wherever the import statement stands, and those it names in a string.

    A string that is a module's dotted path (a registry's provider, ``importlib.import_module("core.x")``,
    ``"core.x:Name"``, the constant head of ``f"core.x.{name}"``) is an import made later: it points the
    same way. ``source`` reads a text in place of the module's file (the tests plant arrows in one).
    """
    path = MODULES.get(module)
    if is_package is None:
        is_package = path is not None and path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        for name in _named(node, module, is_package):
            while name and name not in MODULES:  # ``from core.x import function`` names the module core.x
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):  # a package's own __init__
                found.add(name)
    return found


@functools.cache
def imports() -> dict[str, set[str]]:
    """Every core module's imports, parsed once, when a test first asks (not while the suite is collected)."""
    return {module: _imports(module) for module in MODULES}


def test_every_module_is_in_a_room_and_the_top_level_stays_small():
    for module in MODULES:
        _room(module)
    top_level = sorted(path.name for path in CORE.glob("*.py"))
    assert len(top_level) <= 18, top_level


def _broken(module: str, targets: set[str]) -> list[str]:
    """The arrows from ``module`` the rules forbid: up, sideways to a peer room, or past its room's ceiling."""
    level, room = _room(module)
    ceiling = next((_room(top)[0] for prefix, top in CEILINGS.items() if module.startswith(prefix + ".")), None)
    broken = []
    for target in sorted(targets):
        target_level, target_room = _room(target)
        if target_level > level:
            broken.append(f"{module} -> {target} (up)")
        elif target_level == level and target_room != room:
            broken.append(f"{module} -> {target} (sideways: {room} and {target_room} are peers)")
        elif ceiling is not None and ceiling < target_level < level:
            broken.append(f"{module} -> {target} (above its folder's ceiling)")
    return broken


def _face_modules() -> dict[str, Path]:
    paths = [path for face in FACES for path in ((ROOT / face).rglob("*.py") if (ROOT / face).is_dir() else [ROOT / face])]
    return {str(path.relative_to(ROOT).with_suffix("")).replace("/", "."): path for path in paths}


def _face_broken(face: str, source: str) -> list[str]:
    targets = _imports(face, source, is_package=False)
    return [f"{face} -> {target}" for target in sorted(targets) if target.startswith(FACES_NEVER_IMPORT)]


def test_no_import_points_up_or_sideways():
    broken = [arrow for module, targets in imports().items() for arrow in _broken(module, targets)]
    assert broken == []


def test_the_pages_and_their_helpers_never_reach_into_the_cli():
    broken = [arrow for face, path in _face_modules().items() for arrow in _face_broken(face, path.read_text())]
    assert broken == []


@pytest.mark.parametrize(
    ("module", "source", "arrow"),
    [
        # What the splitters' registry once said: the engines, a layer up, named as the provider it imports.
        ("core.splitters.registry", 'SPLITTERS = Registry("splitter", providers=("core.engines",))', "core.engines"),
        ("core.loaders.text", 'def f():\n    importlib.import_module("core.cli.main")', "core.cli.main"),
        ("core.loaders.text", 'def f():\n    return import_module(f"core.batch.{name}")', "core.batch"),
        ("core.loaders.text", 'TARGET = "core.engines.base:Engine"', "core.engines.base"),
        ("core.loaders.text", "def f():\n    from ..embed.cache import DiskCache", "core.embed.cache"),
        ("core.loaders.text", "def f():\n    from core.embed import cache", "core.embed.cache"),
        ("core.splitters.fast.packing", "from core.loaders.markdown import MarkdownLoader", "core.loaders.markdown"),
    ],
)
def test_a_planted_arrow_that_breaks_the_rules_is_caught(module, source, arrow):
    # Lazy, relative, in a string, in an f-string: each reads as the arrow it is, and the rules refuse it.
    assert arrow in _imports(module, source)
    assert [broken for broken in _broken(module, {arrow}) if f" -> {arrow} " in broken]


def test_a_planted_lazy_import_of_the_cli_in_a_page_helper_is_caught():
    source = "def block():\n    from core.cli.batch import batch_commands\n    return batch_commands('c.json')"
    assert _face_broken("ui.export", source) == ["ui.export -> core.cli.batch"]
    assert _face_broken("ui.export", 'X = "core.cli.batch:batch_commands"') == ["ui.export -> core.cli.batch"]
    assert _face_broken("ui.export", "from core.batch.command_line import batch_commands") == []


def test_a_docstring_that_mentions_a_module_is_no_arrow():
    source = '"""Reads :mod:`core.engines` like core.cli does."""\nVALUE = "core is the package"'
    assert _imports("core.loaders.text", source) == set()


def test_the_engines_register_from_the_top_facade():
    # The top facade names the engines, and the splitters' registry finds them there.
    import core
    from core.splitters import SPLITTERS

    assert core.PROVIDERS["splitter"] == ("core.engines",)
    assert "llamaindex.sentence" in SPLITTERS.names()


def test_no_import_cycle():
    # Tarjan's strongly connected components over every import, wherever it stands.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in imports()[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in MODULES:
        if module not in index:
            visit(module)
    assert cycles == []


def test_loaders_know_nothing_of_splitters_and_core_nothing_of_streamlit():
    for module, targets in imports().items():
        if module.startswith("core.loaders"):
            assert not any(t.startswith(("core.splitters", "core.engines")) for t in targets), module
    sources = "\n".join(path.read_text() for path in MODULES.values())
    assert "import streamlit" not in sources and "from streamlit" not in sources


@pytest.mark.parametrize(
    ("statement", "absent"),
    [
        ("import core", ["core.config", "core.loaders", "core.splitters", "pypdf", "torch", "numpy"]),
        ("import core.errors", ["core.params", "pypdf", "numpy"]),
        ("import core.loaders", ["core.loaders.pdf", "pypdf", "markdown_it", "torch"]),
        ("import core.splitters", ["core.engines", "llama_index", "langchain_text_splitters", "chonkie", "torch"]),
        ("from core.cli.main import build_parser; build_parser()", ["pypdf", "torch", "ray", "llama_index"]),
    ],
)
def test_an_import_loads_only_what_it_needs(statement, absent):
    probe = f"import sys\n{statement}\nprint(sorted(m for m in {absent!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_no_function_is_too_complex_to_follow():
    # pyproject.toml sets the bound (mccabe 20): a function past it is split into named steps.
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run(
        [str(ruff), "check", "--select", "C90", "--output-format", "concise", "core", "ui", "pages", "app.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout


def test_no_module_imports_another_modules_private_names():
    # A name with a leading underscore is its module's own; another module that needs it gets a public name.
    private = [
        f"{module}: from {node.module} import {alias.name}"
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("core")
        for alias in node.names
        if alias.name.startswith("_")
    ]
    assert private == []


def test_no_submodule_of_core_shares_a_name_core_exports():
    # Importing ``core.X`` binds the name X on ``core``: a submodule named like an export (``core.sweep`` once)
    # would replace the exported function with the module.
    import core

    submodules = {name.split(".")[1] for name in MODULES if name.count(".") >= 1}
    assert submodules & set(core._EXPORTS) == set()
