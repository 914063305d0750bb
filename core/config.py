"""PipelineConfig: one run of ChunkScope described as plain, hashable data.

A config names the loader options, the splitter, the metadata settings, the
extractors, the postprocessors and the retrieval settings. It is the unit the app
caches (it is frozen and hashable, and :meth:`PipelineConfig.key` is a stable
hash), compares, exports as JSON, and encodes into a shareable link.

Every component in a config is an *instance* of its declared-parameter class, so
a config cannot hold an invalid value: validation lives in the declarations, and
this module only routes raw values (JSON here, URL strings in
:mod:`core.config_link`) to them. Its parts are declared in :mod:`core.config_parts`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from core import config_link
from core.config_parts import (
    MetadataSettings,
    RetrievalSettings,
    default_splitter,
    extractor_registry,
    loader_registry,
    postprocessor_registry,
    splitter_registry,
)
from core.errors import ConfigError
from core.llm import LLMConnection
from core.params import Configurable
from core.params.typed_text import read_typed
from core.registry import Registry

CONFIG_VERSION = 2
# Version 1 kept the native recursive splitter's literal separators as typed (``\\n`` for a newline) and the
# splitter read them; from version 2 every stored value is the text itself, and typed text is read where it is
# typed (core.params.typed_text.read_typed). A version 1 file is read as it was split.
_READS_VERSIONS = (1, CONFIG_VERSION)


@dataclass(frozen=True)
class PipelineConfig:
    """Loader options, splitter, metadata settings, extractors, postprocessors, retrieval.

    Build one from raw values with :meth:`from_dict`, :meth:`from_json` or
    :meth:`from_query_params`, or from instances directly, e.g.
    ``PipelineConfig(splitter=get_splitter("character", chunk_size=200))``.
    ``loaders`` keeps only loaders whose options differ from their defaults.
    """

    splitter: Configurable = field(default_factory=default_splitter)
    loaders: tuple[Configurable, ...] = ()
    metadata: MetadataSettings = MetadataSettings()
    extractors: tuple[Configurable, ...] = ()
    postprocessors: tuple[Configurable, ...] = ()
    retrieval: RetrievalSettings = RetrievalSettings()
    # The endpoint the LLM extractors ask; unconfigured (the default) it is left out of the JSON and the link.
    llm: LLMConnection = LLMConnection()

    def __post_init__(self) -> None:
        # Loaders at their defaults say nothing; sorting makes equal configs compare equal.
        loaders = sorted((loader for loader in self.loaders if loader.to_params(only_changed=True)), key=_name_of)
        names = [loader.name for loader in loaders]
        duplicate = next((name for name in names if names.count(name) > 1), None)
        if duplicate:
            raise ConfigError(f"loader {duplicate!r} is configured twice")
        object.__setattr__(self, "loaders", tuple(loaders))
        object.__setattr__(self, "extractors", tuple(self.extractors))
        object.__setattr__(self, "postprocessors", tuple(self.postprocessors))
        extractor_names = [extractor.name for extractor in self.extractors]
        duplicate = next((name for name in extractor_names if extractor_names.count(name) > 1), None)
        if duplicate:
            raise ConfigError(f"extractor {duplicate!r} is listed twice")
        asks_llm = [extractor.name for extractor in self.extractors if getattr(extractor, "node_level", False)]
        if asks_llm and not self.llm.configured:
            raise ConfigError(
                f"extractor {asks_llm[0]!r} asks an LLM, and none is configured: set the llm base_url and model"
            )

    # ----------------------------------------------------------------- accessors

    def loader_options(self, loader_name: str) -> dict[str, Any]:
        """The options (only those changed from the defaults) for one loader, by registry name."""
        for loader in self.loaders:
            if loader.name == loader_name:
                return loader.to_params(only_changed=True)
        return {}

    def key(self) -> str:
        """A stable hash of the whole config: equal configs give equal keys across runs."""
        return hashlib.sha256(self.to_json(indent=None).encode("utf-8")).hexdigest()[:16]

    def replace(self, **changes: Any) -> PipelineConfig:
        """A copy with some fields changed (the fields are instances, as in the constructor)."""
        return dataclasses.replace(self, **changes)

    # ---------------------------------------------------------------- dict / JSON

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data; every component with all its parameter values."""
        return {
            "version": CONFIG_VERSION,
            "splitter": _component_dict(self.splitter),
            "loaders": {loader.name: loader.to_params() for loader in self.loaders},
            "metadata": {"extra": self.metadata.extra_metadata, **self.metadata.to_params()},
            "extractors": [_component_dict(extractor) for extractor in self.extractors],
            "postprocessors": [_component_dict(post) for post in self.postprocessors],
            "retrieval": self.retrieval.to_params(),
            # Only when set, so every configuration without an LLM keeps its JSON and its key.
            **({"llm": self.llm.to_params()} if self.llm.to_params(only_changed=True) else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PipelineConfig:
        """Build from :meth:`to_dict`'s form; any section may be left out (it takes its defaults)."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"config: expected a JSON object, got {type(data).__name__}")
        known = {"version", "splitter", "loaders", "metadata", "extractors", "postprocessors", "retrieval", "llm"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"config: unknown section {unknown[0]!r} (known: {', '.join(sorted(known))})")
        version = data.get("version", CONFIG_VERSION)
        if version not in _READS_VERSIONS or isinstance(version, bool):
            raise ConfigError(f"config: version {version!r} is not supported (this ChunkScope reads {CONFIG_VERSION})")
        if version == 1:
            data = _from_version_1(data)
        values: dict[str, Any] = {}
        if "splitter" in data:
            values["splitter"] = _component_from(splitter_registry(), data["splitter"], "splitter")
        if "loaders" in data:
            loaders = _mapping(data["loaders"], "loaders")
            values["loaders"] = tuple(
                loader_registry().create(name, **_mapping(params, f"loaders.{name}"))
                for name, params in loaders.items()
            )
        if "metadata" in data:
            values["metadata"] = _metadata_from(_mapping(data["metadata"], "metadata"))
        if "extractors" in data:
            values["extractors"] = tuple(
                _component_from(extractor_registry(), item, "extractors")
                for item in _sequence(data["extractors"], "extractors")
            )
        if "postprocessors" in data:
            values["postprocessors"] = tuple(
                _component_from(postprocessor_registry(), item, "postprocessors")
                for item in _sequence(data["postprocessors"], "postprocessors")
            )
        if "retrieval" in data:
            values["retrieval"] = RetrievalSettings.from_params(_mapping(data["retrieval"], "retrieval"))
        if "llm" in data:
            values["llm"] = LLMConnection.from_params(_mapping(data["llm"], "llm"))
        return cls(**values)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=indent is None, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> PipelineConfig:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"config: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
        return cls.from_dict(data)

    # ------------------------------------------------------------------ URL form

    def to_query_params(self) -> dict[str, str]:
        """The config as URL query parameters; only values that differ from the defaults."""
        return config_link.to_query_params(
            splitter=self.splitter,
            loaders=self.loaders,
            metadata=self.metadata,
            extractors=self.extractors,
            postprocessors=self.postprocessors,
            retrieval=self.retrieval,
            llm=self.llm,
        )

    @overload
    @classmethod
    def from_query_params(
        cls, params: Mapping[str, str | Sequence[str]], *, lenient: Literal[False] = False, ignore: Collection[str] = ()
    ) -> PipelineConfig: ...

    @overload
    @classmethod
    def from_query_params(
        cls, params: Mapping[str, str | Sequence[str]], *, lenient: Literal[True], ignore: Collection[str] = ()
    ) -> tuple[PipelineConfig, list[str]]: ...

    @classmethod
    def from_query_params(
        cls, params: Mapping[str, str | Sequence[str]], *, lenient: bool = False, ignore: Collection[str] = ()
    ) -> PipelineConfig | tuple[PipelineConfig, list[str]]:
        """Read :meth:`to_query_params`' form (a dict of strings, or of lists as ``parse_qs`` gives).

        Strict (the default): any unknown or invalid value raises ConfigError.
        ``lenient=True`` (for links a person may have edited): invalid values are
        dropped and ``(config, warnings)`` is returned, one warning per dropped value.
        ``ignore`` names keys that belong to someone else (e.g. the app's ``doc``).
        """
        parts, warnings = config_link.read_query_params(params, lenient=lenient, ignore=ignore)
        config = cls(**parts)
        return (config, warnings) if lenient else config


# --------------------------------------------------------------------- helpers


def _name_of(component: Configurable) -> str:
    return component.name


def _component_dict(component: Configurable) -> dict[str, Any]:
    return {"name": component.name, "params": component.to_params()}


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"config: {where} must be an object, got {value!r}")
    return value


def _sequence(value: Any, where: str) -> Sequence[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ConfigError(f"config: {where} must be a list, got {value!r}")
    return value


def _from_version_1(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A version 1 config as version 2 says it: the recursive splitter's literal separators read as typed."""
    splitter = data.get("splitter")
    if not isinstance(splitter, Mapping) or splitter.get("name") != "recursive":
        return data
    params = splitter.get("params")
    if (
        not isinstance(params, Mapping)
        or params.get("is_separator_regex")
        or not isinstance(params.get("separators"), list)
    ):
        return data
    separators = [read_typed(item) if isinstance(item, str) else item for item in params["separators"]]
    return {**data, "splitter": {**splitter, "params": {**params, "separators": separators}}}


def _component_from(registry: Registry, item: Any, where: str) -> Configurable:
    """A component from ``"name"`` or ``{"name": ..., "params": {...}}``."""
    if isinstance(item, str):
        return registry.create(item)
    item = _mapping(item, where)
    if "name" not in item:
        raise ConfigError(f"config: every entry of {where} needs a name")
    extra_keys = sorted(set(item) - {"name", "params"})
    if extra_keys:
        raise ConfigError(f"config: {where} entry {item['name']!r} has unknown key {extra_keys[0]!r}")
    return registry.create(str(item["name"]), **_mapping(item.get("params", {}), f"{where}.{item['name']}.params"))


def _metadata_from(data: Mapping[str, Any]) -> MetadataSettings:
    data = dict(data)
    extra = _mapping(data.pop("extra", {}), "metadata.extra")
    settings = MetadataSettings.from_params(data)
    return dataclasses.replace(settings, extra=tuple(extra.items()))
