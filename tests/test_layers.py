"""core/'s rooms and the direction of its imports, as docs/architecture.md draws them.

Read from the source (every ``import`` and ``from ... import``, at module level, inside functions and under
``TYPE_CHECKING``), so a new arrow the wrong way fails here before anyone has to find it in a picture.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"

# Bottom-up, as in docs/architecture.md: a module may import from its own room and from rooms listed before it.
ROOMS = [
    ("core.errors", "core.schema", "core.words"),
    ("core.runtime",),
    ("core.params", "core.registry", "core.limits"),
    ("core.tokens",),
    ("core.translate",),
    ("core.loaders", "core.spans", "core.embed", "core.llm"),
    ("core.splitters",),
    ("core.engines", "core.extractors", "core.postprocessors"),
    ("core.config_parts", "core.config_link"),
    ("core.config",),
    ("core.documents",),
    ("core.query", "core.measure"),
    ("core.evaluation", "core.output"),
    ("core.batch",),
    ("core.cli",),
    ("core", "core.__main__"),
]


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


def _imports(module: str, source: str | None = None) -> set[str]:
    """The core modules ``module`` imports, wherever the import statement stands, and those it names in a string.

    A string that is a module's whole name (a registry's provider, ``importlib.import_module("core.x")``)
    is an import made later: it points the same way.
    """
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text() if source is None else source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("core"):
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names if alias.name.startswith("core")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in MODULES:
            names = [node.value]
        else:
            continue
        for name in names:
            while name not in MODULES:  # ``from core.x import function`` names the module core.x
                name = name.rpartition(".")[0]
            if name != module and not module.startswith(name + "."):  # a package's own __init__ is not an arrow
                found.add(name)
    return found


IMPORTS = {module: _imports(module) for module in MODULES}


def test_every_module_is_in_a_room_and_the_top_level_stays_small():
    for module in MODULES:
        _room(module)
    top_level = sorted(path.name for path in CORE.glob("*.py"))
    assert len(top_level) <= 18, top_level


def test_no_import_points_up():
    upward = [
        f"{module} -> {target}"
        for module, targets in IMPORTS.items()
        for target in targets
        if _room(target)[0] > _room(module)[0]
    ]
    assert upward == []


def test_a_module_named_in_a_string_is_an_arrow_too():
    # What the splitters' registry once said: the engines, a layer up, named as the provider it imports.
    source = 'SPLITTERS = Registry("splitter", providers=("core.engines",))'
    assert "core.engines" in _imports("core.splitters.registry", source)
    assert _room("core.engines")[0] > _room("core.splitters.registry")[0]  # so test_no_import_points_up fails on it
    # The top facade names the engines instead, and the splitters' registry finds them there.
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
        for target in IMPORTS[module]:
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
    for module, targets in IMPORTS.items():
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
