"""Every message catalog area exists in both languages with the same keys and the same placeholders."""

from __future__ import annotations

import string
from importlib import resources

import pytest
import yaml

from gpuplan.i18n import LANGS, catalog, t


def _areas() -> dict[str, dict[str, dict[str, str]]]:
    areas: dict[str, dict[str, dict[str, str]]] = {}
    for entry in resources.files("gpuplan.i18n").iterdir():
        name = entry.name
        if not name.endswith(".yaml"):
            continue
        area, lang, _ = name.rsplit(".", 2)
        data = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
        assert isinstance(data, dict), f"{name}: a catalog is a flat mapping key -> text"
        areas.setdefault(area, {})[lang] = {str(k): str(v) for k, v in data.items()}
    return areas


AREAS = _areas()


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def test_catalogs_exist() -> None:
    assert "compare" in AREAS and "report" in AREAS and "web" in AREAS


@pytest.mark.parametrize("area", sorted(AREAS))
def test_area_has_every_language(area: str) -> None:
    missing = [lang for lang in LANGS if lang not in AREAS[area]]
    assert not missing, f"i18n/{area}: no file for {missing}"


@pytest.mark.parametrize("area", sorted(AREAS))
def test_same_keys_in_every_language(area: str) -> None:
    langs = AREAS[area]
    keys = {lang: set(langs.get(lang, {})) for lang in LANGS}
    every = set().union(*keys.values())
    problems = [f"{area}.{k} missing in {lang}" for lang in LANGS for k in sorted(every - keys[lang])]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("area", sorted(AREAS))
def test_same_placeholders_in_every_language(area: str) -> None:
    langs = AREAS[area]
    problems = []
    for key in sorted(set.intersection(*(set(langs.get(lang, {})) for lang in LANGS))):
        sets = {lang: _placeholders(langs[lang][key]) for lang in LANGS}
        names = {lang: {s.split(".")[0].split("[")[0].split("!")[0] for s in v} for lang, v in sets.items()}
        if len({frozenset(v) for v in names.values()}) > 1:
            problems.append(f"{area}.{key}: " + "; ".join(f"{lang}={sorted(v)}" for lang, v in names.items()))
    assert not problems, "\n".join(problems)


def test_no_empty_text() -> None:
    empty = [f"{a}.{k} ({lang})" for a, langs in AREAS.items() for lang, msgs in langs.items()
             for k, v in msgs.items() if not v.strip()]
    assert not empty


def test_t_formats_and_fails_on_missing_key() -> None:
    assert t("report.days", "en", d="3") == "3 d"
    assert t("report.days", "zh", d="3") == "3 天"
    with pytest.raises(KeyError):
        t("report.no_such_key", "en")
    assert set(catalog("en")) == set(catalog("zh"))


def test_a_message_loads_only_its_own_area() -> None:
    """`t` reads the one file its key names (a command prints from one or two areas of ten), and says
    the same as the merged catalog for every key of every area, in both languages."""
    from gpuplan.i18n import area

    area.cache_clear()
    catalog.cache_clear()
    assert t("plan.pools") == AREAS["plan"]["en"]["pools"]
    assert area.cache_info().currsize == 1 and catalog.cache_info().currsize == 0
    for lang in LANGS:
        merged = catalog(lang)
        assert merged == {f"{a}.{k}": v for a, by_lang in AREAS.items() for k, v in by_lang[lang].items()}
        for key, text in merged.items():
            if not _placeholders(text):
                assert t(key, lang) == text
    with pytest.raises(KeyError, match="plan.no_such_key"):
        t("plan.no_such_key")
    with pytest.raises(KeyError, match="nowhere.title"):
        t("nowhere.title")
