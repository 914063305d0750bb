"""Declared parameters: each component states its parameters once, as dataclass fields.

A component (loader, splitter, extractor, postprocessor) is a frozen dataclass
subclassing :class:`Configurable`. Each field is made with :func:`param`, which
records the default, bounds, choices and one line of help. Everything else is
derived from that one declaration: the app's widgets, the CLI's ``--set`` options,
JSON configs, the ``--format json`` listings, and validation.

How a value is written as text (one escape rule, lists) is :mod:`core.params.typed_text`; the check that a
template is literal text and plain fields is :mod:`core.params.templates`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self

from core.errors import ConfigError
from core.params.typed_text import NONE_WORDS, TYPED_TEXT_RULE, TypedText, parse_list, read_typed

_META_KEY = "chunkscope_param"


# Initialisms a name may hold, written as people write them (``ocr_language`` -> ``OCR language``).
INITIALISMS = frozenset({"pdf", "csv", "html", "ocr", "json", "llm", "url", "xml", "docx", "pptx", "xlsx", "id", "bm25", "api"})


def readable_name(name: str) -> str:
    """A parameter's or component's name as a label: ``chunk_overlap`` -> ``Chunk overlap``, ``pdf`` -> ``PDF``."""
    words = [word.upper() if word.lower() in INITIALISMS else word for word in name.replace("_", " ").split()]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class ParamSpec:
    """What a component declares about one parameter."""

    name: str
    kind: str  # int | float | bool | str | choice | int_list | str_list
    default: Any
    help: str
    ge: float | None = None
    le: float | None = None
    choices: tuple[str, ...] | None = None
    optional: bool = False  # None is an accepted value ("not set")
    advanced: bool = False  # shown folded away in the app
    # A function is accepted too (a tokenizer's size function): from Python only, so listings leave it out.
    accepts_function: bool = False
    # A regular expression the component compiles: "always", or the name of the bool parameter that makes it
    # one (``is_separator_regex``); checked by core.runtime.regex_check wherever the value comes from.
    regex: str | None = None
    # What leaving it unset means, in a few words ("no limit"): unset is None for an optional parameter, else 0.
    # The help says it too; the app writes it under a field left unset, where a bare 0 or an empty box says nothing.
    unset: str | None = None

    @property
    def unset_value(self) -> Any:
        return None if self.optional else 0

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        del data["accepts_function"]
        del data["unset"]  # the listing's help already says it
        if isinstance(self.default, tuple):
            data["default"] = list(self.default)
        if self.choices is not None:
            data["choices"] = list(self.choices)
        return data

    def coerce(self, value: Any, owner: str = "") -> Any:
        """Turn a raw value (a CLI/URL string or a JSON value) into this parameter's type."""
        where = f"{owner}: " if owner else ""
        if self.accepts_function and callable(value):
            return value
        if value is None or (self.optional and isinstance(value, str) and value.strip().lower() in NONE_WORDS):
            if self.optional:
                return None
            raise ConfigError(f"{where}{self.name} needs a value")
        coerce_kind = _COERCE_BY_KIND.get(self.kind)
        if coerce_kind is not None:
            try:
                return coerce_kind(self, value)
            except (TypeError, ValueError):
                pass
        raise ConfigError(f"{where}{self.name} must be {_KIND_WORDS[self.kind]}, got {value!r}")


# -- one coercion per kind: each raises ValueError or TypeError for a value its kind does not take -------------------


def _coerce_bool(spec: ParamSpec, value: Any) -> bool:
    return _to_bool(value)


def _coerce_int(spec: ParamSpec, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, float) and not value.is_integer():
        raise ValueError
    return int(value) if not isinstance(value, str) else int(value.strip())


