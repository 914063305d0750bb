"""PipelineConfig: one run of ChunkScope described as plain, hashable data.

A config names the loader options, the splitter, the metadata settings, the
extractors, the postprocessors and the retrieval settings. It is the unit the app
caches (it is frozen and hashable, and :meth:`PipelineConfig.key` is a stable
hash), compares, exports as JSON, and encodes into a shareable link.

Every component in a config is an *instance* of its declared-parameter class, so
a config cannot hold an invalid value: validation lives in the declarations, and
this module only routes raw values (JSON, CLI strings, URL strings) to them.

The URL form is compact and readable; only values that differ from the defaults
are written::

    splitter=sentence&chunk_size=512&chunk_overlap=50      splitter and its params
    loader.pdf.extraction_mode=layout                       loader options
    meta.author=Alice                                       extra document metadata
    view.metadata_template={key}=>{value}                   metadata view settings
    extractors=title,keywords&extractor.keywords.top_k=8    extractors and params
    postprocessors=similarity_cutoff,top_n                  postprocessors (ordered)
    postprocessor.similarity_cutoff.similarity_cutoff=0.4   ... and their params
    retrieval.top_k=8&retrieval.mode=hybrid                 retrieval settings

A postprocessor used twice gets ``~2`` after its name for the second use
(``postprocessor.top_n~2.top_n=3``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from string import Formatter
from typing import Any, Literal, overload

from core.errors import ConfigError
from core.params import Configurable, format_list, param
from core.registry import Registry
from core.schema import (
    DEFAULT_METADATA_SEPARATOR,
    DEFAULT_METADATA_TEMPLATE,
    DEFAULT_TEXT_TEMPLATE,
    METADATA_TEMPLATE_FIELDS,
    TEXT_TEMPLATE_FIELDS,
)

CONFIG_VERSION = 1
DEFAULT_SPLITTER = "sentence"

MetadataValue = str | int | float | bool

# Keys of the URL form that are not splitter parameters.
_SPLITTER_KEY = "splitter"
_EXTRACTORS_KEY = "extractors"
_POSTPROCESSORS_KEY = "postprocessors"
_PREFIX_LOADER = "loader."
_PREFIX_META = "meta."
_PREFIX_VIEW = "view."
_PREFIX_EXTRACTOR = "extractor."
_PREFIX_POSTPROCESSOR = "postprocessor."
_PREFIX_RETRIEVAL = "retrieval."
_REPEAT_MARK = "~"

# The longest template or separator accepted: a few lines of framing. With each field used
# at most once, this bounds what a rendering adds to the node's own text and metadata.
MAX_TEMPLATE_CHARS = 1_000


@dataclass(frozen=True)
class MetadataSettings(Configurable):
    """How metadata is rendered for the LLM and the embedding model (as in LlamaIndex).

    ``extra`` holds document metadata the user adds (key, value pairs); it is
    not a declared parameter because its keys are the user's own.
    """

    name = "metadata"
    summary = "Extra document metadata, excluded keys per reader, and the templates that render metadata."

    excluded_llm_metadata_keys: tuple[str, ...] | None = param(
        None, "Metadata keys the LLM does not see; unset keeps what the loader chose."
    )
    excluded_embed_metadata_keys: tuple[str, ...] | None = param(
        None, "Metadata keys the embedding model does not see; unset keeps what the loader chose."
    )
    metadata_template: str = param(
        DEFAULT_METADATA_TEMPLATE, "How one metadata pair is written; uses {key} and {value}, each at most once."
    )
    metadata_separator: str = param(DEFAULT_METADATA_SEPARATOR, "What goes between metadata pairs.")
    text_template: str = param(
        DEFAULT_TEXT_TEMPLATE, "How metadata and text are joined; uses {metadata_str} and {content}, each at most once."
    )
    extra: tuple[tuple[str, MetadataValue], ...] = ()

    def validate(self) -> None:
        _check_length(self.name, "metadata_separator", self.metadata_separator)
        _check_template(self.name, "metadata_template", self.metadata_template, METADATA_TEMPLATE_FIELDS, required=())
        _check_template(self.name, "text_template", self.text_template, TEXT_TEMPLATE_FIELDS, required=("content",))
        seen: set[str] = set()
        for key, value in self.extra:
            if not isinstance(key, str) or not key.strip():
                raise ConfigError(f"{self.name}: a metadata key must be non-empty text, got {key!r}")
            if key in seen:
                raise ConfigError(f"{self.name}: metadata key {key!r} is given twice")
            seen.add(key)
            if not isinstance(value, (str, int, float, bool)):
                raise ConfigError(f"{self.name}: metadata value for {key!r} must be text or a number, got {value!r}")

    @property
    def extra_metadata(self) -> dict[str, MetadataValue]:
        return dict(self.extra)

    def view_settings(self) -> dict[str, Any]:
        """The settings to hand to :meth:`core.schema.Document.with_metadata`; unset keys are left out."""
        settings: dict[str, Any] = {
            "metadata_template": self.metadata_template,
            "metadata_separator": self.metadata_separator,
            "text_template": self.text_template,
        }
        if self.excluded_llm_metadata_keys is not None:
            settings["excluded_llm_metadata_keys"] = list(self.excluded_llm_metadata_keys)
        if self.excluded_embed_metadata_keys is not None:
            settings["excluded_embed_metadata_keys"] = list(self.excluded_embed_metadata_keys)
        return settings


def _check_length(owner: str, name: str, text: str) -> None:
    if len(text) > MAX_TEMPLATE_CHARS:
        raise ConfigError(
            f"{owner}: {name} is {len(text):,} characters long, more than the limit of {MAX_TEMPLATE_CHARS:,}"
        )


def _check_template(owner: str, name: str, template: str, fields: tuple[str, ...], required: tuple[str, ...]) -> None:
    """Refuse a template that is more than literal text and plain ``{field}`` names from ``fields``, each once.

    Checked by parsing, never by rendering: a format spec is code for str.format
    (``{content:>999999999}`` asks for a gigabyte), and so are conversions,
    attribute and index access; none of them has a use in a template.
    """
    _check_length(owner, name, template)
    try:
        parsed = list(Formatter().parse(template))
    except ValueError as exc:
        raise ConfigError(f"{owner}: {name} is not a valid template ({exc}; write {{{{ for a literal brace)") from None
    used: list[str] = []
    for _literal, field_name, spec, conversion in parsed:
        if field_name is None:
            continue
        problem = _field_problem(field_name, spec or "", conversion, fields, used)
        if problem:
            allowed = " and ".join("{" + f + "}" for f in fields)
            raise ConfigError(f"{owner}: {name} may only use {allowed} (write {{{{ for a brace): {problem}")
        used.append(field_name)
    for field_name in required:
        if field_name not in used:
            raise ConfigError(f"{owner}: {name} must contain {{{field_name}}}")


def _field_problem(
    field_name: str, spec: str, conversion: str | None, fields: tuple[str, ...], used: list[str]
) -> str | None:
    written = "{" + field_name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
    # Quoted with repr so a newline in the field stays on the message's one line.
    shown = repr(written if len(written) <= 40 else written[:38] + "…}")
    head = field_name.partition(".")[0].partition("[")[0]
    if not head or head.isdigit():
        return f"{shown} is positional"
    if head not in fields:
        return f"unknown field {head!r}"
    if head != field_name:
        return f"{shown} reads an attribute or index"
    if conversion:
        return f"{shown} has a conversion"
    if spec:
        return f"{shown} has a format spec"
    if field_name in used:
        return f"{shown} appears more than once"
    return None


@dataclass(frozen=True)
class RetrievalSettings(Configurable):
    """How nodes are retrieved for a query before the postprocessors run."""

    name = "retrieval"
    summary = "Top-k retrieval over node embeddings, optionally hybrid with BM25."

    top_k: int = param(5, "How many nodes the retriever returns (LlamaIndex's similarity_top_k).", ge=1, le=200)
    mode: Literal["dense", "bm25", "hybrid"] = param(
        "dense", "Dense: cosine over embeddings; bm25: keywords only; hybrid: a weighted mix of both."
    )
    alpha: float = param(0.5, "Hybrid only: the dense score's weight (1 = dense only, 0 = BM25 only).", ge=0.0, le=1.0)


def _splitters() -> Registry:
    from core.splitters import SPLITTERS

    return SPLITTERS


def _loaders() -> Registry:
    from core.loaders import LOADERS

    return LOADERS


def _extractors() -> Registry:
    from core.extractors import EXTRACTORS

    return EXTRACTORS


def _postprocessors() -> Registry:
    try:
        from core.postprocessors import POSTPROCESSORS
    except ImportError:
        raise ConfigError("postprocessors are not available in this installation") from None
    return POSTPROCESSORS


def _default_splitter() -> Configurable:
    return _splitters().create(DEFAULT_SPLITTER)


@dataclass(frozen=True)
class PipelineConfig:
    """Loader options, splitter, metadata settings, extractors, postprocessors, retrieval.

    Build one from raw values with :meth:`from_dict`, :meth:`from_json` or
    :meth:`from_query_params`, or from instances directly, e.g.
    ``PipelineConfig(splitter=get_splitter("character", chunk_size=200))``.
    ``loaders`` keeps only loaders whose options differ from their defaults.
    """

    splitter: Configurable = field(default_factory=_default_splitter)
    loaders: tuple[Configurable, ...] = ()
    metadata: MetadataSettings = MetadataSettings()
    extractors: tuple[Configurable, ...] = ()
    postprocessors: tuple[Configurable, ...] = ()
    retrieval: RetrievalSettings = RetrievalSettings()

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

    # ----------------------------------------------------------------- accessors

    def loader_options(self, loader_name: str) -> dict[str, Any]:
        """The options (only those changed from the defaults) for one loader, by registry name."""
        for loader in self.loaders:
            if loader.name == loader_name:
                return loader.to_params(only_changed=True)
        return {}

    def loader_options_for(self, file_name: str) -> dict[str, Any]:
        """The options for whichever loader reads ``file_name``."""
        from core.loaders import loader_for

        return self.loader_options(loader_for(file_name).name)

    def key(self) -> str:
        """A stable hash of the whole config: equal configs give equal keys across runs."""
        return hashlib.sha256(self.to_json(indent=None).encode("utf-8")).hexdigest()[:16]

    def replace(self, **changes: Any) -> PipelineConfig:
        """A copy with some fields changed (the fields are instances, as in the constructor)."""
        from dataclasses import replace

        return replace(self, **changes)

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
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PipelineConfig:
        """Build from :meth:`to_dict`'s form; any section may be left out (it takes its defaults)."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"config: expected a JSON object, got {type(data).__name__}")
        known = {"version", "splitter", "loaders", "metadata", "extractors", "postprocessors", "retrieval"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"config: unknown section {unknown[0]!r} (known: {', '.join(sorted(known))})")
        version = data.get("version", CONFIG_VERSION)
        if version != CONFIG_VERSION:
            raise ConfigError(f"config: version {version!r} is not supported (this ChunkScope reads {CONFIG_VERSION})")
        values: dict[str, Any] = {}
        if "splitter" in data:
            values["splitter"] = _component_from(_splitters(), data["splitter"], "splitter")
        if "loaders" in data:
            loaders = _mapping(data["loaders"], "loaders")
            values["loaders"] = tuple(
                _loaders().create(name, **_mapping(params, f"loaders.{name}")) for name, params in loaders.items()
            )
        if "metadata" in data:
            values["metadata"] = _metadata_from(_mapping(data["metadata"], "metadata"))
        if "extractors" in data:
            values["extractors"] = tuple(
                _component_from(_extractors(), item, "extractors") for item in _sequence(data["extractors"], "extractors")
            )
        if "postprocessors" in data:
            values["postprocessors"] = tuple(
                _component_from(_postprocessors(), item, "postprocessors")
                for item in _sequence(data["postprocessors"], "postprocessors")
            )
        if "retrieval" in data:
            values["retrieval"] = RetrievalSettings.from_params(_mapping(data["retrieval"], "retrieval"))
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
        out: dict[str, str] = {_SPLITTER_KEY: self.splitter.name}
        out.update(_encode_params("", self.splitter))
        for loader in self.loaders:
            out.update(_encode_params(f"{_PREFIX_LOADER}{loader.name}.", loader))
        for key, value in self.metadata.extra:
            out[f"{_PREFIX_META}{key}"] = _encode_value(value)
        out.update(_encode_params(_PREFIX_VIEW, self.metadata))
        if self.extractors:
            out[_EXTRACTORS_KEY] = ",".join(extractor.name for extractor in self.extractors)
            for extractor in self.extractors:
                out.update(_encode_params(f"{_PREFIX_EXTRACTOR}{extractor.name}.", extractor))
        if self.postprocessors:
            out[_POSTPROCESSORS_KEY] = ",".join(post.name for post in self.postprocessors)
            for label, post in zip(_labels([post.name for post in self.postprocessors]), self.postprocessors, strict=True):
                out.update(_encode_params(f"{_PREFIX_POSTPROCESSOR}{label}.", post))
        out.update(_encode_params(_PREFIX_RETRIEVAL, self.retrieval))
        return out

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
        warnings: list[str] = []
        config = _QueryReader(params, lenient, set(ignore), warnings).read()
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
    return MetadataSettings(**{**_field_values(settings), "extra": tuple(extra.items())})


