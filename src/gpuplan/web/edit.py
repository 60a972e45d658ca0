"""The page's form: read a scenario's common fields, and set them in the YAML text in place (keeping
comments and layout; a value is replaced where it stands, a missing key is added to its mapping).

Only the fields below can be set; the rest of the scenario is edited as text.
"""

from __future__ import annotations

import math
import re
from typing import Any

from gpuplan.errors import ScenarioError

TOP_FIELDS = {
    "currency": "text",
    "days_per_month": "number",
    "team.engineer_hour_cost": "number",
    "team.researcher_hour_cost": "number",
}
WORKLOAD_FIELDS = {
    "gpus": "int",
    "hours_per_day": "number",
    "days_per_week": "int",
    "duration": "text",
    "utilization": "number",
}
_PATH = re.compile(r"^(?:(currency|days_per_month)|team\.(engineer_hour_cost|researcher_hour_cost)|"
                   r"workloads\[(\d{1,5})\]\.(gpus|hours_per_day|days_per_week|duration|utilization))$")


def parse_path(path: str) -> tuple[Any, ...]:
    m = _PATH.match(path)
    if not m:
        raise ScenarioError(f"`{path}` is not a field the form can set", field=path,
                            hint="settable: currency, days_per_month, team.engineer_hour_cost, "
                                 "team.researcher_hour_cost, workloads[i].gpus|hours_per_day|days_per_week|"
                                 "duration|utilization; edit the rest as YAML.")
    if m.group(1):
        return (m.group(1),)
    if m.group(2):
        return ("team", m.group(2))
    return ("workloads", int(m.group(3)), m.group(4))


def _load(text: str) -> Any:
    from gpuplan.inputs.scenario import parse_scenario_text

    data, _ = parse_scenario_text(text, "scenario.yaml")
    return data


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    cur = data
    for p in path:
        if isinstance(p, int):
            if not isinstance(cur, list) or p >= len(cur):
                return None
            cur = cur[p]
        else:
            if not isinstance(cur, dict):
                return None
            cur = cur.get(p)
    return cur


def common_fields(text: str) -> list[dict[str, Any]]:
    """The form's fields with their current values (None where the scenario leaves them to defaults)."""
    data = _load(text)
    out: list[dict[str, Any]] = []
    for path, kind in TOP_FIELDS.items():
        out.append({"path": path, "group": "", "name": path.split(".")[-1], "type": kind,
                    "value": _scalar(_get(data, tuple(path.split("."))))})
    workloads = data.get("workloads") if isinstance(data.get("workloads"), list) else []
    for i, w in enumerate(workloads[:50]):
        wid = str(w.get("id", f"#{i + 1}")) if isinstance(w, dict) else f"#{i + 1}"
        for name, kind in WORKLOAD_FIELDS.items():
            out.append({"path": f"workloads[{i}].{name}", "group": wid, "name": name, "type": kind,
                        "value": _scalar(w.get(name) if isinstance(w, dict) else None)})
    return out


def offered_gpus(text: str, catalog_offers: dict[str, Any] | None = None) -> list[str]:
    """The GPU ids the scenario's offers provide (an offer with `use:` takes its catalog entry's), sorted:
    the choices of the replay's and the audit's GPU fields."""
    data = _load(text)
    offers = data.get("offers") if isinstance(data.get("offers"), list) else []
    out: set[str] = set()
    for o in offers:
        if not isinstance(o, dict):
            continue
        gpu = o.get("gpu")
        if gpu is None and isinstance(o.get("use"), str) and catalog_offers:
            gpu = (catalog_offers.get(o["use"]) or {}).get("gpu")
        if isinstance(gpu, str) and gpu:
            out.add(gpu)
    return sorted(out)


def offer_ids(text: str) -> list[str]:
    """The scenario's offer ids, in its order (the audit form prices idle time with one: `audit --offer`)."""
    data = _load(text)
    offers = data.get("offers") if isinstance(data.get("offers"), list) else []
    ids = [o.get("id") or o.get("use") for o in offers if isinstance(o, dict)]
    return [i for i in ids if isinstance(i, str) and i]


def _scalar(v: Any) -> Any:
    return v if isinstance(v, str | int | float) and not isinstance(v, bool) else None


