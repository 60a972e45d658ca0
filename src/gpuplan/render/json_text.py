"""JSON text as `json.dumps(data, ensure_ascii=False, indent=2)` writes it, byte for byte, faster.

The standard library writes indented JSON with its pure-Python encoder, a generator per container
and a yield per token: about 1.5 s for the 36 MB a 5,000-workload `compare -o json` prints. This
writes the same text with one function call per container: an object's keys and indentation come
from a template made once per shape and depth, its values are formatted by the same functions
json uses (float.__repr__, int.__repr__, the C string escaper), in about half the time. Anything
it was not written for (a key that is not a string, a type JSON has no word for) is handed to
`json.dumps` itself, so the output never differs, only the speed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from json.encoder import encode_basestring  # the C escaper (ensure_ascii=False) where the build has it
from typing import Any

_float_repr = float.__repr__
_int_repr = int.__repr__


class _Unusual(Exception):
    """Something the fast writer leaves to `json.dumps` (which writes it, or raises its own error)."""


def dumps_indented(data: Any) -> str:
    """`json.dumps(data, ensure_ascii=False, indent=2)`."""
    try:
        return _value(data, 0, ["\n"])
    except (_Unusual, RecursionError):
        return json.dumps(data, ensure_ascii=False, indent=2)


def write_indented(head: dict[str, Any], last_key: str, items: Iterable[Any], write: Callable[[str], Any]) -> None:
    """Write `dumps_indented({**head, last_key: list(items)})` piece by piece: each item is formatted,
    written and let go before the next is asked for (a big document is never whole in memory)."""
    if any(type(k) is not str for k in head) or last_key in head:
        raise ValueError("head: string keys, and not the last key")
    nls = ["\n"]
    nl1, nl2 = _nl(1, nls), _nl(2, nls)
    parts = [encode_basestring(k) + ": " + _at_level(v, 1, nls) for k, v in head.items()]
    write("{" + nl1 + "".join(p + "," + nl1 for p in parts) + encode_basestring(last_key) + ": ")
    sep = "[" + nl2
    for item in items:
        write(sep + _at_level(item, 2, nls))
        sep = "," + nl2
    write("[]" if sep.startswith("[") else nl1 + "]")
    write("\n}")


def _at_level(v: Any, level: int, nls: list[str]) -> str:
    """`v`'s text inside a document at `level` (json.dumps's own text, indented, where the fast
    writer leaves it to json)."""
    try:
        return _value(v, level, nls)
    except (_Unusual, RecursionError):
        return json.dumps(v, ensure_ascii=False, indent=2).replace("\n", "\n" + "  " * level)


def _float(x: float) -> str:
    if x - x == 0.0:  # finite (inf - inf and nan - nan are nan)
        return _float_repr(x)
    if x != x:
        return "NaN"
    return "Infinity" if x > 0 else "-Infinity"


def _scalar(v: Any) -> str:
    # json.encoder's order of checks: str, None, True, False, int, float (subclasses included)
    if isinstance(v, str):
        return encode_basestring(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return _int_repr(v)
    if isinstance(v, float):
        return _float(v)
    raise _Unusual


def _value(v: Any, level: int, nls: list[str]) -> str:
    if isinstance(v, (list, tuple)):
        return _list(v, level, nls)
    if isinstance(v, dict):
        return _dict(v, level, nls)
    return _scalar(v)


def _nl(level: int, nls: list[str]) -> str:
    while len(nls) <= level:
        nls.append("\n" + "  " * len(nls))
    return nls[level]


def _dict(d: dict[Any, Any], level: int, nls: list[str]) -> str:
    if not d:
        return "{}"
    keys = tuple(d)
    if not _STR.issuperset(map(type, keys)):
        raise _Unusual  # json turns numbers, booleans and None into keys its own way
    template = _TEMPLATES.get((keys, level))
    if template is None:
        template = _template(keys, level, nls)
    values = d.values()
    types = set(map(type, values))
    if types == _FLOAT:
        total = sum(values)
        if total - total == 0.0:  # all finite (a nan or an infinity makes the sum one)
            return template % tuple(map(_float_repr, values))
    elif types == _STR:
        return template % tuple(map(encode_basestring, values))
    parts = []
    for v in values:
        t = type(v)
        if t is float:
            parts.append(_float_repr(v) if v - v == 0.0 else _float(v))
        elif t is str:
            parts.append(encode_basestring(v))
        elif t is dict:
            parts.append(_dict(v, level + 1, nls))
        elif t is list:
            parts.append(_list(v, level + 1, nls))
        elif t is int:
            parts.append(_int_repr(v))
        else:
            parts.append(_value(v, level + 1, nls))
    return template % tuple(parts)


def _template(keys: tuple[str, ...], level: int, nls: list[str]) -> str:
    """The object's text with a %s for each value: its keys and indentation written once."""
    nl = _nl(level + 1, nls)
    items = ("," + nl).join(encode_basestring(k).replace("%", "%%") + ": %s" for k in keys)
    template = "{" + nl + items + nls[level] + "}"
    if len(_TEMPLATES) < 4096:
        _TEMPLATES[(keys, level)] = template
    return template


def _list(items: list[Any] | tuple[Any, ...], level: int, nls: list[str]) -> str:
    if not items:
        return "[]"
    nl = _nl(level + 1, nls)
    types = set(map(type, items))
    if types == _FLOAT:  # a curve: hours, pool sizes
        total = sum(items)
        if total - total == 0.0:  # all finite (a nan or an infinity makes the sum one)
            return "[" + nl + ("," + nl).join(map(_float_repr, items)) + nls[level] + "]"
    elif types == _STR:
        return "[" + nl + ("," + nl).join(map(encode_basestring, items)) + nls[level] + "]"
    if types == _DICT:
        return "[" + nl + ("," + nl).join([_dict(v, level + 1, nls) for v in items]) + nls[level] + "]"
    parts = []
    for v in items:
        t = type(v)
        if t is str:
            parts.append(encode_basestring(v))
        elif t is dict:
            parts.append(_dict(v, level + 1, nls))
        elif t is float:
            parts.append(_float_repr(v) if v - v == 0.0 else _float(v))
        else:
            parts.append(_value(v, level + 1, nls))
    return "[" + nl + ("," + nl).join(parts) + nls[level] + "]"


# An object's text with its keys, by its keys and depth: a document repeats a few dozen shapes
_TEMPLATES: dict[tuple[tuple[str, ...], int], str] = {}
_STR = frozenset({str})
_FLOAT = frozenset({float})
_DICT = frozenset({dict})