def _field_values(settings: MetadataSettings) -> dict[str, Any]:
    return {spec.name: getattr(settings, spec.name) for spec in settings.params()}


def _encode_params(prefix: str, component: Configurable) -> dict[str, str]:
    return {f"{prefix}{key}": _encode_value(value) for key, value in component.to_params(only_changed=True).items()}


def _encode_value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return format_list(value, separator=",")
    return str(value)


def _labels(names: Sequence[str]) -> list[str]:
    """``name`` for the first use of a name, ``name~2`` for the second, and so on."""
    counts: dict[str, int] = {}
    labels = []
    for name in names:
        counts[name] = counts.get(name, 0) + 1
        labels.append(name if counts[name] == 1 else f"{name}{_REPEAT_MARK}{counts[name]}")
    return labels


class _QueryReader:
    """Reads the URL form, either raising on the first problem or collecting warnings."""

    def __init__(
        self, params: Mapping[str, str | Sequence[str]], lenient: bool, ignore: set[str], warnings: list[str]
    ) -> None:
        self.values = {key: _last(value) for key, value in params.items() if key not in ignore}
        self.lenient = lenient
        self.warnings = warnings

    def problem(self, message: str) -> None:
        if not self.lenient:
            raise ConfigError(message)
        self.warnings.append(message)

    def read(self) -> PipelineConfig:
        values = dict(self.values)
        splitter_name = values.pop(_SPLITTER_KEY, DEFAULT_SPLITTER)
        extractor_names = _names(values.pop(_EXTRACTORS_KEY, ""))
        post_names = _names(values.pop(_POSTPROCESSORS_KEY, ""))

        grouped: dict[str, dict[str, dict[str, str]]] = {
            "splitter": {},
            "loader": {},
            "meta": {},
            "view": {},
            "extractor": {},
            "postprocessor": {},
            "retrieval": {},
        }
        for key, value in values.items():
            section, owner, name = _route(key)
            if section is None:
                self.problem(f"{key!r} is not a ChunkScope setting")
                continue
            grouped[section].setdefault(owner, {})[name] = value

        config: dict[str, Any] = {}
        splitter = self.component(_splitters, splitter_name, grouped["splitter"].get("", {}), "splitter")
        if splitter is None and splitter_name != DEFAULT_SPLITTER:
            splitter = self.component(_splitters, DEFAULT_SPLITTER, {}, "splitter")
        if splitter is not None:
            config["splitter"] = splitter

        loaders = []
        for loader_name, options in grouped["loader"].items():
            loader = self.component(_loaders, loader_name, options, "loader")
            if loader is not None:
                loaders.append(loader)
        config["loaders"] = tuple(loaders)

        view = dict(grouped["view"].get("", {}))
        metadata = self.settings(MetadataSettings, view)
        extra = tuple(grouped["meta"].get("", {}).items())
        config["metadata"] = self.checked(
            lambda: MetadataSettings(**{**_field_values(metadata), "extra": extra}), "metadata"
        ) or metadata

        extractors = []
        for extractor_name in dict.fromkeys(extractor_names):
            extractor = self.component(
                _extractors, extractor_name, grouped["extractor"].pop(extractor_name, {}), "extractor"
            )
            if extractor is not None:
                extractors.append(extractor)
        config["extractors"] = tuple(extractors)

        posts = []
        for label, post_name in zip(_labels(post_names), post_names, strict=True):
            post = self.component(
                _postprocessors, post_name, grouped["postprocessor"].pop(label, {}), "postprocessor"
            )
            if post is not None:
                posts.append(post)
        config["postprocessors"] = tuple(posts)

        for owner in grouped["extractor"]:
            self.problem(f"extractor {owner!r} has settings but is not in extractors=")
        for owner in grouped["postprocessor"]:
            self.problem(f"postprocessor {owner!r} has settings but is not in postprocessors=")

        config["retrieval"] = self.settings(RetrievalSettings, grouped["retrieval"].get("", {}))
        return PipelineConfig(**config)

    def checked(self, build: Callable[[], Any], where: str) -> Any:
        try:
            return build()
        except ConfigError as exc:
            self.problem(str(exc))
            return None

    def component(
        self, registry: Callable[[], Registry], name: str, params: dict[str, str], kind: str
    ) -> Configurable | None:
        try:
            cls = registry().get_class(name)
        except ConfigError as exc:
            self.problem(str(exc))
            return None
        return self.settings(cls, params)

    def settings(self, cls: type[Configurable], params: dict[str, str]) -> Any:
        """Build ``cls`` from ``params``; leniently, keep the largest set of values that validates."""
        if not self.lenient:
            return cls.from_params(params)
        try:
            return cls.from_params(params)
        except ConfigError:
            pass
        # Accept values one at a time until nothing more fits: a value that fails only
        # together with a default (chunk_size=100 under the default overlap 200) gets
        # in once the value it depends on (chunk_overlap=50) is accepted.
        accepted: dict[str, str] = {}
        pending = dict(params)
        errors: dict[str, str] = {}
        progress = True
        while pending and progress:
            progress = False
            for key, value in list(pending.items()):
                try:
                    cls.from_params({**accepted, key: value})
                except ConfigError as exc:
                    errors[key] = str(exc)
                    continue
                accepted[key] = value
                del pending[key]
                progress = True
        for key in pending:
            self.warnings.append(errors[key])
        return cls.from_params(accepted)