def _format(path: tuple[Any, ...], value: Any) -> str:
    name = path[-1]
    kind = TOP_FIELDS.get(".".join(str(p) for p in path)) or WORKLOAD_FIELDS.get(str(name), "text")
    if kind in ("number", "int"):
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise ScenarioError(f"expected a number, got {value!r}", field=_path_str(path)) from None
        if not math.isfinite(x):
            raise ScenarioError(f"expected a finite number, got {value!r}", field=_path_str(path))
        if kind == "int":
            if not x.is_integer():
                raise ScenarioError(f"expected a whole number, got {value!r}", field=_path_str(path))
            return str(int(x))
        return str(int(x)) if x.is_integer() else repr(x)
    s = str(value).strip()
    if name == "currency" and not re.fullmatch(r"[A-Z]{3}", s):
        raise ScenarioError(f"expected a 3-letter currency code, got {s!r}", field="currency", hint="e.g. CNY, USD")
    if name == "duration" and not re.fullmatch(r"\d+(\.\d+)?\s*(m|h|d|w)", s):
        raise ScenarioError(f"expected a duration such as 30d, got {s!r}", field=_path_str(path),
                            hint="units: m (minutes), h, d, w")
    return s


def _path_str(path: tuple[Any, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + str(p)
    return out


def _node(root: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    """(parent node, node) for `path` in a composed YAML tree (node None when the key is absent)."""
    import yaml

    parent, cur = None, root
    for p in path:
        parent = cur
        if isinstance(p, int):
            if not isinstance(cur, yaml.SequenceNode) or p >= len(cur.value):
                return parent, None
            cur = cur.value[p]
        else:
            if not isinstance(cur, yaml.MappingNode):
                return parent, None
            nxt = next((v for k, v in cur.value if getattr(k, "value", None) == p), None)
            if nxt is None:
                return parent, None
            cur = nxt
    return parent, cur


def _last_index(node: Any) -> int:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return max([node.start_mark.index] + [_last_index(v) for _, v in node.value])
    if isinstance(node, yaml.SequenceNode):
        return max([node.start_mark.index] + [_last_index(v) for v in node.value])
    return node.end_mark.index


def set_fields(text: str, values: dict[str, Any]) -> str:
    """`text` with each field path set to its value; comments and layout kept."""
    import yaml

    data = _load(text)
    wanted = {}
    for path_s, value in values.items():
        path = parse_path(path_s)
        if path[0] == "workloads":
            ws = data.get("workloads")
            if not isinstance(ws, list) or path[1] >= len(ws):
                raise ScenarioError(f"no workload {path[1]}", field=path_s,
                                    hint="the scenario's workloads count from 0.")
        wanted[path] = _format(path, value)
    new = text
    try:
        for path, rendered in wanted.items():
            new = _set_one(new, path, rendered)
        # a safety net: the edit must read back as intended, or the scenario is rewritten plainly
        check = yaml.load(new, Loader=_loader(new))  # noqa: S506 - a safe loader
    except (_Fallback, yaml.YAMLError):
        return _redump(data, wanted)
    for path, rendered in wanted.items():
        if _get(check, path) != yaml.safe_load(rendered):
            return _redump(data, wanted)
    return new


def _loader(text: str) -> Any:
    """libyaml's safe loader (about 10x faster: this is most of an edit's time) where its marks index the
    text as PyYAML's do; it skips a leading BOM in its count, so such a text gets the pure-Python one."""
    import yaml

    c = getattr(yaml, "CSafeLoader", None)
    return yaml.SafeLoader if c is None or text.startswith("\ufeff") else c


def _set_one(text: str, path: tuple[Any, ...], rendered: str) -> str:
    import yaml

    root = yaml.compose(text, Loader=_loader(text))
    parent, node = _node(root, path)
    if node is not None and isinstance(node, yaml.ScalarNode):
        return text[: node.start_mark.index] + rendered + text[node.end_mark.index:]
    if node is None and isinstance(parent, yaml.MappingNode) and parent.value:
        key = path[-1]
        if parent.flow_style:
            close = text.rfind("}", 0, parent.end_mark.index)
            return text[:close] + f", {key}: {rendered}" + text[close:]
        indent = parent.value[0][0].start_mark.column
        end = _last_index(parent)
        eol = text.find("\n", end)
        eol = len(text) if eol < 0 else eol
        return text[:eol] + "\n" + " " * indent + f"{key}: {rendered}" + text[eol:]
    raise _Fallback()


class _Fallback(Exception):
    pass


def _redump(data: Any, wanted: dict[tuple[Any, ...], str]) -> str:
    import yaml

    for path, rendered in wanted.items():
        cur = data
        for p in path[:-1]:
            if isinstance(p, str) and isinstance(cur, dict) and not isinstance(cur.get(p), dict | list):
                cur[p] = {}
            cur = cur[p]
        cur[path[-1]] = yaml.safe_load(rendered)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
