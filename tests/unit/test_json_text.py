"""`render.json_text.dumps_indented` must write exactly what `json.dumps(..., ensure_ascii=False,
indent=2)` writes (it is what `-o json` printed before), for any data."""

from __future__ import annotations

import enum
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from gpuplan import api
from gpuplan.render.json_text import dumps_indented, write_indented

ROOT = Path(__file__).resolve().parents[2]


def std(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    pass


class Big(float):
    pass


SCALARS: list[Any] = [
    0, -1, 10**30, -(10**40), True, False, None, 0.0, -0.0, 1.5, 0.1, 1e-05, 0.0001, 1e16, 1.5e16, 1e21, 5e-324,
    1.7976931348623157e308, math.nan, math.inf, -math.inf, "", "plain", 'quote " and \\ backslash',
    "ctrl \x00\x01\x1f\x7f \n\r\t\b\f", "中文 → é \u2028 \U0001f600", Colour.RED, Name("sub"), Big(2.5),
]


def random_data(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 5 or r < 0.45:
        return rng.choice(SCALARS + [rng.uniform(-1e6, 1e6), rng.randint(-5, 5), round(rng.uniform(0, 1e5), 2)])
    if r < 0.7:
        items = [random_data(rng, depth + 1) for _ in range(rng.randint(0, 5))]
        return tuple(items) if rng.random() < 0.1 else items
    keys = ["a", "b c", "é", "", "x\n", "total", "\"q\"", "%s", "50%", "%%"]
    return {rng.choice(keys) + str(i): random_data(rng, depth + 1) for i in range(rng.randint(0, 5))}


def test_scalars_and_empty_containers() -> None:
    shapes: list[Any] = [
        {"a": 1.5, "b": math.nan}, {"a": math.inf, "b": -math.inf}, {"a": 1e308, "b": 1e308},  # all floats
        {"a": 1.5, "b": 2}, {"a": 0.1, "b": Big(0.2)}, ["x", "y"], ["x", Name("y")], [{"a": 1.0}, {"a": 2.0}],
        [{"a": 1.0}, {"b": [1.0, {"c": "d"}]}], {"%s": 1.0, "50%": [0.5]},
    ]
    for value in [*SCALARS, [], {}, [[]], {"a": {}}, [{}], ([], ()), {"a": [[], {}]}, *shapes]:
        assert dumps_indented(value) == std(value)


def test_random_nested_data() -> None:
    rng = random.Random(15)
    for _ in range(2000):
        data = random_data(rng)
        assert dumps_indented(data) == std(data)


def test_what_json_does_its_own_way_is_left_to_json() -> None:
    data = {1: "int key", 2.5: [True], None: {}, False: 0, "s": {3: [1]}}
    assert dumps_indented(data) == std(data)
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps_indented({"a": [object()]})
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_indented(loop)


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.stem)
def test_compare_documents(example: Path) -> None:
    data = api.compare(example).document_data("zh", explain=True)
    assert dumps_indented(data) == std(data)


def streamed(head: dict[str, Any], key: str, items: list[Any]) -> str:
    out: list[str] = []
    write_indented(head, key, iter(items), out.append)
    return "".join(out)


def test_written_piece_by_piece() -> None:
    rng = random.Random(7)
    for _ in range(300):
        head = {f"k{i}": random_data(rng) for i in range(rng.randint(0, 3))}
        items = [random_data(rng) for _ in range(rng.randint(0, 4))]
        assert streamed(head, "items", items) == std({**head, "items": items})
    odd = {"n": {1: "int key"}, "o": [Colour.RED, Name("x")]}  # left to json, indented where it sits
    assert streamed(odd, "w", [{2.5: [None]}, [{True: 1}]]) == std({**odd, "w": [{2.5: [None]}, [{True: 1}]]})
    with pytest.raises(ValueError, match="last key"):
        streamed({"w": 1}, "w", [])