def _last(value: str | Sequence[str]) -> str:
    if isinstance(value, str):
        return value
    return str(value[-1]) if len(value) else ""


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def _route(key: str) -> tuple[str | None, str, str]:
    """Which section a URL key belongs to: ``(section, owner, parameter)``."""
    for prefix, section, owned in (
        (_PREFIX_LOADER, "loader", True),
        (_PREFIX_EXTRACTOR, "extractor", True),
        (_PREFIX_POSTPROCESSOR, "postprocessor", True),
        (_PREFIX_META, "meta", False),
        (_PREFIX_VIEW, "view", False),
        (_PREFIX_RETRIEVAL, "retrieval", False),
    ):
        if key.startswith(prefix):
            rest = key[len(prefix) :]
            if not owned:
                return (section, "", rest) if rest else (None, "", "")
            owner, dot, name = rest.partition(".")
            return (section, owner, name) if owner and dot and name else (None, "", "")
    if "." in key or not key:
        return None, "", ""
    return "splitter", "", key


# The pages and the CLI reach these through this module too.
from core.documents import apply_metadata_settings, load_documents, run_split  # noqa: E402

__all__ = [
    "DEFAULT_SPLITTER",
    "MetadataSettings",
    "PipelineConfig",
    "RetrievalSettings",
    "apply_metadata_settings",
    "load_documents",
    "run_split",
]
