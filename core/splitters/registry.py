"""The splitter registry; plugins register through the ``chunkscope.splitters`` entry-point group."""

from core.registry import Registry

# The framework engines (llamaindex.*, langchain.*, chonkie.*, semchunk) register here when the registry is
# first read; they sit a layer above the splitters, whose base they build on, so the top facade names them
# (core.PROVIDERS), not this layer.
SPLITTERS: Registry = Registry("splitter", entry_point_group="chunkscope.splitters")
