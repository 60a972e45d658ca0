"""Heavy third-party modules, imported on first use: the one lazy-import place (as SkyPilot's
`sky/adaptors`).

A command pays for what it runs, not for what the package could run: `compare` never needs polars,
`audit` never needs scipy, `-o json` never needs rich. A module here is a stand-in that imports the
real one the first time one of its names is read (`np.zeros` imports numpy), so code writes
`from gpuplan.lazy import np` at the top of a file and loads numpy only if a function using it
runs. Type checkers see the real modules.

Import time is measured with `python -X importtime -m gpuplan ...` (benchmarks/bench_onepath.py).
This module imports nothing of gpuplan and belongs to no layer: any module may use it.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import TYPE_CHECKING, Any


class LazyModule(types.ModuleType):
    """A module imported when one of its names is first read (then the stand-in reads through).
    Its own names all start with `_lazy_`, so that none hides a name of the module it stands for."""

    def __init__(self, name: str, *, before: Any = None) -> None:
        super().__init__(name)
        self._lazy_name = name
        self._lazy_before = before
        self._lazy_module: types.ModuleType | None = None

    def _lazy_import(self) -> types.ModuleType:
        module = self._lazy_module
        if module is None:
            if self._lazy_before is not None and self._lazy_name not in sys.modules:
                self._lazy_before()
            module = self._lazy_module = importlib.import_module(self._lazy_name)
        return module

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_lazy_"):
            raise AttributeError(attr)
        value = getattr(self._lazy_import(), attr)
        # kept on the stand-in, so the next read is a plain attribute read, not this call (hot loops read
        # `yaml.MappingNode` or `np.float64` hundreds of times a request)
        setattr(self, attr, value)
        return value

    def __dir__(self) -> list[str]:
        return dir(self._lazy_import())


def one_blas_thread() -> None:
    """gpuplan does no dense linear algebra: OpenBLAS need not start a thread per core when numpy
    loads (about 0.05 s of a small command's process on 2 cores). A value the user set is kept;
    once numpy is loaded the setting could not act, and is not made. The CLI calls this first
    thing; the `np` stand-in before it imports numpy."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


if TYPE_CHECKING:
    import jinja2
    import numpy as np
    import orjson
    import polars as pl
    import yaml
else:
    np = LazyModule("numpy", before=one_blas_thread)
    pl = LazyModule("polars")
    yaml = LazyModule("yaml")
    orjson = LazyModule("orjson")
    jinja2 = LazyModule("jinja2")


def yaml_safe_loader() -> Any:
    """libyaml's safe loader when PyYAML was built with it (the same constructors, about 10x faster
    parsing), else PyYAML's pure-Python one."""
    return getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


def yaml_load(text: str) -> Any:
    """`yaml.load(text, Loader=yaml_safe_loader())`: None for an empty document; a YAML error
    propagates as `yaml.YAMLError`."""
    return yaml.load(text, Loader=yaml_safe_loader())  # noqa: S506 - a safe loader


__all__ = ["LazyModule", "jinja2", "one_blas_thread", "np", "orjson", "pl", "yaml", "yaml_load", "yaml_safe_loader"]
