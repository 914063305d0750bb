"""A spreadsheet cell's value as its number format displays it: "6.26", "12.3%", "1,234.50", "255:10:10".

A workbook stores numbers, not what a reader sees: 6.255519999999999 shown as
"6.26", 0.1234 as "12.3%", a duration of 10 days and 15 hours as "255:10:10".
This is the common subset of Excel's number formats, enough for what workbooks
use: sections (positive;negative;zero;text) and conditions (``[>=100]``),
digit placeholders (``0``, ``#``, ``?``) with literals between them, decimals,
thousands separators and scaling (``#,##0,``), percentages, scientific
notation, simple fractions, quoted and escaped literals, currency tags
(``[$€-407]``), colours (ignored), and dates and times with elapsed durations
(``[h]:mm:ss``) and 12-hour clocks. "General" is the value with up to 15
significant digits, as Excel keeps it, never a float's binary tail.

The locale's own date and date-time formats (built-in formats 14 and 22,
which openpyxl names ``mm-dd-yy`` and ``m/d/yy h:mm``) show as each reader's
computer shows them; here they are ISO dates, one reading for every reader.
A format this does not understand gives the General reading: never an error.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

# What openpyxl names the locale's short date and date-time (built-in formats 14 and 22), shown as ISO.
_LOCALE_DATE = {"mm-dd-yy": "yyyy-mm-dd", "m/d/yy h:mm": "yyyy-mm-dd hh:mm"}
_EXCEL_EPOCH = dt.datetime(1899, 12, 30)
_CONDITION = re.compile(r"\[(<=|>=|<>|<|>|=)(-?\d+(?:\.\d+)?)\]")
_DATE_LETTERS = frozenset("ymdhsYMDHS")
_ELAPSED = re.compile(r"\[(h+|m+|s+)\]", re.IGNORECASE)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")  # fmt: skip
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def general(value: object) -> str:
    """A value in the General format: numbers with up to 15 significant digits, dates as ISO dates."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        text = f"{value:.15g}"
        if "e" in text:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}E{exponent[0]}{int(exponent[1:]):02d}"
        return text
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _date_section(value, "[h]:mm:ss")
    return str(value)


def display(value: object, number_format: str | None) -> str:
    """``value`` as ``number_format`` shows it (General for a format this cannot read)."""
    fmt = (number_format or "").strip()
    fmt = _LOCALE_DATE.get(fmt, fmt) if isinstance(value, dt.date | dt.time) else fmt
    if value is None or isinstance(value, bool) or not fmt or fmt.lower() == "general" or fmt in _LOCALE_DATE:
        return general(value)
    try:
        return _display(value, fmt)
    except (ValueError, ArithmeticError, IndexError, OverflowError):
        return general(value)


def _display(value: object, fmt: str) -> str:
    sections = _sections(fmt)
    if isinstance(value, str):
        text_section = sections[3] if len(sections) > 3 else next((s for s in sections if "@" in _bare(s)), None)
        return _text_section(value, text_section) if text_section is not None else value
    if isinstance(value, dt.datetime | dt.date | dt.time | dt.timedelta):
        section = sections[0]
        return _date_section(value, section) if _is_date(section) else general(value)
    if not isinstance(value, int | float):
        return str(value)
    section, signed = _choose(float(value), sections)
    if _is_date(section):
        return general(value)  # a number openpyxl did not take for a date: shown plainly
    shown = _number_section(abs(value) if not signed else value, section)
    return f"-{shown}" if signed is False and value < 0 and _has_digits(shown) else shown


def _sections(fmt: str) -> list[str]:
    """The format's sections, split at ``;`` outside quotes, escapes and brackets."""
    sections, current, quoted, bracket, escaped = [], [], False, False, False
    for char in fmt:
        if escaped:
            escaped = False
        elif char == "\\" and not quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "[" and not quoted:
            bracket = True
        elif char == "]" and not quoted:
            bracket = False
        elif char == ";" and not quoted and not bracket:
            sections.append("".join(current))
            current = []
            continue
        current.append(char)
    sections.append("".join(current))
    return sections


