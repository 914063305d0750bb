"""A worker's Arrow columns, built from buffers: the same table ``pyarrow`` builds from the Python lists, without pandas.

``pa.array`` on a Python list imports pandas (0.24 CPU-s in every worker) before it converts
anything; :func:`core.batch.arrow_columns.arrow_table` builds the dataset's column types from buffers
instead, and must give the table (and so the Parquet bytes) that ``pa.Table.from_pydict`` gives.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from core.batch.arrow_columns import arrow_table, row_bytes, utf8_lengths
from core.batch.dataset import parquet_bytes
from core.batch.work import node_schema
from core.measure.metrics import SizeStats

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@st.composite
def node_columns(draw: st.DrawFn, metrics: bool) -> dict[str, list]:
    rows = draw(st.integers(0, 12))
    column = {
        pa.string(): lambda: draw(st.lists(texts, min_size=rows, max_size=rows)),
        pa.int32(): lambda: draw(st.lists(st.integers(-(2**31), 2**31 - 1), min_size=rows, max_size=rows)),
        pa.int64(): lambda: draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=rows, max_size=rows)),
        pa.list_(pa.string()): lambda: draw(
            st.lists(st.lists(st.sampled_from(["tiny", "mid-sentence", "é"]), max_size=3), min_size=rows, max_size=rows)
        ),
    }
    return {field.name: column[field.type]() for field in node_schema(metrics=metrics)}


@settings(max_examples=60, deadline=None)
@given(st.booleans().flatmap(lambda metrics: st.tuples(st.just(metrics), node_columns(metrics))))
def test_the_table_is_the_one_pyarrow_builds_from_the_lists(case: tuple[bool, dict[str, list]]) -> None:
    metrics, columns = case
    schema = node_schema(metrics=metrics)
    built, expected = arrow_table(columns, schema), pa.Table.from_pydict(columns, schema=schema)
    assert built.equals(expected)
    assert parquet_bytes(built) == parquet_bytes(expected)
    for name in ("text", "metadata", "id"):
        lengths = pc.binary_length(expected.column(name)).to_numpy(zero_copy_only=False)
        assert utf8_lengths(built.column(name)).tolist() == lengths.tolist()
        # A slice's offsets start inside the buffer: its lengths are its own rows'.
        assert utf8_lengths(built.slice(1).column(name)).tolist() == lengths[1:].tolist()
    assert row_bytes(built).tolist() == row_bytes(expected).tolist()


def test_values_it_cannot_build_go_through_pyarrow_as_before() -> None:
    schema = pa.schema([("text", pa.string()), ("number", pa.int32())])
    table = arrow_table({"text": ["a", None], "number": [1, None]}, schema)
    assert table.column("text").to_pylist() == ["a", None]
    assert table.column("number").null_count == 1
    try:
        arrow_table({"text": ["\ud800"], "number": [1]}, schema)
    except Exception as exc:  # a lone surrogate: pyarrow's own error, as before
        assert "surrogate" in str(exc) or "utf" in str(exc).lower()
    else:
        raise AssertionError("a lone surrogate was accepted")


def test_building_a_table_does_not_import_pandas() -> None:
    code = (
        "import sys\n"
        "from core.batch.arrow_columns import arrow_table, row_bytes\nfrom core.batch.work import node_schema\n"
        "schema = node_schema(metrics=True)\n"
        "values = {'string': ['x'], 'int32': [1], 'int64': [2], 'list<item: string>': [['tiny']]}\n"
        "columns = {f.name: values[str(f.type)] for f in schema}\n"
        "row_bytes(arrow_table(columns, schema))\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.lists(st.integers(0, 100_000), min_size=1, max_size=300),
        st.lists(st.integers(0, 2**60), min_size=1, max_size=50),
        st.lists(st.floats(-1e12, 1e12, allow_nan=False), min_size=1, max_size=50),
    )
)
def test_size_stats_are_numpys_to_the_bit(values: list) -> None:
    """SizeStats.of computes the percentiles itself (numpy's arithmetic, in Python): the same bits as numpy's."""
    array = np.asarray(values, dtype=float)
    stats = SizeStats.of(values)
    expected = (array.min(), array.mean(), np.percentile(array, 50), np.percentile(array, 95), array.max(), array.std())
    assert [stats.min, stats.mean, stats.p50, stats.p95, stats.max, stats.sd] == [float(x) for x in expected]
    for q in (0, 1, 25, 50, 75, 95, 99, 100):
        from core.measure.metrics import _percentile

        assert _percentile(sorted(array.tolist()), q / 100) == float(np.percentile(array, q))
