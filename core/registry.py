"""Registries: a stable name for each component class, plus plugins from entry points."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from core.errors import ConfigError
from core.params import Configurable

C = TypeVar("C", bound=type[Configurable])


class Registry(Generic[C]):
    """Maps names to component classes of one kind.

    Plugins are found only through installed entry points of ``entry_point_group``:
    nothing a document or a URL says can make ChunkScope import a module.
    ``providers`` names modules of the registry's own layer that register components of this kind (each
    loader format in its module); modules of a higher layer that do (the framework engines are splitters,
    built on the splitters' base) are named by the top facade, ``core.PROVIDERS``, never by this layer. Both
    are imported on the first lookup, before the plugins, so importing the lower layer never imports the higher.
    """

    def __init__(
        self,
        kind: str,
        entry_point_group: str | None = None,
        providers: tuple[str, ...] = (),
        order: tuple[str, ...] = (),
    ) -> None:
        self.kind = kind
        self.entry_point_group = entry_point_group
        self.providers = providers
        # The names listed first, in this order, whatever order their modules happened to be imported in.
        self.order = order
        self._classes: dict[str, C] = {}
        self._plugins_loaded = False  # the first lookup imports the providers and plugins (there may be none)
        self._plugins_loading = False
        self._plugin_lock = threading.RLock()
        self.plugin_errors: list[str] = []

    def register(self, cls: C) -> C:
        """Class decorator: add ``cls`` under ``cls.name``."""
        if not cls.name:
            raise TypeError(f"{cls.__qualname__} has no name")
        existing = self._classes.get(cls.name)
        if existing is not None and existing is not cls:
            raise TypeError(f"{self.kind} {cls.name!r} is registered twice")
        self._classes[cls.name] = cls
        return cls

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        # Sessions start together: the first thread loads while the others wait, so
        # none sees the registry without its plugins; a plugin that reads the
        # registry while being imported (same thread) sees it as it is so far.
        with self._plugin_lock:
            if self._plugins_loaded or self._plugins_loading:
                return
            self._plugins_loading = True
            try:
                for module in (*self.providers, *_from_above(self.kind)):
                    importlib.import_module(module)
                listed = {name: self._classes[name] for name in self.order if name in self._classes}
                self._classes = {**listed, **self._classes}
                for ep in entry_points(group=self.entry_point_group) if self.entry_point_group else ():
                    try:
                        cls = ep.load()
                        if cls.name not in self._classes:
                            self.register(cls)
                    except Exception as exc:  # a broken plugin must not take the app down
                        self.plugin_errors.append(f"{ep.name}: {exc}")
            finally:
                self._plugins_loading = False
                self._plugins_loaded = True

    def registered(self) -> list[C]:
        """The classes registered so far, without importing the providers or the plugins."""
        return list(self._classes.values())

    def registered_class(self, name: str) -> C | None:
        """The class registered as ``name`` so far (None if none), without importing the providers or the plugins."""
        return self._classes.get(name)

    def names(self) -> list[str]:
        self._load_plugins()
        return list(self._classes)

    def __iter__(self) -> Iterator[C]:
        self._load_plugins()
        return iter(list(self._classes.values()))

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._classes

    def get_class(self, name: str) -> C:
        self._load_plugins()
        try:
            return self._classes[name]
        except KeyError:
            known = ", ".join(self._classes)
            raise ConfigError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def create(self, name: str, **params: Any) -> Any:
        """Instantiate ``name`` from raw parameter values (coerced and validated)."""
        return self.get_class(name).from_params(params)

    def describe(self) -> list[dict[str, Any]]:
        """JSON-ready listing: every component with its declared parameters."""
        return [
            {"name": cls.name, "summary": cls.summary, "params": [spec.to_json() for spec in cls.params()]}
            for cls in self
        ]


def _from_above(kind: str) -> tuple[str, ...]:
    """The modules of higher layers that register components of ``kind``, as the top facade declares them."""
    import core

    return tuple(core.PROVIDERS.get(kind, ()))
