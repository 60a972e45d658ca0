"""`render.json_out`, the one JSON writer: what it writes reads back as the same values the standard
library's text held (the spelling of small floats may differ, never a value), indented as before."""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuplan import api
from gpuplan.render.json_out import dumps, dumps_text, write_json, write_stream

ROOT = Path(__file__).resolve().parents[2]


def std(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def test_the_layout_is_indent_two() -> None:
    data = {"a": [1, {}], "b": [], "c": {"x": "中文 \"q\" \\ \n"}, "d": None, "e": True, "f": 1.5}
    assert dumps_text(data) == std(data)


def test_values_equal_the_standard_librarys_whatever_the_spelling() -> None:
    rng = random.Random(5)
    values = [1e-05, 2.5e-07, 1e16, 1e22, -0.0, 0.1, 3.0000000000000004, 5e-324, 1.7976931348623157e308]
    values += [rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-12, 12) for _ in range(2000)]
    got = json.loads(dumps(values))
    assert got == json.loads(std(values)) == values
    assert [math.copysign(1, x) for x in got] == [math.copysign(1, x) for x in values]
    assert dumps(1e-05) == b"0.00001" and std(1e-05) == "1e-05"  # the one kind of difference


def test_what_json_has_no_word_for_is_null() -> None:
    assert json.loads(dumps([math.nan, math.inf, -math.inf, 1.0])) == [None, None, None, 1.0]


def test_numpy_sets_and_keys_that_are_not_text() -> None:
    data = {"a": np.float64(0.25), "b": np.arange(3), "c": np.int64(7), 1: "one", "s": {3, 1}}
    assert json.loads(dumps(data)) == {"a": 0.25, "b": [0, 1, 2], "c": 7, "1": "one", "s": [1, 3]}
    with pytest.raises(TypeError):
        dumps({"p": object()})


@pytest.mark.parametrize("items", [[], [{"x": 1.5, "y": [1, 2]}], [{"x": i, "z": {"w": [i]}} for i in range(3)]])
@pytest.mark.parametrize("head", [{}, {"schema": "s/1", "n": {"k": [1.0]}}])
def test_the_stream_writes_the_whole_documents_text(head: dict[str, Any], items: list[Any]) -> None:
    chunks: list[bytes] = []
    write_stream(head, "workloads", iter(items), chunks.append)
    whole = io.BytesIO()
    write_json({**head, "workloads": items}, whole.write)
    assert b"".join(chunks) == whole.getvalue()
    with pytest.raises(ValueError, match="already has"):
        write_stream({"workloads": 1}, "workloads", [], chunks.append)


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").glob("*.yaml")))
def test_every_examples_compare_and_plan_read_back_as_their_data(example: str) -> None:
    result = api.compare(ROOT / "examples" / example)
    head, workloads = result.document_stream("en")
    chunks: list[bytes] = []
    write_stream(head, "workloads", workloads, chunks.append)
    assert json.loads(b"".join(chunks)) == json.loads(std(result.document_data("en")))
    from gpuplan.render.plan import plan_json

    plan = plan_json(api.plan_document(ROOT / "examples" / example, lang="zh"))
    assert json.loads(dumps(plan)) == json.loads(std(plan))


def test_a_text_only_stdout_gets_text(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    write_json({"a": "中"})
    assert out.getvalue() == '{\n  "a": "中"\n}\n'
