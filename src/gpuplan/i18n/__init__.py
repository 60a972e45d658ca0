"""Message catalogs: every user-facing string, in English and Chinese.

Catalogs are YAML files `i18n/<area>.<lang>.yaml` (flat mappings key -> text with `{name}`
placeholders); all files of a language are merged, keys are namespaced by area (`compare.title`).
Each area owns its files, so several parts of the tool can add messages without touching one file.
A test fails when a key exists in one language and not the other.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources
from typing import Any

LANGS = ("en", "zh")


@lru_cache(maxsize=4)
def catalog(lang: str) -> dict[str, str]:
    """Every message of `lang`, keys namespaced by area (`compare.title`): all the areas' files merged."""
    _check(lang)
    merged: dict[str, str] = {}
    for entry in sorted(resources.files("gpuplan.i18n").iterdir(), key=lambda e: e.name):
        name = entry.name
        if name.endswith(f".{lang}.yaml"):
            area_name = name[: -len(f".{lang}.yaml")]
            merged.update((f"{area_name}.{key}", text) for key, text in area(lang, area_name).items())
    return merged


@cache
def area(lang: str, name: str) -> dict[str, str]:
    """The messages of one area in `lang` (keys without the area's prefix); {} when it has no file.
    `t` reads only the area a key names, so a command loads the files of the areas it prints (plan's
    text: plan.en.yaml, not the ten files of every area)."""
    from gpuplan.lazy import yaml_load

    _check(lang)
    try:
        text = resources.files("gpuplan.i18n").joinpath(f"{name}.{lang}.yaml").read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return {str(key): str(value) for key, value in (yaml_load(text) or {}).items()}


def _check(lang: str) -> None:
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(LANGS)}")


def t(key: str, lang: str = "en", **values: Any) -> str:
    """The message `key` (`area.name`) in `lang`, with `{placeholders}` filled. A missing key is a bug:
    it raises KeyError."""
    name, _, rest = key.partition(".")
    try:
        text = area(lang, name)[rest]
    except KeyError:
        raise KeyError(key) from None
    return text.format(**values) if values else text
