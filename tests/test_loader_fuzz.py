"""Property: any bytes into any loader give documents with valid spans, or a LoadError, never another exception.

The default profile keeps this quick; ``HYPOTHESIS_PROFILE=fuzz`` (make fuzz) runs it long.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_loaders import check_spans

from core.errors import LoadError
from core.loaders import LOADERS

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Pieces of every format the loaders parse, so random input reaches their structure code, not just the decoder.
MARKUP = [
    "<p>", "</p>", "<h2>", "</h2>", "<ul><li>", "</li>", "<table>", "<tr>", "<td>", "<th>", "</table>",
    "<thead>", "</thead>", "<pre>", "</pre>", "<script>", "</script>", "<title>", "<br>", "<!--", "-->",
    "<![CDATA[", "<!DOCTYPE", "&amp;", "&#0;", "&#x110000;", "# ", "## ", "| a | b |", "|---|---|", "```",
    "~~~", "- ", "1. ", "> ", "    ", '"', "'", ",", ";", "\t", "|", "\n", "\r\n", "\r", "\n\n", " ", "x", "é", "\u2028",
    "<meta charset=utf-16>", "<meta charset=hex>", "<meta charset='cp1251'>",
]  # fmt: skip

markup_soup = st.lists(st.sampled_from(MARKUP) | st.text(max_size=8), max_size=60).map("".join)
text_bytes = st.one_of(
    markup_soup.map(lambda text: text.encode("utf-8", "surrogatepass")),
    markup_soup.map(lambda text: text.encode("utf-16", "surrogatepass")),
    st.text(max_size=300).map(lambda text: text.encode("utf-8", "surrogatepass")),
    # Not UTF-8: the declared-charset and charset-normalizer paths.
    markup_soup.map(lambda text: text.encode("cp1252", "replace") + b"\xe9\x93"),
)
any_bytes = st.binary(max_size=1500)

TWO_PAGE_PDF = (FIXTURES / "two_pages.pdf").read_bytes()


@st.composite
def damaged_pdf(draw: st.DrawFn) -> bytes:
    """The two-page fixture, truncated or with a few bytes overwritten."""
    data = bytearray(TWO_PAGE_PDF)
    for _ in range(draw(st.integers(0, 6))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    cut = draw(st.integers(0, len(data)))
    return bytes(data[:cut]) if draw(st.booleans()) else bytes(data)


def inputs_for(loader_name: str) -> st.SearchStrategy[bytes]:
    if loader_name == "pdf":
        return st.one_of(any_bytes, damaged_pdf())
    return st.one_of(any_bytes, text_bytes)


@pytest.mark.parametrize("cls", list(LOADERS), ids=lambda cls: cls.name)
def test_any_bytes_load_or_raise_a_load_error(cls) -> None:
    file_name = f"fuzzed{cls.extensions[0]}"

    @given(inputs_for(cls.name))
    def check(data: bytes) -> None:
        try:
            documents = cls().load_bytes(data, file_name)
        except LoadError as exc:
            assert exc.file_name == file_name
            return
        assert documents
        for document in documents:
            assert document.text.strip()
            assert document.metadata["file_name"] == file_name
            check_spans(document)

    check()