def _coerce_float(spec: ParamSpec, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError
    return number


def _coerce_str(spec: ParamSpec, value: Any) -> str:
    if spec.kind == "str" and isinstance(value, TypedText):
        return read_typed(value)
    return str(value)


def _coerce_list(spec: ParamSpec, value: Any) -> tuple[Any, ...] | None:
    items = parse_list(value)
    # Comma text naming no item leaves an optional list unset, as an empty box does.
    if spec.optional and not items and isinstance(value, str) and not value.strip().startswith("["):
        return None
    if spec.kind == "int_list":
        return tuple(int(str(item).strip()) for item in items)
    return tuple(str(item) for item in items)


_COERCE_BY_KIND: dict[str, Callable[[ParamSpec, Any], Any]] = {
    "bool": _coerce_bool,
    "int": _coerce_int,
    "float": _coerce_float,
    "str": _coerce_str,
    "choice": _coerce_str,
    "int_list": _coerce_list,
    "str_list": _coerce_list,
}


_KIND_WORDS = {
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "str": "text",
    "choice": "one of the listed choices",
    "int_list": "a comma-separated list of whole numbers",
    "str_list": "a comma-separated list",
}


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(value)


def param(
    default: Any,
    help: str,
    *,
    ge: float | None = None,
    le: float | None = None,
    choices: tuple[str, ...] | None = None,
    advanced: bool = False,
    regex: bool | str = False,
    unset: str | None = None,
) -> Any:
    """Declare a parameter: its default, bounds and one line of help.

    ``unset`` says in a few words what the unset value (None, or 0 for a number that is not optional) means.

    ``regex=True`` declares text the component compiles as a regular expression;
    ``regex="is_separator_regex"`` declares it one only while that bool parameter
    is true. Every such value is checked on construction (bounded length, no shapes
    that backtrack exponentially), so a form, ``--set``, a JSON config, a share
    link and a batch all refuse the same pattern with the same sentence.
    """
    meta = {
        "help": help,
        "ge": ge,
        "le": le,
        "choices": choices,
        "advanced": advanced,
        "regex": "always" if regex is True else (regex or None),
        "unset": unset,
    }
    return field(default=default, metadata={_META_KEY: meta})


@dataclass(frozen=True)
class Configurable:
    """Base of every component with declared parameters.

    Subclasses are frozen dataclasses; their ``name`` is the registry key and
    ``summary`` a one-line description. Bounds and choices are checked on
    construction; cross-field rules go in :meth:`validate`.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for spec in self.params():
            value = getattr(self, spec.name)
            if value is None and spec.optional:
                continue
            check_bounds(self.name or type(self).__name__, spec, value)
        self._check_regexes()
        self.validate()

    def _check_regexes(self) -> None:
        """Refuse a declared regex (see :func:`param`) that is long or can backtrack exponentially."""
        for spec, pattern in self.regex_values():
            from core.runtime.regex_check import check_bounded_regex  # core.splitters imports this module

            # An entry of a list is named in the singular: "separators" holds separators, each "separator".
            label = spec.name[:-1] if spec.kind == "str_list" and spec.name.endswith("s") else spec.name
            check_bounded_regex(pattern, f"{self.name or type(self).__name__}: {label}")

    def regex_values(self) -> list[tuple[ParamSpec, str]]:
        """Every value this component will compile as a regular expression, with its parameter."""
        found = []
        for spec in self.params():
            if spec.regex is None or (spec.regex != "always" and not getattr(self, spec.regex)):
                continue
            value = getattr(self, spec.name)
            if value is None:
                continue
            found.extend((spec, pattern) for pattern in (value if isinstance(value, tuple) else (value,)))
        return found

    def validate(self) -> None:
        """Cross-field rules (e.g. overlap below size); raise ConfigError."""

    @classmethod
    def title(cls) -> str:
        """How a person names it in a picker or a caption: ``sentence_window`` -> ``Sentence window``."""
        return readable_name(cls.name)

    @classmethod
    def params(cls) -> list[ParamSpec]:
        return _specs(cls)

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None) -> Self:
        """Build from raw values (strings from a CLI or URL, or JSON values), coercing and validating."""
        params = dict(params or {})
        specs = {spec.name: spec for spec in cls.params()}
        unknown = sorted(set(params) - set(specs))
        if unknown:
            known = ", ".join(specs) or "none"
            raise ConfigError(f"{cls.name}: unknown parameter {unknown[0]!r} (known: {known})")
        values = {key: specs[key].coerce(value, cls.name) for key, value in params.items()}
        try:
            return cls(**values)
        except TypeError as exc:  # pragma: no cover - guarded by the unknown check above
            raise ConfigError(f"{cls.name}: {exc}") from exc

    def to_params(self, *, only_changed: bool = False) -> dict[str, Any]:
        """The parameter values as JSON-ready data."""
        out: dict[str, Any] = {}
        for spec in self.params():
            value = getattr(self, spec.name)
            if only_changed and value == spec.default:
                continue
            out[spec.name] = list(value) if isinstance(value, tuple) else value
        return out


def check_bounds(owner: str, spec: ParamSpec, value: Any) -> None:
    if spec.accepts_function and callable(value):
        return
    if spec.kind in ("int", "float"):
        if spec.ge is not None and value < spec.ge:
            raise ConfigError(f"{owner}: {spec.name} must be at least {_fmt(spec.ge)}, got {value}")
        if spec.le is not None and value > spec.le:
            raise ConfigError(f"{owner}: {spec.name} must be at most {_fmt(spec.le)}, got {value}")
    elif spec.kind == "int_list":
        for item in value:
            if spec.ge is not None and item < spec.ge:
                raise ConfigError(f"{owner}: every {spec.name} entry must be at least {_fmt(spec.ge)}, got {item}")
            if spec.le is not None and item > spec.le:
                raise ConfigError(f"{owner}: every {spec.name} entry must be at most {_fmt(spec.le)}, got {item}")
    elif spec.kind == "choice" and spec.choices is not None and value not in spec.choices:
        raise ConfigError(f"{owner}: {spec.name} must be one of {', '.join(spec.choices)}, got {value!r}")


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


_SPEC_CACHE: dict[type, list[ParamSpec]] = {}


def _specs(cls: type) -> list[ParamSpec]:
    cached = _SPEC_CACHE.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls)
    specs = []
    for f in dataclasses.fields(cls):
        meta = f.metadata.get(_META_KEY)
        if meta is None:
            continue
        kind, optional, literal_choices = _kind_of(hints[f.name])
        accepts_function = any(typing.get_origin(arg) is Callable for arg in typing.get_args(hints[f.name]))
        choices = meta["choices"] or literal_choices
        if choices is not None and kind == "str":
            kind = "choice"
        help_text = meta["help"]
        if kind in ("str", "str_list") and choices is None:
            help_text = f"{help_text} {TYPED_TEXT_RULE}"  # text a person types: the one escape rule, said once
        specs.append(
            ParamSpec(
                name=f.name,
                kind=kind,
                default=f.default,
                help=help_text,
                ge=meta["ge"],
                le=meta["le"],
                choices=tuple(choices) if choices is not None else None,
                optional=optional,
                advanced=meta["advanced"],
                accepts_function=accepts_function,
                regex=meta["regex"],
                unset=meta.get("unset"),
            )
        )
    _check_regex_declarations(cls, specs)
    _SPEC_CACHE[cls] = specs
    return specs


def _check_regex_declarations(cls: type, specs: list[ParamSpec]) -> None:
    """A regex parameter holds text, and the flag that turns it on is one of the component's bool parameters."""
    kinds = {spec.name: spec.kind for spec in specs}
    for spec in specs:
        if spec.regex is None:
            continue
        if spec.kind not in ("str", "str_list"):
            raise TypeError(f"{cls.__name__}.{spec.name}: regex=... needs a str or tuple[str, ...] parameter")
        if spec.regex != "always" and kinds.get(spec.regex) != "bool":
            raise TypeError(f"{cls.__name__}.{spec.name}: regex={spec.regex!r} names no bool parameter")


def _kind_of(annotation: Any) -> tuple[str, bool, tuple[str, ...] | None]:
    optional = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        annotation = args[0]
        origin = typing.get_origin(annotation)
    if origin is Literal:
        return "choice", optional, tuple(typing.get_args(annotation))
    if origin is tuple:
        item = typing.get_args(annotation)[0]
        return ("int_list" if item is int else "str_list"), optional, None
    simple = {bool: "bool", int: "int", float: "float", str: "str"}
    if annotation in simple:
        return simple[annotation], optional, None
    raise TypeError(f"unsupported parameter type {annotation!r}")
