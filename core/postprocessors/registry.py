"""The postprocessor registry; plugins register through the ``chunkscope.postprocessors`` entry-point group."""

from core.registry import Registry

POSTPROCESSORS: Registry = Registry("postprocessor", entry_point_group="chunkscope.postprocessors")
