"""Shared test setup: hypothesis profiles and paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
# The embedding cache (core.embed.cache) goes to the project's ignored .pytest_cache, not the
# user's home; the xdist workers and the browser tests' server share it.
os.environ.setdefault("CHUNKSCOPE_CACHE_DIR", str(ROOT / ".pytest_cache" / "chunkscope"))
SAMPLE_DOCS = ROOT / "sample_docs"

# "default": quick enough for every run; "fuzz": the dedicated long run (make fuzz).
# The default run (make test, CI) is derandomized: the same examples every run, so a green run stays green on
# another machine; `make fuzz` explores with fresh random examples.
settings.register_profile(
    "default", max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz", max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def _load_sanitized_native(folder: Path) -> None:
    """``make fuzz``: the C modules built with AddressSanitizer and UBSan under ``folder`` (laid out as core/ is)
    stand in for the installed ones, so the tests that hold the C to its twin run it under the sanitizers."""
    import importlib.util
    import sys

    built = sorted(folder.rglob("*_native*.so"))
    assert built, f"CHUNKSCOPE_SANITIZED={folder} holds no built module"
    for path in built:
        name = ".".join(path.relative_to(folder).with_name(path.name.split(".")[0]).parts)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module


if os.environ.get("CHUNKSCOPE_SANITIZED"):
    _load_sanitized_native(Path(os.environ["CHUNKSCOPE_SANITIZED"]))


# The tests measured slow (tests/slow_tests.txt, one test function a line) get the slow marker, as those marked
# in their files do: make test-fast leaves them out; make test and CI run them.
SLOW_TESTS = {
    line.strip()
    for line in (Path(__file__).parent / "slow_tests.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
}


class _XdistGroups:
    """Make ``--dist loadgroup`` group again. pytest-xdist 3.8 names a grouped test by writing ``item._nodeid``
    (``nodeid@group``), and pytest 9.2 reads a test's id from ``item._id``: without this every ``xdist_group``
    mark is ignored and the groups' tests (one Ray at a time, the browser tests on one app server, the
    model-backed modules sharing a worker's model) are spread over both workers. Runs after xdist's own hook."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        from _pytest.nodeid import coerce_node_id

        for item in items:
            grouped = item.__dict__.get("_nodeid")
            if grouped and grouped != item.nodeid:
                item._id = coerce_node_id(grouped)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_XdistGroups(), "chunkscope-xdist-groups")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.split("[", 1)[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def sample_docs() -> Path:
    return SAMPLE_DOCS


# One app server and one chromium for every browser test module in the run (see browser_support.py).
@pytest.fixture(scope="session")
def app_url():
    from browser_support import CHROMIUM, app_server

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's chromium (make system-deps)")
    with app_server() as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from browser_support import launch
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray on two CPUs for one test module (mark it xdist_group("ray") so two never run at once).

    Ray is a dependency of the project, so a missing Ray is an install failure, not a reason to skip.
    """
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()


# The LLM tests' chat-completions server on 127.0.0.1, and an endpoint with an empty reply cache (tests/llm_server.py).
from llm_server import endpoint, llm_server  # noqa: E402,F401
