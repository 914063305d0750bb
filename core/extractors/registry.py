"""The metadata extractor registry."""

from core.registry import Registry

EXTRACTORS: Registry = Registry("extractor", entry_point_group="chunkscope.extractors")
