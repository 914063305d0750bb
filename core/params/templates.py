"""Templates a person may edit (metadata and text templates, an extractor's prompts): literal text and plain
``{field}`` names only, each once, checked by parsing and never by rendering."""

from __future__ import annotations

from string import Formatter

from core.errors import ConfigError

# The longest template or separator accepted: a few lines of framing. With each field used
# at most once, this bounds what a rendering adds to the node's own text and metadata.
MAX_TEMPLATE_CHARS = 1_000


def check_length(owner: str, name: str, text: str, max_chars: int = MAX_TEMPLATE_CHARS) -> None:
    if len(text) > max_chars:
        raise ConfigError(
            f"{owner}: {name} is {len(text):,} characters long, more than the limit of {max_chars:,}"
        )


def check_template(
    owner: str,
    name: str,
    template: str,
    fields: tuple[str, ...],
    required: tuple[str, ...],
    max_chars: int = MAX_TEMPLATE_CHARS,
) -> None:
    """Refuse a template that is more than literal text and plain ``{field}`` names from ``fields``, each once.

    Checked by parsing, never by rendering: a format spec is code for str.format
    (``{content:>999999999}`` asks for a gigabyte), and so are conversions,
    attribute and index access; none of them has a use in a template.
    """
    check_length(owner, name, template, max_chars)
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
