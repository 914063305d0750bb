"""The PipelineConfig a ``chunkscope`` command runs: ``--config`` or ``--from-url``, with the options on top.

Every option takes strings that the components' declared parameters coerce and
validate (``--set`` for the splitter, ``--loader-set``, ``--extractor``,
``--meta``, ``--view-set``, ``--post``, ``--retrieval-set``), so nothing here
knows any particular component.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from core.cli.args import parse_assignments, parse_named
from core.errors import ConfigError


def pipeline_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that runs a configuration takes; :func:`config_from_args` reads them."""
    parser.add_argument("--config", metavar="FILE", help="A config JSON (chunkscope config, or the app's export).")
    parser.add_argument("--splitter", metavar="NAME", help="Splitter by registry name (see 'chunkscope splitters').")
    parser.add_argument("--set", action="append", default=[], metavar="K=V", help="A splitter parameter (repeatable).")
    parser.add_argument(
        "--loader-set",
        action="append",
        default=[],
        metavar="[LOADER.]K=V",
        help="A loader option, e.g. pdf.extraction_mode=layout; a bare K applies to every loader that has it.",
    )
    parser.add_argument(
        "--extractor", action="append", default=[], metavar="NAME[:K=V,...]", help="A metadata extractor (repeatable)."
    )
    add_llm_option(parser, "The LLM the llm_* extractors ask")
    parser.add_argument("--meta", action="append", default=[], metavar="K=V", help="Extra metadata for every document.")
    parser.add_argument(
        "--view-set",
        action="append",
        default=[],
        metavar="K=V",
        help="A metadata view setting: metadata_template, metadata_separator, text_template, excluded_*_metadata_keys.",
    )


def add_llm_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--llm K=V`` (repeatable): the LLM connection's declared parameters; :func:`llm_from_args` reads them."""
    parser.add_argument(
        "--llm",
        action="append",
        default=[],
        metavar="K=V",
        help=f"{what} (repeatable): base_url=, model=, api_key_env= (the NAME of the "
        "variable holding the key, never the key), timeout=, max_retries=, concurrency=, ...",
    )


def llm_from_args(args: argparse.Namespace, base: Any = None) -> Any:
    """The LLMConnection of ``--llm`` on top of ``base`` (an LLMConnection, or none)."""
    from core.llm import LLMConnection

    current = base if base is not None else LLMConnection()
    return LLMConnection.from_params({**current.to_params(only_changed=True), **parse_assignments(args.llm, "--llm")})


def config_from_args(args: argparse.Namespace) -> Any:
    """A PipelineConfig from ``--config`` (or ``--from-url``) plus the options on top."""
    from core.config import PipelineConfig

    base = _base_config(args)
    changes: dict[str, Any] = {"splitter": _splitter_from(args, base)}
    # Each part the options set, in the order the options are listed; a part no option names stays the base's.
    for part, from_options in _OPTION_PARTS:
        value = from_options(args, base)
        if value is not None:
            changes[part] = value
    return base.replace(**changes) if base is not None else PipelineConfig(**changes)


def _splitter_from(args: argparse.Namespace, base: Any) -> Any:
    """``--splitter`` and ``--set`` on top of the base's splitter (its parameters kept when the name stays)."""
    from core.config_parts import default_splitter_name
    from core.splitters import SPLITTERS

    name = args.splitter or (base.splitter.name if base is not None else default_splitter_name())
    params: dict[str, Any] = {}
    if base is not None and base.splitter.name == name:
        params.update(base.splitter.to_params(only_changed=True))
    params.update(parse_assignments(args.set, "--set"))
    return SPLITTERS.create(name, **params)


def _loaders_option(args: argparse.Namespace, base: Any) -> tuple[Any, ...] | None:
    if not args.loader_set:
        return None
    return _loaders_from(args.loader_set, base.loaders if base is not None else ())


def _llm_option(args: argparse.Namespace, base: Any) -> Any:
    if not getattr(args, "llm", None):
        return None
    return llm_from_args(args, base.llm if base is not None else None)


def _extractors_option(args: argparse.Namespace, base: Any) -> tuple[Any, ...] | None:
    from core.extractors import EXTRACTORS

    if not args.extractor:
        return None
    return tuple(
        EXTRACTORS.create(step, **step_params)
        for step, step_params in (parse_named(text, "--extractor") for text in args.extractor)
    )


