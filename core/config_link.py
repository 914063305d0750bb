"""The URL form of a PipelineConfig: the query parameters of a shareable link.

The form is compact and readable; only values that differ from the defaults
are written::

    splitter=sentence&chunk_size=512&chunk_overlap=50      splitter and its params
    loader.pdf.extraction_mode=layout                       loader options
    meta.author=Alice                                       extra document metadata
    view.metadata_template={key}=>{value}                   metadata view settings
    extractors=title,keywords&extractor.keywords.top_k=8    extractors and params
    postprocessors=similarity_cutoff,top_n                  postprocessors (ordered)
    postprocessor.similarity_cutoff.similarity_cutoff=0.4   ... and their params
    retrieval.top_k=8&retrieval.mode=hybrid                 retrieval settings
    llm.base_url=http://localhost:11434/v1&llm.model=llama3.2   the LLM connection (the key's variable name, never the key)

A postprocessor used twice gets ``~2`` after its name for the second use
(``postprocessor.top_n~2.top_n=3``).

:meth:`core.config.PipelineConfig.to_query_params` and ``from_query_params``
are the way in; this module works on a config's parts, so it needs no config class.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from core.config_parts import (
    DEFAULT_SPLITTER,
    MetadataSettings,
    RetrievalSettings,
    extractor_registry,
    loader_registry,
    postprocessor_registry,
    splitter_registry,
)
from core.errors import ConfigError
from core.llm import LLMConnection
from core.params import Configurable
from core.params.typed_text import TypedText, format_list, write_typed
from core.registry import Registry

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
_PREFIX_LLM = "llm."
_REPEAT_MARK = "~"


def to_query_params(
    *,
    splitter: Configurable,
    loaders: Sequence[Configurable],
    metadata: MetadataSettings,
    extractors: Sequence[Configurable],
    postprocessors: Sequence[Configurable],
    retrieval: RetrievalSettings,
    llm: LLMConnection | None = None,
) -> dict[str, str]:
    """A config's parts as URL query parameters; only values that differ from the defaults."""
    out: dict[str, str] = {_SPLITTER_KEY: splitter.name}
    out.update(_encode_params("", splitter))
    for loader in loaders:
        out.update(_encode_params(f"{_PREFIX_LOADER}{loader.name}.", loader))
    for key, value in metadata.extra:
        out[f"{_PREFIX_META}{key}"] = _encode_value(value)
    out.update(_encode_params(_PREFIX_VIEW, metadata))
    if extractors:
        out[_EXTRACTORS_KEY] = ",".join(extractor.name for extractor in extractors)
        for extractor in extractors:
            out.update(_encode_params(f"{_PREFIX_EXTRACTOR}{extractor.name}.", extractor))
    if postprocessors:
        out[_POSTPROCESSORS_KEY] = ",".join(post.name for post in postprocessors)
        for label, post in zip(_labels([post.name for post in postprocessors]), postprocessors, strict=True):
            out.update(_encode_params(f"{_PREFIX_POSTPROCESSOR}{label}.", post))
    out.update(_encode_params(_PREFIX_RETRIEVAL, retrieval))
    if llm is not None:
        out.update(_encode_params(_PREFIX_LLM, llm))
    return out


def read_query_params(
    params: Mapping[str, str | Sequence[str]], *, lenient: bool, ignore: Collection[str] = ()
) -> tuple[dict[str, Any], list[str]]:
    """:func:`to_query_params`' form read back: a config's parts by field name, and the warnings.

    Strict: any unknown or invalid value raises ConfigError. Lenient: invalid
    values are dropped, one warning each. ``ignore`` names keys that belong to someone else.
    """
    warnings: list[str] = []
    parts = _QueryReader(params, lenient, set(ignore), warnings).read()
    return parts, warnings


def _encode_params(prefix: str, component: Configurable) -> dict[str, str]:
    """A component's changed parameters; text typed as a person types it (core.params.typed_text.write_typed), read back
    by the same rule as the app's boxes and ``--set``."""
    texts = {spec.name for spec in component.params() if spec.kind == "str"}
    return {
        f"{prefix}{key}": write_typed(value) if key in texts and isinstance(value, str) else _encode_value(value)
        for key, value in component.to_params(only_changed=True).items()
    }


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
        # Each value is typed text: a text parameter reads its escapes (core.params.typed_text.read_typed).
        self.values = {key: TypedText(_last(value)) for key, value in params.items() if key not in ignore}
        self.lenient = lenient
        self.warnings = warnings

    def problem(self, message: str) -> None:
        if not self.lenient:
            raise ConfigError(message)
        self.warnings.append(message)

    def read(self) -> dict[str, Any]:
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
            "llm": {},
        }
        for key, value in values.items():
            section, owner, name = _route(key)
            if section is None:
                self.problem(f"{key!r} is not a ChunkScope setting")
                continue
            grouped[section].setdefault(owner, {})[name] = value

        parts: dict[str, Any] = {}
        splitter = self.component(splitter_registry, splitter_name, grouped["splitter"].get("", {}), "splitter")
        if splitter is None and splitter_name != DEFAULT_SPLITTER:
            splitter = self.component(splitter_registry, DEFAULT_SPLITTER, {}, "splitter")
        if splitter is not None:
            parts["splitter"] = splitter

        loaders = []
        for loader_name, options in grouped["loader"].items():
            loader = self.component(loader_registry, loader_name, options, "loader")
            if loader is not None:
                loaders.append(loader)
        parts["loaders"] = tuple(loaders)

        view = dict(grouped["view"].get("", {}))
        metadata = self.settings(MetadataSettings, view)
        extra = tuple((key, str(value)) for key, value in grouped["meta"].get("", {}).items())
        parts["metadata"] = self.checked(lambda: replace(metadata, extra=extra), "metadata") or metadata

        extractors = []
        for extractor_name in dict.fromkeys(extractor_names):
            extractor = self.component(
                extractor_registry, extractor_name, grouped["extractor"].pop(extractor_name, {}), "extractor"
            )
            if extractor is not None:
                extractors.append(extractor)
        parts["extractors"] = tuple(extractors)

        posts = []
        for label, post_name in zip(_labels(post_names), post_names, strict=True):
            post = self.component(
                postprocessor_registry, post_name, grouped["postprocessor"].pop(label, {}), "postprocessor"
            )
            if post is not None:
                posts.append(post)
        parts["postprocessors"] = tuple(posts)

        for owner in grouped["extractor"]:
            self.problem(f"extractor {owner!r} has settings but is not in extractors=")
        for owner in grouped["postprocessor"]:
            self.problem(f"postprocessor {owner!r} has settings but is not in postprocessors=")

        parts["retrieval"] = self.settings(RetrievalSettings, grouped["retrieval"].get("", {}))
        parts["llm"] = self.settings(LLMConnection, grouped["llm"].get("", {}))
        return parts

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
        (_PREFIX_LLM, "llm", False),
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
