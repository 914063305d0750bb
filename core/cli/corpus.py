"""What the retrieval commands (``query``, ``evaluate``, ``tune``, ``draft-questions``) read from the command
line alike: the corpus and its splitter, the retrieval settings, a saved configuration and its extractors, where
configurations are evaluated, and the embedding model."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from core.cli.args import parse_assignments, parse_named
from core.cli.config import llm_from_args
from core.config_parts import RetrievalSettings
from core.errors import ConfigError
from core.runtime.parallel import ENGINES


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """The corpus (``PATH``…), its splitter (``--splitter``, ``--set``), the retrieval options and ``--model``."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Files or directories to load.")
    parser.add_argument(
        "--splitter",
        default=None,
        help="Splitter name (default: hierarchical, else character); for evaluate, several as NAME,NAME.",
    )
    parser.add_argument("--set", action="append", default=[], metavar="K=V", help="A splitter parameter (repeatable).")
    # Choices and help come from RetrievalSettings' declaration; retrieval_from_args validates. No default here:
    # an option not given takes evaluate's --config value, else the declared default.
    types = {"int": int, "float": float}
    for spec in RetrievalSettings.params():  # --top-k, --mode, --alpha, --fusion, --returns, --merge-ratio
        flag = "--" + spec.name.replace("_", "-")
        parser.add_argument(
            flag,
            type=types.get(spec.kind, str),
            choices=spec.choices,
            default=None,
            help=f"{spec.help} (default: {spec.default})",
        )
    parser.add_argument(
        "--model", default=None, help="Path of a local sentence-transformers model (default: packaged)."
    )


def retrieval_from_args(args: argparse.Namespace, base: RetrievalSettings | None = None) -> RetrievalSettings:
    """The retrieval settings the options give (``--top-k``, ``--mode``, …) on top of ``base`` (a configuration's;
    else the declared defaults), checked by their declaration."""
    values = (base or RetrievalSettings()).to_params()
    given = {spec.name: getattr(args, spec.name) for spec in RetrievalSettings.params()}
    return RetrievalSettings.from_params({**values, **{name: value for name, value in given.items() if value is not None}})


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--engine``, ``--workers`` and ``--ray-address``: where the configurations are evaluated."""
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="Where configurations are evaluated: local (this process, one after another), processes (a process "
        "pool) or ray (Ray tasks). Every engine gives the same results.",
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="Processes / Ray CPUs for processes or ray (default: the cores)."
    )
    parser.add_argument(
        "--ray-address", default=None, metavar="ADDR", help="Join this Ray cluster (e.g. auto) instead of a local Ray."
    )


def engine_from_args(args: argparse.Namespace):  # noqa: ANN201 - a core.runtime.parallel.Engine
    """The checked Engine of ``--engine/--workers/--ray-address`` (a bad combination is a ConfigError)."""
    from core.runtime.parallel import Engine

    return Engine(args.engine, args.workers, args.ray_address)


def saved_config(args: argparse.Namespace) -> Any:
    """The configuration of ``--config FILE`` as saved (None without it); the options go on top where they are read."""
    if not getattr(args, "config", None):
        return None
    from core.cli.config import read_config_file

    return read_config_file(args.config)


def extractors_from_args(args: argparse.Namespace, saved: Any = None) -> Any:
    """The PipelineConfig whose extractors, LLM and metadata settings every configuration runs (its splitter is not
    used): ``saved`` (``--config``) with ``--extractor`` and ``--llm`` on top, or those alone; None without either.
    An llm_* extractor without an LLM's base_url and model is refused."""
    if not args.extractor and saved is None:
        if args.llm:
            raise ConfigError("--llm is for the llm_* extractors: give them with --extractor")
        return None
    from core.config import PipelineConfig
    from core.extractors import EXTRACTORS

    base = saved if saved is not None else PipelineConfig()
    extractors = tuple(
        EXTRACTORS.create(name, **params) for name, params in (parse_named(text, "--extractor") for text in args.extractor)
    )
    llm = llm_from_args(args, base.llm) if args.llm else base.llm
    return base.replace(extractors=extractors or base.extractors, llm=llm)


def splitter_choice(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    """The one ``--splitter`` (else the default) and its ``--set`` parameters."""
    from core.config_parts import default_splitter_name

    name = args.splitter or default_splitter_name()
    return name, parse_assignments(args.set, "--set")


def splitter_names(args: argparse.Namespace) -> list[str]:
    """The ``--splitter`` names (``NAME,NAME``), else the default one."""
    names = [name.strip() for name in (args.splitter or "").split(",") if name.strip()]
    return names or [splitter_choice(args)[0]]


def load_paths(paths: Sequence[str]):  # noqa: ANN202
    from core.loaders.cache import load  # a file read before (OCR, PDF, Office) comes from disk

    documents = []
    for path in paths:
        documents.extend(load(path))
    if not documents:
        raise ConfigError("no documents were loaded from " + ", ".join(paths))
    return documents


def embedder_for(args: argparse.Namespace, *, needs: bool, engine: Any = None):  # noqa: ANN202
    """The model, loaded here; for workers (an engine other than local) a ref each loads it by (its folder is checked)."""
    if not needs:
        return None
    if engine is not None and engine.kind != "local":
        from core.evaluation.jobs import EmbedderRef
        from core.tokens.tokenizers import default_model_path

        if args.model is None:
            default_model_path()  # no packaged model fails here, not in every worker
        elif not os.path.isdir(args.model):
            raise ConfigError(f"--model: no model folder at {args.model}")
        return EmbedderRef(os.path.abspath(args.model) if args.model else None)
    from core.embed.embedder import get_embedder

    return get_embedder(args.model)