def _metadata_option(args: argparse.Namespace, base: Any) -> Any:
    """``--view-set`` on top of the base's view settings, ``--meta`` on top of its extra metadata."""
    from core.config_parts import MetadataSettings

    if not (args.meta or args.view_set):
        return None
    current = base.metadata if base is not None else MetadataSettings()
    view = {**current.to_params(only_changed=True), **parse_assignments(args.view_set, "--view-set")}
    extra = {**current.extra_metadata, **{k: str(v) for k, v in parse_assignments(args.meta, "--meta").items()}}
    settings = MetadataSettings.from_params(view)
    return MetadataSettings(
        **{spec.name: getattr(settings, spec.name) for spec in settings.params()}, extra=tuple(extra.items())
    )


def _postprocessors_option(args: argparse.Namespace, base: Any) -> tuple[Any, ...] | None:
    if not getattr(args, "post", None):
        return None
    from core.postprocessors import POSTPROCESSORS

    return tuple(POSTPROCESSORS.create(step, **p) for step, p in (parse_named(text, "--post") for text in args.post))


def _retrieval_option(args: argparse.Namespace, base: Any) -> Any:
    from core.config_parts import RetrievalSettings

    if not getattr(args, "retrieval_set", None):
        return None
    current = base.retrieval if base is not None else RetrievalSettings()
    values = {**current.to_params(), **parse_assignments(args.retrieval_set, "--retrieval-set")}
    return RetrievalSettings.from_params(values)


# The PipelineConfig parts options may set beside the splitter, each with what reads its options (None: not given).
_OPTION_PARTS = (
    ("loaders", _loaders_option),
    ("llm", _llm_option),
    ("extractors", _extractors_option),
    ("metadata", _metadata_option),
    ("postprocessors", _postprocessors_option),
    ("retrieval", _retrieval_option),
)


def _base_config(args: argparse.Namespace) -> Any:
    from core.config import PipelineConfig

    if getattr(args, "from_url", None):
        query = urlsplit(args.from_url).query if "?" in args.from_url or "://" in args.from_url else args.from_url
        return PipelineConfig.from_query_params(parse_qs(query, keep_blank_values=True))
    if args.config:
        return read_config_file(args.config)
    return None


def read_config_file(name: str) -> Any:
    """The PipelineConfig saved in the JSON file ``name``; a ConfigError naming the file where it cannot be."""
    from core.config import PipelineConfig

    path = Path(name)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
    try:
        return PipelineConfig.from_json(text)
    except ConfigError as exc:
        raise ConfigError(f"{path.name}: {exc}") from None


def _loaders_from(items: Sequence[str], current: Sequence[Any]) -> tuple[Any, ...]:
    """Loader instances from ``[LOADER.]K=V`` options, on top of the loaders already configured."""
    from core.loaders import LOADERS

    options: dict[str, dict[str, Any]] = {loader.name: loader.to_params(only_changed=True) for loader in current}
    for key, value in parse_assignments(items, "--loader-set").items():
        owner, dot, name = key.partition(".")
        if dot:
            LOADERS.get_class(owner)  # names the unknown loader
            options.setdefault(owner, {})[name] = value
            continue
        owners = [cls.name for cls in LOADERS if any(spec.name == key for spec in cls.params())]
        if not owners:
            raise ConfigError(f"--loader-set: no loader has an option {key!r} (see 'chunkscope loaders')")
        # A bare option goes to every loader that has it and takes this value; one that refuses it is named.
        refusals = []
        for owner in owners:
            try:
                LOADERS.create(owner, **{**options.get(owner, {}), key: value})
            except ConfigError as exc:
                refusals.append(str(exc))
                continue
            options.setdefault(owner, {})[key] = value
        if len(refusals) == len(owners):
            raise ConfigError(f"--loader-set {key}: " + "; ".join(refusals))
        for refusal in refusals:
            print(f"chunkscope: warning: --loader-set {key} is left at its default for {refusal}", file=sys.stderr)
    return tuple(LOADERS.create(name, **params) for name, params in options.items())