def _bare(section: str) -> str:
    """A section without its quoted literals, escaped characters and bracketed tags (elapsed times kept)."""
    section = re.sub(r'"[^"]*"|\\.|_.|\*.', "", section)
    return re.sub(r"\[(?![hms]+\])[^\]]*\]", "", section, flags=re.IGNORECASE)


def _is_date(section: str) -> bool:
    bare = _bare(section)
    if re.search(r"general", bare, re.IGNORECASE):
        return False
    return any(char in _DATE_LETTERS for char in bare)


def _choose(value: float, sections: list[str]) -> tuple[str, bool | None]:
    """The section for ``value`` and how its sign is shown: True, the section shows the signed value (it has a
    condition); None, the section is the negative one (its own marks show the sign); False, a minus is added."""
    conditions = [_CONDITION.search(section) for section in sections[:3]]
    if any(conditions):
        for section, condition in zip(sections[:3], conditions, strict=False):
            if condition is None or _holds(value, condition.group(1), float(condition.group(2))):
                return section, True if condition is not None else False
        return sections[min(len(sections), 3) - 1], False
    if value < 0 and len(sections) > 1:
        return sections[1], None
    if value == 0 and len(sections) > 2:
        return sections[2], None
    return sections[0], False


def _holds(value: float, operator: str, bound: float) -> bool:
    return {
        "<": value < bound,
        "<=": value <= bound,
        ">": value > bound,
        ">=": value >= bound,
        "=": value == bound,
        "<>": value != bound,
    }[operator]


def _tokens(section: str) -> list[tuple[str, str]]:
    """A section as (kind, text) tokens: "lit" (shown as it is), "tag" (a bracketed tag), or one format character."""
    tokens: list[tuple[str, str]] = []
    index = 0
    while index < len(section):
        char = section[index]
        if char == '"':
            end = section.find('"', index + 1)
            end = len(section) if end < 0 else end
            tokens.append(("lit", section[index + 1 : end]))
            index = end + 1
        elif char == "\\" and index + 1 < len(section):
            tokens.append(("lit", section[index + 1]))
            index += 2
        elif char == "_" and index + 1 < len(section):
            tokens.append(("lit", " "))  # the width of the next character: a space
            index += 2
        elif char == "*" and index + 1 < len(section):
            index += 2  # a fill to the cell's width: nothing in text
        elif char == "[":
            end = section.find("]", index)
            end = len(section) if end < 0 else end
            tokens.append(("tag", section[index + 1 : end]))
            index = end + 1
        elif section[index : index + 5].upper() == "AM/PM" or section[index : index + 3].upper() == "A/P":
            size = 5 if section[index : index + 5].upper() == "AM/PM" else 3
            tokens.append(("ampm", section[index : index + size]))
            index += size
        elif section[index : index + 7].lower() == "general":
            tokens.append(("general", section[index : index + 7]))
            index += 7
        else:
            tokens.append((char, char))
            index += 1
    return tokens


def _tag_text(tag: str) -> str:
    """What a bracketed tag shows: a currency's symbol (``[$€-407]``); colours and conditions show nothing."""
    if tag.startswith("$"):
        return tag[1:].split("-", 1)[0]
    return ""


def _text_section(text: str, section: str) -> str:
    return "".join(
        text if kind == "@" else _tag_text(token) if kind == "tag" else token for kind, token in _tokens(section)
    )


def _has_digits(text: str) -> bool:
    return any(char.isdigit() and char != "0" for char in text)


# -- numbers -----------------------------------------------------------------------------


def _number_section(value: float, section: str) -> str:
    tokens = _tokens(section)
    kinds = [kind for kind, _ in tokens]
    if "general" in kinds:
        return "".join(
            general(value) if kind == "general" else token if kind == "lit" else _tag_text(token)
            if kind == "tag" else token for kind, token in tokens
        )  # fmt: skip
    if "/" in kinds and any(kind in "0#?" for kind in kinds):
        fraction = _fraction(value, tokens)
        if fraction is not None:
            return fraction
    percent = kinds.count("%")
    value *= 100**percent
    exponent_at = next((i for i, (kind, _) in enumerate(tokens) if kind in "Ee" and _is_exponent(tokens, i)), None)
    if exponent_at is not None:
        return _scientific(value, tokens, exponent_at)
    return _fixed(value, tokens)


