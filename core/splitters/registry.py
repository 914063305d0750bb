"""The splitter registry; plugins register through the ``chunkscope.splitters`` entry-point group."""

from core.registry import Registry

SPLITTERS: Registry = Registry("splitter", entry_point_group="chunkscope.splitters")
