"""Message catalogs: every user-facing string, in English and Chinese.

Catalogs are YAML files `i18n/<area>.<lang>.yaml` (flat mappings key -> text with `{name}`
placeholders); all files of a language are merged, keys are namespaced by area (`compare.title`).
Each area owns its files, so several parts of the tool can add messages without touching one file.
A test fails when a key exists in one language and not the other.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

LANGS = ("en", "zh")


@lru_cache(maxsize=4)
def catalog(lang: str) -> dict[str, str]:
    from gpuplan.lazy import yaml_load

    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(LANGS)}")
    merged: dict[str, str] = {}
    for entry in sorted(resources.files("gpuplan.i18n").iterdir(), key=lambda e: e.name):
        name = entry.name
        if not name.endswith(f".{lang}.yaml"):
            continue
        area = name[: -len(f".{lang}.yaml")]
        data = yaml_load(entry.read_text(encoding="utf-8")) or {}
        for key, text in data.items():
            merged[f"{area}.{key}"] = str(text)
    return merged


def t(key: str, lang: str = "en", **values: Any) -> str:
    """The message `key` in `lang`, with `{placeholders}` filled. A missing key is a bug: it raises."""
    text = catalog(lang)[key]
    return text.format(**values) if values else text