def _placeholders(tokens: list[tuple[str, str]]) -> tuple[list[int], list[int], bool, int]:
    """Indexes of the integer and decimal digit placeholders, whether thousands are grouped (a comma between
    integer placeholders), and how many times the value is divided by 1000: the commas right after the last
    digit placeholder, integer or decimal ("#,##0,," and "0.0,," both show millions)."""
    point = next((i for i, (kind, _) in enumerate(tokens) if kind == "."), len(tokens))
    integer = [i for i, (kind, _) in enumerate(tokens[:point]) if kind in "0#?"]
    decimal = [i for i, (kind, _) in enumerate(tokens) if kind in "0#?" and i > point]
    grouped = bool(integer) and any(tokens[i][0] == "," for i in range(integer[0], integer[-1]))
    scale = 0
    for kind, _ in tokens[max(integer + decimal, default=len(tokens)) + 1 :]:
        if kind != ",":
            break
        scale += 1
    return integer, decimal, grouped, scale


def _fixed(value: float, tokens: list[tuple[str, str]]) -> str:
    integer, decimal, grouped, scale = _placeholders(tokens)
    value /= 1000**scale
    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-len(decimal)), rounding=ROUND_HALF_UP)
    whole, _, fraction = f"{abs(rounded):f}".partition(".")
    sign = "-" if rounded < 0 else ""
    digits = whole.lstrip("0")
    decimals = _decimal_digits(tokens, decimal, fraction)
    shown: dict[int, str] = {i: d for i, d in zip(decimal, decimals, strict=True)}
    if integer:
        shown.update(_integer_digits(tokens, integer, digits, sign, grouped))
    elif sign and (digits or any(d.strip() for d in decimals)):
        shown[decimal[0] if decimal else 0] = sign + shown.get(decimal[0] if decimal else 0, "")
    return _render(tokens, shown)


def _decimal_digits(tokens: list[tuple[str, str]], decimal: list[int], fraction: str) -> list[str]:
    """The digits shown in the decimal placeholders, left to right; a trailing zero is dropped by "#" and
    shown as a space by "?"."""
    decimals = list(fraction.ljust(len(decimal), "0"))
    for position in range(len(decimal) - 1, -1, -1):
        kind = tokens[decimal[position]][0]
        if decimals[position] != "0" or kind == "0":
            break
        decimals[position] = "" if kind == "#" else " "
    return decimals


def _integer_digits(
    tokens: list[tuple[str, str]], integer: list[int], digits: str, sign: str, grouped: bool
) -> dict[int, str]:
    """What each integer placeholder shows: ``digits`` padded to the format's zeros, the sign in front."""
    zeros = len(integer) - next((n for n, i in enumerate(integer) if tokens[i][0] == "0"), len(integer))
    digits = digits.rjust(zeros, "0")
    shown: dict[int, str] = {}
    if grouped:
        shown.update({i: "" for i in integer})
        shown[integer[0]] = sign + (f"{int(digits):,}" if digits else "")
        return shown
    # Right to left into the placeholders; digits beyond them go to the first one.
    for n, index in enumerate(reversed(integer)):
        position = len(digits) - 1 - n
        kind = tokens[index][0]
        shown[index] = digits[position] if position >= 0 else (" " if kind == "?" else "")
    if len(digits) > len(integer):
        shown[integer[0]] = digits[: len(digits) - len(integer) + 1]
    shown[integer[0]] = sign + shown[integer[0]]
    return shown


def _render(tokens: list[tuple[str, str]], shown: dict[int, str]) -> str:
    out = []
    for index, (kind, token) in enumerate(tokens):
        if index in shown:
            out.append(shown[index])
        elif kind == "tag":
            out.append(_tag_text(token))
        elif kind in ("ampm", "lit", "%", "."):
            out.append(token)
        elif kind in (",", "0", "#", "?"):
            out.append("")  # a separator placed with the digits, or a placeholder left empty
        else:
            out.append(token)
    return "".join(out)


def _is_exponent(tokens: list[tuple[str, str]], index: int) -> bool:
    return index + 1 < len(tokens) and tokens[index + 1][0] in "+-"


