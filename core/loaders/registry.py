"""The loader registry."""

from core.registry import Registry

LOADERS: Registry = Registry("loader")
