"""Arrow tables of the node dataset made from plain Python values and numpy buffers, never through pandas.

``pa.array`` on a Python list imports pandas (0.24 CPU-s in every worker) and ``pyarrow.compute`` costs 60 ms
more: a batch worker builds its columns from buffers here, with the same values, types and bytes.
"""

from __future__ import annotations

from typing import Any

# Bytes a row costs beyond its strings (ids, numbers, offsets): only for cutting parts.
_ROW_OVERHEAD = 64


def row_bytes(table: Any) -> Any:
    """Each row's size as a part counts it (int64): its strings' UTF-8 bytes, the vector, a fixed overhead."""
    import numpy as np

    sizes = np.full(table.num_rows, _ROW_OVERHEAD, dtype=np.int64)
    for column in ("text", "llm_view", "embed_view", "metadata", "relationships", "id", "source_path"):
        sizes += utf8_lengths(table.column(column))
    if "embedding" in table.column_names:
        sizes += 4 * table.schema.field("embedding").type.list_size
    return sizes


def utf8_lengths(column: Any) -> Any:
    """Each value's length in bytes (int64) of a string column without nulls, read from its offsets.

    What ``pyarrow.compute.binary_length`` gives, without importing pyarrow.compute (60 ms a worker).
    """
    import numpy as np
    import pyarrow as pa

    lengths = []
    for chunk in column.chunks:
        kind = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(chunk.buffers()[1], dtype=kind)[chunk.offset : chunk.offset + len(chunk) + 1]
        lengths.append(np.diff(offsets).astype(np.int64))
    return np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)


def arrow_table(columns: dict[str, Any], schema: Any) -> Any:
    """``pa.Table.from_pydict(columns, schema=schema)`` for this dataset's column types, built from buffers.

    The same table (the same values, no validity bitmaps), but ``pa.array`` on a Python list first
    imports pandas (0.24 CPU-s in every worker) to ask whether the list is one of its arrays. Columns
    already Arrow arrays are taken as they are; a type this does not build, a string that cannot be
    encoded or text past 2 GiB in one column goes through ``pa.array`` as before.
    """
    import pyarrow as pa

    arrays = []
    for field in schema:
        values = columns[field.name]
        array = values if isinstance(values, pa.Array) else _built(field.type, values)
        arrays.append(pa.array(values, type=field.type) if array is None else array)
    return pa.Table.from_arrays(arrays, schema=schema)


_INT32_MAX = 2**31 - 1


def _built(kind: Any, values: list[Any]) -> Any:
    """An array of ``values`` made from buffers (None where ``pa.array`` must make it)."""
    import numpy as np
    import pyarrow as pa

    if pa.types.is_string(kind):
        try:
            encoded = [value.encode("utf-8") for value in values]
        except (AttributeError, UnicodeEncodeError):  # None, or a lone surrogate: pa.array says what is wrong
            return None
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
        if offsets[-1] > _INT32_MAX:
            return None
        return pa.StringArray.from_buffers(
            len(encoded), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))
        )
    if kind in (pa.int32(), pa.int64()):
        dtype = np.int32 if kind == pa.int32() else np.int64
        try:
            numbers = np.array(values, dtype=dtype)
        except (OverflowError, TypeError, ValueError):
            return None
        if numbers.ndim != 1:
            return None
        return array_of(kind, numbers)
    if pa.types.is_list(kind) and pa.types.is_string(kind.value_type):
        if any(not isinstance(value, list) for value in values):
            return None
        items = _built(kind.value_type, [item for value in values for item in value])
        if items is None:
            return None
        offsets = np.zeros(len(values) + 1, dtype=np.int32)
        np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=len(values)), out=offsets[1:])
        return pa.ListArray.from_arrays(array_of(pa.int32(), offsets), items, type=kind)
    return None


def array_of(kind: Any, numbers: Any) -> Any:
    """A fixed-width Arrow array over a contiguous numpy array of the same width (no copy, no nulls)."""
    import pyarrow as pa

    return pa.Array.from_buffers(kind, len(numbers), [None, pa.py_buffer(numbers)])


def table_from(result: dict[str, Any]) -> Any:
    """A result's nodes: its ``table`` as it is (``stream=False``), else read from its IPC stream."""
    import pyarrow as pa

    table = result["table"]
    if isinstance(table, pa.Table):
        return table
    with pa.ipc.open_stream(table) as reader:
        return reader.read_all()