def _scientific(value: float, tokens: list[tuple[str, str]], at: int) -> str:
    mantissa_tokens, exponent_tokens = tokens[:at], tokens[at + 2 :]
    integer, decimal, _, _ = _placeholders(mantissa_tokens)
    exponent_digits = sum(1 for kind, _ in exponent_tokens if kind in "0#?")
    step = max(len(integer), 1) if len(integer) > 1 else 1  # "##0.0E+0" writes exponents in steps of 3
    exponent = 0
    if value:
        exponent = int(Decimal(repr(abs(value))).adjusted())
        exponent -= exponent % step
    mantissa = value / 10**exponent
    rounded = Decimal(repr(mantissa)).quantize(Decimal(1).scaleb(-len(decimal)), rounding=ROUND_HALF_UP)
    if abs(rounded) >= 10**step:  # 9.99 rounded up to 10.0
        exponent += step
        rounded = Decimal(repr(value / 10**exponent)).quantize(Decimal(1).scaleb(-len(decimal)), ROUND_HALF_UP)
    sign = "+" if exponent >= 0 and tokens[at + 1][0] == "+" else "-" if exponent < 0 else ""
    exponent_text = str(abs(exponent)).rjust(exponent_digits, "0")
    return _fixed(float(rounded), mantissa_tokens) + tokens[at][1] + sign + exponent_text


def _fraction(value: float, tokens: list[tuple[str, str]]) -> str | None:
    """``# ?/?``-like formats: a whole part (when the format has one), then numerator/denominator."""
    slash = next(i for i, (kind, _) in enumerate(tokens) if kind == "/")
    numerator_at = [i for i, (kind, _) in enumerate(tokens[:slash]) if kind in "0#?"]
    if not numerator_at:
        return None
    # A whole part: placeholders before a literal space that precedes the numerator's placeholders.
    has_whole = any(after - before > 1 for before, after in zip(numerator_at, numerator_at[1:], strict=False))
    negative, value = value < 0, abs(value)
    whole = int(value) if has_whole else 0
    numerator, below = _numerator_and_denominator(value - whole, tokens[slash + 1 :])
    if numerator == below and has_whole:
        whole, numerator = whole + 1, 0
    sign = "-" if negative else ""
    if has_whole:
        head = sign + (str(whole) if whole or not numerator else "")
        return f"{head} {numerator}/{below}".strip() if numerator else head or "0"
    return f"{sign}{numerator}/{below}"


def _numerator_and_denominator(rest: float, denominator_tokens: list[tuple[str, str]]) -> tuple[int, int]:
    """``rest`` (below 1) as a fraction: over the format's fixed denominator (``?/8``), else the closest one
    with as many digits as the format's denominator placeholders (``??``: at most 99)."""
    denominator = "".join(token for kind, token in denominator_tokens if kind.isdigit() or kind in "#?")
    if denominator[:1] in tuple("123456789") and denominator.isdigit():
        below = int(denominator)
        return int(Decimal(repr(rest * below)).quantize(Decimal(1), ROUND_HALF_UP)), below
    approx = Fraction(rest).limit_denominator(10 ** max(len(denominator), 1) - 1)
    return approx.numerator, approx.denominator


# -- dates, times and durations ------------------------------------------------------------


def _date_section(value: object, section: str) -> str:
    """A date, time or duration in a date section: ``yyyy-mm-dd``, ``h:mm AM/PM``, ``[h]:mm:ss``, ``mm:ss.0``."""
    negative = False
    if isinstance(value, dt.timedelta):
        negative = value < dt.timedelta(0)
        moment = _EXCEL_EPOCH + abs(value)
    elif isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime.combine(value, dt.time())
    else:
        assert isinstance(value, dt.time)
        moment = dt.datetime.combine(_EXCEL_EPOCH.date(), value)
    tokens = _date_tokens(section)
    decimals = max((len(token) - 1 for kind, token in tokens if kind == "fraction"), default=0)
    # Rounded to what is shown: 59.6 seconds shown without decimals is the next minute.
    moment = _round_time(moment, decimals)
    elapsed = (moment - _EXCEL_EPOCH).total_seconds()
    twelve = any(kind == "ampm" for kind, _ in tokens)
    out = []
    for kind, token in tokens:
        out.append(_date_part(kind, token, moment, elapsed, twelve))
    return ("-" if negative else "") + "".join(out)


