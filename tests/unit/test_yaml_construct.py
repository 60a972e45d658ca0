"""`inputs.yaml_data.construct` (used for scenarios, the catalog and the messages): its own
construction of the YAML data must give what the loader's `construct_document` gives, for any
document it accepts (and hand the rest to it)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplan.inputs.yaml_data import construct, load

ROOT = Path(__file__).resolve().parents[2]
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
FILES = sorted([*ROOT.glob("examples/*.yaml"), *ROOT.glob("tests/fixtures/**/*.yaml"),
                *ROOT.glob("src/gpuplan/**/*.yaml")])

ODD = """
plain: text
quoted: "12"
ints: [0, -7, +3, 1_000, 0x1F, 0o17, 017, 0b101, 1:30]
floats: [1.5, -0.0, 1e3, 6.8523015e+5, 685_230.15, 190:20:30.15, .inf, -.Inf, .nan]
bools: [yes, No, on, OFF, true, False, y, n]
nulls: [~, null, Null, ]
empty:
unicode: "中文 é"
nested: {a: [1, {b: [c, {d: e}]}], f: {}}
anchor: &a {x: 1, y: [2, 3]}
again: *a
list_anchor: &l [1, 2]
list_again: *l
numbers_as_keys: {1: one, 2.5: two, true: yes, null: nothing}
"""

HANDED_OVER = [
    "base: &b {x: 1}\nmerged: {<<: *b, y: 2}\n",  # merge key
    "when: 2026-11-30\n",  # timestamp
    "blob: !!binary aGVsbG8=\n",
    "s: !!set {a, b}\n",
    "o: !!omap [a: 1, b: 2]\n",
    "k: {[1, 2]: list key}\n",  # a key that is not a scalar: the loader's own error
    "tagged: !!str 12\nfloat: !!float 3\n",
    "= : value key\n",
    "self: &s [1, *s]\n",  # a list that holds itself
]


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        if a is b or len(a) != len(b):
            return a is b
        return all(x is y or same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def both(text: str) -> tuple[Any, Any]:
    results = []
    for fast in (True, False):
        loader = LOADER(text)
        try:
            node = loader.get_single_node()
            results.append(construct(loader, node) if fast else loader.construct_document(node))
        except yaml.YAMLError as exc:
            results.append(("error", type(exc), str(exc)))
        finally:
            loader.dispose()
    return results[0], results[1]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_project_yaml_files(path: Path) -> None:
    fast, slow = both(path.read_text(encoding="utf-8"))
    assert same(fast, slow)


def test_every_scalar_kind_and_aliases() -> None:
    fast, slow = both(ODD)
    assert same(fast, slow)
    assert fast["again"] is fast["anchor"] and fast["list_again"] is fast["list_anchor"]  # shared, as the loader
    assert fast["ints"][-1] == 90 and fast["bools"][:2] == [True, False]  # YAML 1.1, as the loader reads it


@pytest.mark.parametrize("text", HANDED_OVER)
def test_what_the_loader_does_its_own_way(text: str) -> None:
    fast, slow = both(text)
    if isinstance(slow, dict) and "self" in slow:
        assert fast["self"][1] is fast["self"]
    else:
        assert same(fast, slow) or fast == slow


class _NoFallback(LOADER):  # type: ignore[valid-type,misc]
    def construct_document(self, node: Any) -> Any:
        raise AssertionError("handed to the loader")


@pytest.mark.parametrize("text", [ODD, (ROOT / "examples" / "seed-910b.yaml").read_text(encoding="utf-8")])
def test_plain_documents_are_built_without_the_loader(text: str) -> None:
    loader = _NoFallback(text)
    try:
        assert same(construct(loader, loader.get_single_node()), yaml.load(text, Loader=LOADER))  # noqa: S506
    finally:
        loader.dispose()


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_load_is_yaml_load(path: Path) -> None:
    """What the catalog and message readers call: yaml.load's data for every YAML file of the project."""
    text = path.read_text(encoding="utf-8")
    try:
        want = yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:  # the malformed fixtures: the same error
        with pytest.raises(type(exc)):
            load(text)
        return
    assert load(text) == want
