"""YAML text to plain data, fast: libyaml's parser and a lean construction of plain documents.

Every command reads YAML (the bundled catalog, the message catalogs, the scenario); with libyaml's
C parser most of what is left is the Python constructor's per-node bookkeeping, which `construct`
skips for documents made of plain maps, lists and scalars, giving the same data.
"""

from __future__ import annotations

from typing import Any


def safe_loader() -> Any:
    """libyaml's safe loader when present (the same safe constructors, about 10x faster), else PyYAML's."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str) -> Any:
    """`yaml.load(text, Loader=safe_loader())`, the same data (None for an empty document); a
    YAML error propagates as from `yaml.load`."""
    loader = safe_loader()(text)
    try:
        node = loader.get_single_node()
        return construct(loader, node) if node is not None else None
    finally:
        loader.dispose()


_TAG = "tag:yaml.org,2002:"
_STR_TAG, _MAP_TAG, _SEQ_TAG = _TAG + "str", _TAG + "map", _TAG + "seq"
# plain scalars whose SafeConstructor method returns the value (the others, and every explicit or
# unusual tag, are left to the loader)
_SCALAR_TAGS = frozenset(_TAG + t for t in ("int", "float", "bool", "null"))


class _Unusual(Exception):
    pass


def construct(loader: Any, root: Any) -> Any:
    """`loader.construct_document(root)`: the same data, built without the loader's per-node
    bookkeeping where the document is plain maps, lists and scalars (most of a big scenario's time
    was that bookkeeping). Numbers, booleans and nulls are made by the loader's own constructors; an
    alias gives the same object, as the loader does; anything else (a merge key `<<`, a timestamp,
    an explicit tag, a key that is not a scalar) hands the whole document to the loader."""
    import yaml

    scalar_node, mapping_node, sequence_node = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
    constructors = loader.yaml_constructors
    made: dict[int, Any] = {}

    def scalar(node: Any) -> Any:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        if tag in _SCALAR_TAGS:
            return constructors[tag](loader, node)
        raise _Unusual

    def build(node: Any) -> Any:
        key = id(node)
        if key in made:
            return made[key]
        kind = type(node)
        if kind is scalar_node:
            value = scalar(node)
        elif kind is mapping_node and node.tag == _MAP_TAG:
            value = made[key] = {}
            for k, v in node.value:
                if type(k) is not scalar_node:
                    raise _Unusual
                value[scalar(k)] = build(v)
        elif kind is sequence_node and node.tag == _SEQ_TAG:
            value = made[key] = []
            value.extend(build(v) for v in node.value)
        else:
            raise _Unusual
        made[key] = value
        return value

    try:
        return build(root)
    except (_Unusual, RecursionError):
        return loader.construct_document(root)