def _round_time(moment: dt.datetime, decimals: int) -> dt.datetime:
    unit = 10 ** (6 - min(decimals, 6))
    micro = moment.microsecond
    rounded = (micro + unit // 2) // unit * unit
    return moment.replace(microsecond=0) + dt.timedelta(microseconds=rounded)


def _date_tokens(section: str) -> list[tuple[str, str]]:
    """A date section as (kind, text): year, month, minute, day, hour, second, elapsed, fraction, ampm, lit."""
    raw: list[tuple[str, str]] = []
    for kind, token in _tokens(section):
        last_kind, last = raw[-1] if raw else ("", "")
        continued = _continued_date_token(kind, token, last_kind, last)
        if continued is not None:
            raw[-1] = continued
        else:
            raw.append(_date_token(kind, token, last_kind, last))
    out: list[tuple[str, str]] = []
    for position, (kind, token) in enumerate(raw):
        out.append((_run_kind(token, out, raw[position + 1 :]), token) if kind == "run" else (kind, token))
    return out


def _continued_date_token(kind: str, token: str, last_kind: str, last: str) -> tuple[str, str] | None:
    """The last token grown by this one, when it continues it: a run of one letter ("yyyy"), a fraction's zeros."""
    if kind.lower() in "ymdhs" and last_kind == "run" and last[0].lower() == kind.lower():
        return ("run", last + token)
    if kind == "0" and last_kind == "fraction":
        return ("fraction", last + "0")
    return None


def _date_token(kind: str, token: str, last_kind: str, last: str) -> tuple[str, str]:
    """A token that starts anew: an elapsed time, a run of date letters, a fraction of seconds, AM/PM, a literal."""
    if kind == "tag":
        return ("elapsed", token.lower()) if _ELAPSED.fullmatch(f"[{token}]") else ("lit", _tag_text(token))
    if kind.lower() in "ymdhs":
        return ("run", token)
    if kind == "." and (last_kind == "run" and last[0].lower() == "s" or last_kind == "elapsed"):
        return ("fraction", ".")
    if kind == "ampm":
        return ("ampm", token)
    return ("lit", token)


_RUN_KINDS = {"y": "year", "d": "day", "h": "hour", "s": "second"}


def _run_kind(token: str, before: list[tuple[str, str]], after: list[tuple[str, str]]) -> str:
    """What a run of date letters shows, given the tokens named ``before`` it and the raw ones ``after`` it."""
    letter = token[0].lower()
    if letter != "m":
        return _RUN_KINDS[letter]
    # "m" is minutes right after an hour or right before seconds, else the month.
    previous = next((k for k, _ in reversed(before) if k in ("year", "month", "day", "hour", "second", "elapsed")), "")
    following = next((t[0].lower() for k, t in after if k in ("run", "elapsed")), "")
    return "minute" if previous in ("hour", "elapsed") or following == "s" else "month"


def _date_part(kind: str, token: str, moment: dt.datetime, elapsed: float, twelve: bool) -> str:
    size = len(token)
    if kind == "year":
        return f"{moment.year:04d}" if size > 2 else f"{moment.year % 100:02d}"
    if kind == "month":
        name = _MONTHS[moment.month - 1]
        return {1: str(moment.month), 2: f"{moment.month:02d}", 3: name[:3], 5: name[0]}.get(size, name)
    if kind == "day":
        name = _DAYS[moment.weekday()]
        return {1: str(moment.day), 2: f"{moment.day:02d}", 3: name[:3]}.get(size, name)
    if kind == "hour":
        hour = (moment.hour % 12 or 12) if twelve else moment.hour
        return f"{hour:0{min(size, 2)}d}"
    if kind == "minute":
        return f"{moment.minute:0{min(size, 2)}d}"
    if kind == "second":
        return f"{moment.second:0{min(size, 2)}d}"
    if kind == "elapsed":
        unit = {"h": 3600, "m": 60, "s": 1}[token[0]]
        return f"{int(elapsed // unit):0{len(token)}d}"
    if kind == "fraction":
        places = len(token) - 1
        return "." + f"{moment.microsecond:06d}"[:places] if places else "."
    if kind == "ampm":
        morning = moment.hour < 12
        if token.upper() == "AM/PM":
            return "AM" if morning else "PM"
        return token[0] if morning else token[2]
    return token
