"""Reading a scenario file: YAML (safe) -> validated models -> resolved `Scenario`.

Every error names the file, the line, the field path (`workloads[0].gpus`), what was expected and
a hint. Offers taking `use: <catalog id>` start from the catalog entry; scenario fields override it.
Fields left out take the catalog's per-mode defaults, and each default used is recorded.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuplan import limits
from gpuplan.errors import ScenarioError
from gpuplan.inputs.catalog import Catalog, load_catalog
from gpuplan.inputs.fx import Fx, convert_offer, read_fx
from gpuplan.inputs.gpu_names import GpuNameError
from gpuplan.inputs.market import resolve_market, resolve_terms
from gpuplan.inputs.scenario_types import (
    Commitment,
    Data,
    Jitter,
    JitterIn,
    Link,
    Mode,
    Offer,
    OfferIn,
    Overhead,
    OverheadIn,
    Owned,
    Platform,
    Preemption,
    PriceIn,
    Range,
    Scenario,
    ScenarioIn,
    Service,
    Step,
    Team,
    Workload,
    with_service,
)
from gpuplan.inputs.sites import route
from gpuplan.inputs.units import UnitError, parse_duration, parse_ops, per_gpu_hour
from gpuplan.lazy import yaml, yaml_safe_loader

HINTS = {
    "gpus": "gpus is the total number of cards the workload uses, a whole number >= 1, or a fraction of one "
            "card below 1 (0.5, 0.25) for work that shares a card (an offer's `sharing: mig | mps | time-slicing`).",
    "hours_per_day": "hours_per_day is how many hours a day the workload runs, in (0, 24].",
    "days_per_week": "days_per_week is a whole number from 1 to 7.",
    "utilization": "utilization is the share of running time the GPUs do work, in (0, 1]; `gpuplan audit` measures it.",
    "communication": "communication is the share of a step spent in non-overlapped GPU-GPU communication, in [0, 1).",
    "requires": "requires lists any of: compliance, custom-driver, multi-node, isolation, elastic, no-preemption.",
    "capacity": "capacity is on-demand, spot (reclaimable, see `preemption:`) or reserved.",
    "preemption": "preemption is {rate: reclaims per node-hour, per: node-hour|instance-hour|gpu-hour, "
    "notice: 2m, max_lifetime: 24h or none, restart: 10m}.",
    "checkpoint_interval": "checkpoint_interval is a duration such as 30m or 2h, or none "
    "(a preempted run starts over).",
    "kind": "kind is one of: training, fine-tuning, experiment, inference.",
    "mode": "mode is bare-metal, vm or container (how the platform behaves; the price says how it bills), "
    "or owned (servers you buy: purchase, life, power and colocation instead of a price).",
    "tenancy": "tenancy is dedicated (the whole node is yours), shared-node (other tenants on the host) "
    "or shared-gpu (a vGPU/MIG slice).",
    "nic": "nic is native, passthrough, sr-iov or virtual.",
    "intra_node": "intra_node is the fraction of NVLink/HCCS bandwidth a job gets, in (0, 1], or [low, high].",
    "inter_node": "inter_node is the fraction of the network bandwidth a job gets, in (0, 1], or [low, high].",
    "compute": "compute is the fraction slower on pure compute, in [-0.1, 1), or [low, high].",
    "step": "step is {compute_s: seconds of compute per step, gradient_gb: GB all-reduced per step, overlap: 0-1}.",
    "compute_s": "compute_s is one step's compute time on dedicated hardware in seconds, > 0.",
    "gradient_gb": "gradient_gb is the bytes all-reduced per step in GB (2 x parameters in billions for bf16).",
    "overlap": "overlap is the share of communication that can hide behind compute, in [0, 1].",
    "data_wait": "data_wait is the share of time the GPUs wait on input data, in [0, 1) (`gpuplan audit` measures it).",
    "memory_gb": "memory_gb is the memory the workload needs per GPU, in GB.",
    "speed": "speed maps a GPU id to its measured speed relative to the workload's first GPU, "
    "e.g. {ascend-910b: 0.55}.",
    "per": "per is one of gpu-hour, gpu-day, gpu-month, node-hour, node-day, node-month.",
    "amount": "amount is a number or [low, high] in the scenario's currency.",
    "currency": "currency is an ISO 4217 code such as CNY or USD.",
    "version": "this gpuplan reads scenario version 1: put `version: 1` at the top.",
    "interconnect": "overhead.interconnect is the fraction of bandwidth a job really gets, in (0, 1]; "
    "offer.interconnect is one of nvlink, hccs, pcie, none.",
    "jitter": "jitter is a fraction or [low, high] of per-step slowdown from neighbours, each in [0, 1).",
    "window": "window is a daily time range such as \"09:00-18:00\".",
    "rdma": "rdma is one of none, roce, infiniband.",
    "lease_unit": "lease_unit is gpu or node.",
    "duration": "durations are written as text: 90m, 12h, 30d or 2w.",
    "min_term": "durations are written as text: 90m, 12h, 30d or 2w.",
    "setup": "durations are written as text: 90m, 12h, 30d or 2w.",
    "ops": "ops is engineer time such as 20h/node-month.",
    "gpu": "a GPU id from `gpuplan catalog gpus`, or a list of them.",
    "engineer_hour_cost": "money per hour of ops engineer time, >= 0.",
    "researcher_hour_cost": "money per hour of waiting for results, >= 0.",
    "days_per_month": "days_per_month is between 28 and 31 (30.4 for 730-hour months).",
    "offers": "offers is a list of offers, each with id, gpu, mode and price (or `use:`).",
    "workloads": "workloads is a list, each with id, kind, gpu, gpus, hours_per_day and duration.",
    "price": "price is {amount: number or [low, high], per: gpu-hour|gpu-day|...}.",
    "gpus_per_node": "gpus_per_node is a whole number from 1 to 64.",
    "network_gbps": "network_gbps is the node network bandwidth in Gbit/s, > 0.",
    "early_exit": "early_exit is the share of the remaining rent owed on leaving a term early, in [0, 1].",
    "terms": "terms is a list of {length: 12mo, price: {amount, per}, early_exit: 0.5}.",
    "container_price_drift": "a drift is per year, a number or [low, high], each above -1 (e.g. [-0.35, -0.10]).",
    "bare_metal_price_drift": "a drift is per year, a number or [low, high], each above -1 (e.g. [-0.25, 0.0]).",
    "demand_growth": "demand growth is per month, a number or [low, high], each above -1 (e.g. [0.0, 0.08]).",
    "horizon": "the horizon is whole months, e.g. 12mo.",
    "id": "an id is one line of printable text of at most 128 characters, e.g. train-llm or bm-910b.",
    "provider": "a provider is one line of printable text of at most 128 characters.",
    "site": "a site id from `sites:`, one line of at most 128 characters.",
    # owned servers (mode: owned, issue 28)
    "purchase": "purchase is what a server costs to buy: {amount: 250000, per: node} (or per: gpu).",
    "life": "life is the depreciation period written as text, e.g. 4y or 1825d (a year is 365 days).",
    "lead_time": "lead_time is order to delivery written as text, e.g. 8w.",
    "resale": "resale is the share of the purchase price recovered when the servers are sold, in [0, 1).",
    "power": "power is {kw_per_node: 10.2, pue: 1.3, price_per_kwh: 0.10} (idle_share: optional, in [0, 1]).",
    "kw_per_node": "kw_per_node is a server's draw at full load in kW, > 0 (DGX H100: 10.2).",
    "pue": "pue is the site's power usage effectiveness, in [1, 3] (1.3 is a typical colocation site).",
    "price_per_kwh": "price_per_kwh is the price of electricity per kWh in the scenario's currency, >= 0.",
    "idle_share": "idle_share is an idle server's draw over its full-load draw, in [0, 1] (catalog: 0.35).",
    "colocation": "colocation is rack space as a price, e.g. {amount: 1500, per: node-month}.",
}
GENERIC_HINT = "see the scenario format in the README; `gpuplan init` writes a commented starter."


def _path_str(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _compose(text: str) -> tuple[Any, Any]:
    """Parse once: the plain data (safe constructors) and the node tree that carries line marks."""
    loader = yaml_safe_loader()(text)
    try:
        node = loader.get_single_node()
        # Aliases can make a small file expand to billions of values ("billion laughs"): refuse
        # before anything walks the expanded tree. Without an alias (`*name`) a document holds at most
        # one value per character and two more (`?` is a mapping, its key and its value), so a shorter
        # text needs no count.
        n = expanded_size(node) if ("*" in text or len(text) + 2 > MAX_EXPANDED_VALUES) else 0
        if n > MAX_EXPANDED_VALUES:
            raise _TooBig(n, distinct_size(node))
        data = loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()
    return data, node


class _TooBig(Exception):
    def __init__(self, n: int, distinct: int) -> None:
        super().__init__(n)
        self.n = n
        self.aliased = n > distinct


MAX_EXPANDED_VALUES = limits.MAX_YAML_VALUES


def distinct_size(root: Any) -> int:
    """How many values the document's text holds (each aliased node once)."""
    import yaml

    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack += [x for kv in node.value for x in kv]
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value
    return len(seen)


def expanded_size(root: Any) -> int:
    """How many values the document holds once aliases are expanded (memoised per node, so cheap)."""
    memo: dict[int, int] = {}

    def size(node: Any) -> int:
        key = id(node)
        if key not in memo:
            memo[key] = 1  # guards against recursive aliases
            if isinstance(node, yaml.MappingNode):
                memo[key] = 1 + sum(size(k) + size(v) for k, v in node.value)
            elif isinstance(node, yaml.SequenceNode):
                memo[key] = 1 + sum(size(v) for v in node.value)
        return memo[key]

    return size(root) if root is not None else 0


def _line_index(root: Any) -> dict[tuple[Any, ...], int]:
    """Map each YAML path (keys and list indices) to its 1-based line.

    A node reached again through an alias is not walked again: its lines are those of the anchor.
    """
    lines: dict[tuple[Any, ...], int] = {}
    seen: set[int] = set()

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        lines.setdefault(path, node.start_mark.line + 1)
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = k.value
                lines[(*path, key)] = k.start_mark.line + 1
                walk(v, (*path, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, (*path, i))

    if root is not None:
        walk(root, ())
    return lines


class _Locator:
    def __init__(self, file: str, root: Any = None) -> None:
        self.file = file
        self._root = root
        self._lines: dict[tuple[Any, ...], int] | None = None

    @property
    def lines(self) -> dict[tuple[Any, ...], int]:
        """Each YAML path's line, indexed when an error first asks (a good file never does)."""
        if self._lines is None:
            self._lines = _line_index(self._root)
        return self._lines

    def line(self, loc: tuple[Any, ...]) -> int | None:
        loc = tuple(loc)
        while loc:
            if loc in self.lines:
                return self.lines[loc]
            loc = loc[:-1]
        return self.lines.get(())

    def error(self, loc: tuple[Any, ...], message: str, hint: str | None = None) -> ScenarioError:
        if hint is None:
            for part in reversed(loc):
                if isinstance(part, str) and part in HINTS:
                    hint = HINTS[part]
                    break
            else:
                hint = GENERIC_HINT
        return ScenarioError(message, file=self.file, line=self.line(loc), field=_path_str(loc) or None, hint=hint)


_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UNION_TAGS = {"float", "int", "str", "list", "tuple", "bool", "dict"}


def _plain_loc(err: Any) -> tuple[Any, ...]:
    """The location without pydantic's union-branch tags (e.g. 'float', 'tuple[...]')."""
    return tuple(p for p in err["loc"] if isinstance(p, int) or (p not in _UNION_TAGS and _FIELD.match(p)))


def _pydantic_error(exc: ValidationError, loc8: _Locator) -> ScenarioError:
    errors = exc.errors()
    err = errors[0]
    loc = _plain_loc(err)
    # A union (a number or [low, high]) fails in each branch: `[180, 1e308]` is no number, and its item 1
    # is over the limit; the deeper error of the same field says what is wrong.
    deeper = [e for e in errors[1:] if len(_plain_loc(e)) > len(loc) and _plain_loc(e)[:len(loc)] == loc]
    if deeper and err["type"] in ("float_type", "int_type", "float_parsing", "int_parsing", "string_type"):
        err = deeper[0]
        loc = _plain_loc(err)
    kind = err["type"]
    given = err.get("input")
    if kind == "extra_forbidden":
        message = f"unknown field `{loc[-1]}`"
        hint = "unknown fields are errors so that a typo cannot pass silently; check the spelling."
        return loc8.error(loc, message, hint)
    if kind == "missing":
        return loc8.error(loc, "required field is missing")
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    text = f"{msg[0].lower()}{msg[1:]}"
    if kind != "value_error" and "got" not in text and given is not None and not isinstance(given, (dict, list)):
        text += f", got {given!r}"
    return loc8.error(loc, text)


def read_scenario_data(path: str | Path) -> tuple[dict[str, Any], _Locator]:

    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"cannot read the scenario: {exc.strerror}", file=p,
                            hint="check the path; `gpuplan init` writes a starter scenario.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"not UTF-8 text (byte {exc.start})", file=p,
                            hint="save the scenario as UTF-8.") from None
    return parse_scenario_text(text, str(p))


_LISTS = {"workloads": limits.MAX_WORKLOADS, "offers": limits.MAX_OFFERS}
_SMALL = 100_000  # characters: fewer than 10,000 workloads of ~10 characters each, so no need to count


def check_size(text: str, name: str) -> None:
    """Refuse more than `limits.MAX_WORKLOADS` workloads or `limits.MAX_OFFERS` offers from libyaml's events,
    stopping at the first item past the limit: a 21 MB file of 200,000 workloads is refused in ~0.1 s
    instead of being composed (8 s, 1.2 GB). Text that is not YAML is left to the parser's error."""
    if len(text) < _SMALL:
        return
    import yaml

    depth = 0  # 1: the document's mapping; 2: a top-level value
    key: str | None = None  # the top-level key whose value comes next
    counting: str | None = None
    count = 0
    expect_key = False
    try:
        for ev in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(ev, yaml.CollectionStartEvent):
                if depth == 1 and key in _LISTS and isinstance(ev, yaml.SequenceStartEvent):
                    counting, count = key, 0
                elif depth == 2 and counting:
                    count += 1
                depth += 1
                expect_key = depth == 1
            elif isinstance(ev, yaml.CollectionEndEvent):
                depth -= 1
                if depth == 1:
                    counting, key, expect_key = None, None, True
            elif isinstance(ev, yaml.ScalarEvent | yaml.AliasEvent):
                if depth == 1:
                    key = ev.value if expect_key and isinstance(ev, yaml.ScalarEvent) else None
                    expect_key = not expect_key
                elif depth == 2 and counting:
                    count += 1
            else:
                continue
            if counting and count > _LISTS[counting]:
                at = ev.start_mark.line + 1 if ev.start_mark else None
                raise limits.over(count, _LISTS[counting], what="at least ", unit=counting, field=counting,
                                  file=name, line=at, error=ScenarioError,
                                  hint="split the scenario; docs/limits.md lists every input limit.")
    except yaml.YAMLError:
        return


def parse_scenario_text(text: str, name: str) -> tuple[dict[str, Any], _Locator]:
    check_size(text, name)
    try:
        data, root = _compose(text)
    except _TooBig as exc:
        if not exc.aliased:
            raise limits.over(exc.n, MAX_EXPANDED_VALUES, what="", unit="YAML values", field=None, file=name,
                              line=1, error=ScenarioError, hint="split the scenario.") from None
        raise ScenarioError(
            f"the YAML aliases expand to {exc.n:,} values (at most {MAX_EXPANDED_VALUES:,} are read)",
            file=name, line=1, hint="use fewer nested anchors and aliases (&name / *name).") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ScenarioError(
            f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
            file=name, line=(mark.line + 1) if mark else None,
            hint="check indentation and that lists use `- ` consistently near that line.",
        ) from None
    if not isinstance(data, dict):
        raise ScenarioError("a scenario is a YAML mapping with version, currency, offers and workloads",
                            file=name, line=1, hint=GENERIC_HINT)
    return data, _Locator(name, root)


def load_scenario(path: str | Path, catalog: Catalog | str | Path | None = None) -> Scenario:
    """Read, validate and resolve a scenario file."""
    data, loc8 = read_scenario_data(path)
    return build_scenario(data, loc8, catalog)


def scenario_from_text(text: str, name: str = "<scenario>", catalog: Catalog | str | Path | None = None) -> Scenario:
    data, loc8 = parse_scenario_text(text, name)
    return build_scenario(data, loc8, catalog)


def build_scenario(data: dict[str, Any], loc8: _Locator, catalog: Catalog | str | Path | None) -> Scenario:
    cat = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
    try:
        model = ScenarioIn.model_validate({k: v for k, v in data.items() if k != "fx"})
    except ValidationError as exc:
        raise _pydantic_error(exc, loc8) from None
    fx = read_fx(data.get("fx"), model.currency, loc8.error)  # gpuplan.inputs.fx

    dpm = model.days_per_month
    sites, links = _resolve_sites(model, loc8)
    offers: list[Offer] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(model.offers):
        offer = _resolve_offer(raw, i, model.currency, dpm, cat, loc8, data["offers"][i], fx, sites)
        if offer.id in seen:
            raise loc8.error(("offers", i, "id"), f"duplicate offer id `{offer.id}` (also offers[{seen[offer.id]}])",
                             "offer ids must be unique.")
        seen[offer.id] = i
        offers.append(offer)

    start = model.start or scenario_today()
    workloads: list[Workload] = []
    wseen: dict[str, int] = {}
    for i, w in enumerate(model.workloads):
        if w.id in wseen:
            raise loc8.error(("workloads", i, "id"), f"duplicate workload id `{w.id}`", "workload ids must be unique.")
        wseen[w.id] = i
        workloads.append(_dated(_resolve_workload(w, i, cat, loc8, sites), w, i, start, loc8))
        bad = {"elastic"} & set(w.requires) and ({"compliance", "custom-driver"} & set(w.requires))
        if bad:
            raise loc8.error(("workloads", i, "requires"),
                             "`elastic` (containers only) conflicts with compliance/custom-driver (bare metal only)",
                             "a workload cannot require both; split it into two workloads.")

    offer_gpus = {o.gpu for o in offers}
    for i, resolved in enumerate(workloads):
        if not set(resolved.gpus_allowed) & offer_gpus:
            raise loc8.error(("workloads", i, "gpu"),
                             f"no offer provides {', '.join(resolved.gpus_allowed)}",
                             f"offers provide: {', '.join(sorted(offer_gpus))}; add an offer or change the GPU.")

    for i, resolved in enumerate(workloads):
        d = resolved.data
        if d is None:
            continue
        for o in offers:
            if o.site is None or o.remote_data or set(resolved.gpus_allowed).isdisjoint({o.gpu}):
                continue
            if route(links, d.site, o.site) is None:
                raise loc8.error(("workloads", i, "data", "site"),
                                 f"no route for the data of `{resolved.id}` from {d.site} to {o.site} "
                                 f"(offer `{o.id}`)",
                                 "add a `links:` entry between the sites, or mark the offer `remote_data: true` "
                                 "if it reads the data where it is.")

    team = Team(engineer_hour_cost=model.team.engineer_hour_cost, researcher_hour_cost=model.team.researcher_hour_cost)
    return Scenario(
        currency=model.currency,
        team=team,
        days_per_month=dpm,
        offers=tuple(offers),
        workloads=tuple(workloads),
        path=loc8.file,
        catalog_files=cat.files,
        market=resolve_market(model.market, dpm, loc8.error),
        sites=sites,
        links=links,
        start=start,
        commitments=_commitments(model, offers, start, loc8),
    )


def scenario_today() -> date:
    """The default `start:` of a scenario: today (UTC), or SOURCE_DATE_EPOCH's day when set (reproducible runs)."""
    import os

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=UTC).date()
    return datetime.now(tz=UTC).date()


def _dated(r: Workload, w: Any, i: int, start: date, loc8: _Locator) -> Workload:
    """The workload's `start:` (hours after the scenario's), `once:` and `service:` (issue 25)."""
    offset = 0.0
    if w.start is not None:
        offset = (w.start - start).days * 24.0
        if offset < 0:
            raise loc8.error(("workloads", i, "start"), f"starts {w.start} before the scenario ({start})",
                             "give a date on or after the scenario's `start:`, or move the scenario's start.")
    service = None
    if w.service is not None:
        if w.kind != "inference":
            raise loc8.error(("workloads", i, "service"), "`service:` sizes an inference service",
                             "use it with `kind: inference`; `gpus` is then the GPUs of one replica.")
        sv = w.service
        prof = tuple(float(x) for x in sv.daily_profile) if sv.daily_profile is not None else (1.0,) * 24
        service = Service(sv.peak, sv.unit, sv.per_replica, sv.min_replicas, prof, r.gpus)
        if max(service.replicas()) <= 0:
            raise loc8.error(("workloads", i, "service"), "the service never needs a replica",
                             "give min_replicas >= 1 or a daily_profile with a share above 0.")
        r = with_service(r, service)  # as one schedule: the peak's cards, the replica-hours of a day
    return replace(r, start_hours=offset, once=bool(w.once))


def _commitments(model: ScenarioIn, offers: list[Offer], start: date, loc8: _Locator) -> tuple[Commitment, ...]:
    out = []
    ids = {o.id: o for o in offers}
    for i, c in enumerate(model.commitments):
        o = ids.get(c.offer)
        if o is None or o.mode != "bare-metal":
            leases = ", ".join(x.id for x in offers if x.mode == "bare-metal") or "none"
            raise loc8.error(("commitments", i, "offer"), f"`{c.offer}` is not a bare-metal offer of the scenario",
                             f"name the lease's offer: {leases}.")
        hours = (c.until - start).days * 24.0
        if hours <= 0:
            raise loc8.error(("commitments", i, "until"), f"the lease ended on {c.until}, before the scenario starts",
                             "drop the commitment, or give the date it runs until.")
        out.append(Commitment(c.offer, c.cards, c.until, hours, c.paid))
    return tuple(out)


def _resolve_sites(model: ScenarioIn, loc8: _Locator) -> tuple[tuple[str, ...], tuple[Link, ...]]:
    sites: list[str] = []
    for i, site in enumerate(model.sites):
        if site.id in sites:
            raise loc8.error(("sites", i, "id"), f"duplicate site `{site.id}`", "site ids must be unique.")
        sites.append(site.id)
    links = []
    for i, lk in enumerate(model.links):
        for key, name in (("from", lk.from_), ("to", lk.to)):
            if name not in sites:
                raise loc8.error(("links", i, key), f"a link to an unknown site `{name}`",
                                 f"sites: {', '.join(sites) or 'none'}; list it under `sites:`.")
        links.append(Link(lk.from_, lk.to, lk.gbps, lk.cost_per_gb, lk.latency_ms, lk.one_way))
    return tuple(sites), tuple(links)


def _gpu(cat: Catalog, loc8: _Locator, loc: tuple[Any, ...], name: str) -> tuple[str, str | None]:
    """A GPU as written -> (catalog id, a note when the name left the form factor to assume)."""
    try:
        hit = cat.resolve_gpu(name)
    except GpuNameError as exc:
        raise loc8.error(loc, exc.message, exc.hint) from None
    return hit.id, (f"gpu: {hit.note}" if hit.note else None)


def _gpu_or_none(cat: Catalog, name: str) -> str:
    try:
        return cat.resolve_gpu(name).id
    except GpuNameError:
        return name


def _duration(loc8: _Locator, loc: tuple[Any, ...], value: Any) -> float:
    try:
        hours = parse_duration(value)
    except UnitError as exc:
        raise loc8.error(loc, str(exc), "durations are written 90m, 12h, 30d or 2w.") from None
    if hours > limits.MAX_DURATION_HOURS:
        raise limits.over(hours, limits.MAX_DURATION_HOURS, what=f"{value}: ", unit="hours", field=_path_str(loc),
                          file=loc8.file, line=loc8.line(loc), error=ScenarioError,
                          hint="durations are at most 3650d (10 years); docs/limits.md lists every input limit.")
    return hours


def _from_catalog(raw: OfferIn, i: int, currency: str, cat: Catalog, loc8: _Locator, raw_dict: dict[str, Any],
                  fx: Fx | None) -> tuple[OfferIn, str | None]:
    """An offer that says `use: <catalog offer>`: the catalog's fields (converted to the scenario's currency
    when the offer gives no price of its own) under the offer's own; and the conversion's note, if any."""
    fx_note: str | None = None
    if raw.use is not None:
        if raw.use not in cat.offers:
            raise loc8.error(("offers", i, "use"), f"no catalog offer `{raw.use}`",
                             "`gpuplan catalog offers` lists them; add your own with --catalog FILE.")
        base = dict(cat.offers[raw.use])
        cat_currency = base.pop("currency", currency)
        if cat_currency != currency and "price" not in raw_dict:
            fx_note = convert_offer(base, raw.use, cat_currency, currency, fx, ("offers", i, "use"),
                                    loc8.error)
        base.pop("_catalog_file", None)
        try:
            base_model = OfferIn.model_validate(base)
        except ValidationError as exc:
            raise loc8.error(("offers", i, "use"),
                             f"catalog offer `{raw.use}` is invalid: {exc.errors()[0]['msg']}") from None
        merged = base_model.model_dump(exclude_none=True)
        merged.update(raw.model_dump(exclude_none=True, exclude={"use"}))
        merged.setdefault("id", raw.use)
        raw = OfferIn.model_validate(merged)
    return raw, fx_note


def _resolve_offer(raw: OfferIn, i: int, currency: str, dpm: float, cat: Catalog, loc8: _Locator,
                   raw_dict: dict[str, Any], fx: Fx | None = None, sites: tuple[str, ...] = ()) -> Offer:
    raw, fx_note = _from_catalog(raw, i, currency, cat, loc8, raw_dict, fx)
    used: list[str] = []
    owned: Owned | None = None
    if raw.mode == "owned" or any(getattr(raw, k) is not None for k in OWNED_FIELDS):
        raw, owned = _resolve_owned(raw, i, dpm, cat, loc8, used)
    for key in ("id", "gpu", "mode", "price"):
        if getattr(raw, key) is None:
            raise loc8.error(("offers", i, key), "required field is missing",
                             "an offer needs id, gpu, mode and price (or `use: <catalog offer id>`).")
    assert raw.id and raw.gpu and raw.mode and raw.price and raw.mode != "owned"
    gpu_id, gpu_note = _gpu(cat, loc8, ("offers", i, "gpu"), raw.gpu)
    spec = cat.gpus[gpu_id]
    platform: Platform = raw.mode
    mode_defaults = cat.defaults["modes"][platform]
    used[:0] = [n for n in (gpu_note, fx_note) if n]

    def pick(name: str, value: Any, default: Any) -> Any:
        if value is None:
            used.append(name)
            return default
        return value

    gpn = pick("gpus_per_node", raw.gpus_per_node, 8)
    lease_unit = pick("lease_unit", raw.lease_unit, "gpu")
    amount = raw.price.amount
    amt = Range(*amount) if isinstance(amount, tuple) else Range(amount, amount)
    pg = Range(
        per_gpu_hour(amt.low, raw.price.per, gpus_per_node=gpn, days_per_month=dpm),
        per_gpu_hour(amt.high, raw.price.per, gpus_per_node=gpn, days_per_month=dpm),
    )
    min_term = _duration(loc8, ("offers", i, "min_term"), pick("min_term", raw.min_term, "0"))
    setup = _duration(loc8, ("offers", i, "setup"), pick("setup", raw.setup, mode_defaults["setup"]))
    try:
        ops_hours, ops_per = parse_ops(pick("ops", raw.ops, mode_defaults["ops"]))
    except UnitError as exc:
        raise loc8.error(("offers", i, "ops"), str(exc), "ops is engineer time such as 20h/node-month.") from None
    tenancy = pick("tenancy", raw.tenancy, cat.defaults["tenancy_defaults"][platform])
    net = raw.network
    for flat, key in (("network_gbps", "gbps"), ("rdma", "rdma")):
        a, b = getattr(raw, flat), getattr(net, key) if net else None
        if a is not None and b is not None and a != b:
            raise loc8.error(("offers", i, "network", key), f"network.{key} ({b}) contradicts {flat} ({a})",
                             f"give the network once: `network: {{gbps, rdma, nic}}` (or the flat {flat}).")
    gbps = raw.network_gbps if raw.network_gbps is not None else (net.gbps if net else None)
    rdma = raw.rdma if raw.rdma is not None else (net.rdma if net else None)
    nic = pick("network.nic", net.nic if net else None, cat.defaults["nic_defaults"][platform][tenancy])
    overhead = _resolve_overhead(raw.overhead, ("offers", i, "overhead"), platform, tenancy, nic, cat, loc8, used)
    overhead_alt = None
    if platform == "container" and raw.tenancy is None and tenancy != "dedicated":
        # unknown tenancy: priced over the range from a dedicated node to the default shared host
        alt_nic = net.nic if net and net.nic else cat.defaults["nic_defaults"][platform]["dedicated"]
        overhead_alt = _resolve_overhead(raw.overhead, ("offers", i, "overhead"), platform, "dedicated", alt_nic,
                                         cat, loc8, [])
    # The mode says how the platform behaves; billing follows the price: a VM priced by the hour with no
    # term of a day or more is elastic like a container, one leased by the day or month is a lease.
    billing: Mode = "container" if platform == "container" else "bare-metal"
    if platform == "vm":
        hourly = raw.price.per in ("gpu-hour", "node-hour") and min_term < 24
        billing = "container" if hourly else "bare-metal"
    site = raw.site
    if site is not None and site not in sites:
        raise loc8.error(("offers", i, "site"), f"unknown site `{site}`",
                         f"sites: {', '.join(sites) or 'none'}; list it under `sites:`.")
    rel = cat.defaults["interruptions"]
    rec = rel["recovery"]
    spares = raw.spares if raw.spares is not None else 0
    response = coverage = None
    if raw.support is not None:
        if raw.support.response is not None:
            response = _duration(loc8, ("offers", i, "support", "response"), raw.support.response)
        coverage = raw.support.coverage
    if billing == "container":  # elastic: rescheduled where the pool has room
        recovery = parse_duration(rec["vm" if platform == "vm" else "container"])
    elif spares > 0:
        recovery = parse_duration(rec["spare"])
    else:
        wait = response if response is not None else parse_duration(rec["response_unknown"])
        if response is None:
            used.append("support.response")
        if coverage == "business-hours":  # the clock runs 45 of 168 hours a week
            wait *= 168 / float(rec["business_hours_per_week"])
        recovery = wait + parse_duration(rec["repair"])
    rate = raw.interruptions_per_gpu_day
    if rate is None:
        used.append("interruptions_per_gpu_day")
        rate = float(rel["per_gpu_day"])
    capacity = raw.capacity or "on-demand"
    if raw.preemption is not None and capacity != "spot":
        raise loc8.error(("offers", i, "preemption"), f"preemption is given but the capacity is {capacity}",
                         "only spot capacity is reclaimed: add `capacity: spot`, or drop `preemption:`.")
    preemption = None
    if capacity == "spot":
        if billing != "container":
            raise loc8.error(("offers", i, "capacity"), "spot capacity is sold by the hour, but this offer is a lease",
                             "give spot offers an hourly price (per gpu-hour or node-hour) and no min_term "
                             "of a day or more, on mode vm or container.")
        preemption = _resolve_preemption(raw, i, gpn, cat, loc8, used)
    return Offer(
        id=raw.id,
        provider=raw.provider,
        gpu=gpu_id,
        mode=billing,
        price_amount=amt,
        price_per=raw.price.per,
        price_per_gpu_hour=pg,
        lease_unit=lease_unit,
        gpus_per_node=gpn,
        min_term_hours=min_term,
        network_gbps=gbps,
        interconnect=pick("interconnect", raw.interconnect, spec.interconnect),
        rdma=rdma,
        setup_hours=setup,
        ops_hours=ops_hours,
        ops_per=ops_per,
        overhead=overhead,
        platform=platform,
        tenancy=tenancy,
        nic=nic,
        site=site,
        remote_data=raw.remote_data,
        support_response_hours=response,
        support_coverage=coverage,
        spares=spares,
        interruptions_per_gpu_day=float(rate),
        recovery_hours=recovery,
        source=raw.source,
        as_of=raw.as_of,
        defaults_used=tuple(used),
        terms=resolve_terms(raw.terms, i, gpn, dpm, loc8.error),
        overhead_alt=overhead_alt,
        sharing=raw.sharing,
        capacity=capacity,
        preemption=preemption,
        owned=owned,
    )


def _resolve_preemption(raw: OfferIn, i: int, gpn: int, cat: Catalog, loc8: _Locator,
                        used: list[str]) -> Preemption:
    """The offer's `preemption:`, each field it leaves out from the catalog's default for its provider."""
    spot = cat.defaults["spot"]
    providers = spot["providers"]
    key = (raw.provider or "").strip().lower()
    name = key if key in providers else str(spot["default"])
    d = providers[name]
    given = raw.preemption
    loc = ("offers", i, "preemption")
    if given is None:
        used.append(f"preemption ({name})")
        rate_raw: Any = d["rate"]
        per = str(d["per"])
    else:
        rate_raw, per = given.rate, given.per
    written = _as_range(rate_raw)
    k = gpn if per == "gpu-hour" else 1  # an instance is a node
    rate = Range(written.low * k, written.high * k)

    def dur(field: str, allow_none: bool) -> float | None:
        value = getattr(given, field, None) if given is not None else None
        if value is None:
            value = d.get(field)
            if value is None:
                return None
            if given is not None:
                used.append(f"preemption.{field}")
        if allow_none and str(value).strip().lower() == "none":
            return None
        return _duration(loc8, (*loc, field), value)

    notice = dur("notice", False)
    life = dur("max_lifetime", True)
    if life is not None and life <= 0:
        raise loc8.error((*loc, "max_lifetime"), "max_lifetime must be longer than 0",
                         "for example 24h, or none for no limit.")
    restart = _duration(loc8, (*loc, "restart"), given.restart) if given is not None and given.restart else None
    source = given.source if given is not None and given.source else " ".join(str(d.get("source", "")).split())
    as_of = given.as_of if given is not None and given.as_of else d.get("as_of")
    return Preemption(rate=rate, per=per, rate_as_written=written, notice_hours=notice or 0.0,
                      max_lifetime_hours=life, restart_hours=restart, source=source,
                      as_of=None if as_of is None else str(as_of))


OWNED_FIELDS = ("purchase", "life", "resale", "power", "colocation", "lead_time")
OWNED_HINT = ("an owned offer is {id, gpu, mode: owned, gpus_per_node, purchase: {amount, per: node}, life: 4y, "
              "resale: 0.3, power: {kw_per_node, pue, price_per_kwh}, colocation: {amount, per: node-month}, "
              "lead_time: 8w}.")


def _resolve_owned(raw: OfferIn, i: int, dpm: float, cat: Catalog, loc8: _Locator,
                   used: list[str]) -> tuple[OfferIn, Owned]:
    """`mode: owned` (issue 28): the purchase, life, power and colocation resolved per node, and the offer
    as a node lease of bare metal at `models.owned.fixed_per_node_hour` (what a node costs per hour held)."""
    if raw.mode != "owned":
        given = next(k for k in OWNED_FIELDS if getattr(raw, k) is not None)
        raise loc8.error(("offers", i, given), f"`{given}` is only for bought servers (mode: owned), "
                         f"this offer is mode: {raw.mode or '(missing)'}",
                         "set `mode: owned` to price bought servers, or remove the field from a rented offer.")
    if raw.price is not None:
        raise loc8.error(("offers", i, "price"), "an owned offer has no rental price: its cost per hour comes "
                         "from purchase, life, resale, power and colocation", OWNED_HINT)
    for key in ("purchase", "life", "power"):
        if getattr(raw, key) is None:
            raise loc8.error(("offers", i, key), f"required for mode: owned; `{key}` is missing", OWNED_HINT)
    assert raw.purchase is not None and raw.life is not None and raw.power is not None
    if raw.lease_unit == "gpu":
        raise loc8.error(("offers", i, "lease_unit"), "owned servers are held by the node",
                         "leave lease_unit out for an owned offer (a bought server is a whole node).")
    gpn = raw.gpus_per_node or 8
    if raw.gpus_per_node is None:
        used.append("gpus_per_node")
    life = _duration(loc8, ("offers", i, "life"), raw.life)
    if life <= 0:
        raise loc8.error(("offers", i, "life"), f"life must be longer than 0, got {raw.life!r}",
                         "life is the depreciation period, e.g. 4y or 5y.")
    lead = 0.0
    if raw.lead_time is not None:
        lead = _duration(loc8, ("offers", i, "lead_time"), raw.lead_time)
    else:
        used.append("lead_time")
    ow = cat.defaults["owned"]
    idle_share = raw.power.idle_share
    if idle_share is None:
        used.append("power.idle_share")
        idle_share = float(ow["idle_share"])
    colo = 0.0
    if raw.colocation is not None:
        amount = raw.colocation.amount
        mid = (amount[0] + amount[1]) / 2 if isinstance(amount, tuple) else amount
        colo = per_gpu_hour(mid, raw.colocation.per, gpus_per_node=gpn, days_per_month=dpm) * gpn
    else:
        used.append("colocation")
    resale = raw.resale if raw.resale is not None else 0.0
    if raw.resale is None:
        used.append("resale")
    purchase = raw.purchase.amount * (gpn if raw.purchase.per == "gpu" else 1)
    owned = Owned(purchase_per_node=purchase, life_hours=life, resale=resale, kw_per_node=raw.power.kw_per_node,
                  pue=raw.power.pue, price_per_kwh=raw.power.price_per_kwh, idle_share=idle_share,
                  colocation_per_node_hour=colo, lead_time_hours=lead)
    fixed = owned.fixed_per_node_hour
    as_lease = raw.model_copy(update={
        "mode": "bare-metal", "lease_unit": "node", "gpus_per_node": gpn,
        "price": PriceIn(amount=fixed, per="node-hour"),
        **{k: None for k in OWNED_FIELDS}})
    return as_lease, owned


def _overhead_default(platform: str, tenancy: str, nic: str, cat: Catalog) -> dict[str, Any]:
    """The catalog's first `overheads` entry whose `match` fits (mode, tenancy, nic)."""
    have = {"mode": platform, "tenancy": tenancy, "nic": nic}
    for entry in cat.defaults["overheads"]:
        if all(have.get(k) == v for k, v in entry["match"].items()):
            return dict(entry)
    raise KeyError((platform, tenancy, nic))  # the bundled table ends with catch-alls per mode


def _as_range(v: Any) -> Range:
    return Range(float(v[0]), float(v[1])) if isinstance(v, (list, tuple)) else Range(float(v), float(v))


def _as_jitter(v: Any) -> Jitter:
    if isinstance(v, JitterIn):
        return Jitter("tail", v.median, v.p99)
    if isinstance(v, dict):
        return Jitter("tail", float(v["median"]), float(v["p99"]))
    r = _as_range(v)
    return Jitter("uniform", r.low, r.high)


def _resolve_overhead(ov: OverheadIn | None, loc: tuple[Any, ...], platform: str, tenancy: str, nic: str,
                      cat: Catalog, loc8: _Locator, used: list[str]) -> Overhead:
    """Each overhead the offer states, else the catalog's default for (mode, tenancy, nic).

    The flat `interconnect` fraction of version-1 files means what it meant: one fraction for the
    GPU interconnect and the network alike, so it sets both intra_node and inter_node."""
    d = _overhead_default(platform, tenancy, nic, cat)
    if ov is not None and ov.interconnect is not None and (ov.intra_node is not None or ov.inter_node is not None):
        raise loc8.error((*loc, "interconnect"), "give either interconnect or intra_node/inter_node, not both",
                         "interconnect (the flat form) sets both intra_node and inter_node.")
    given: dict[str, Any] = {}
    if ov is not None:
        given = {k: v for k, v in (("compute", ov.compute), ("intra_node", ov.intra_node),
                                   ("inter_node", ov.inter_node), ("jitter", ov.jitter)) if v is not None}
        if ov.interconnect is not None:
            given["intra_node"] = given["inter_node"] = ov.interconnect
    values: dict[str, Any] = {}
    defaulted = False
    for name in ("compute", "intra_node", "inter_node", "jitter"):
        if name in given:
            values[name] = given[name]
        else:
            defaulted = True
            used.append(f"overhead.{name}")
            values[name] = d[name]
    return Overhead(compute=_as_range(values["compute"]), intra_node=_as_range(values["intra_node"]),
                    inter_node=_as_range(values["inter_node"]), jitter=_as_jitter(values["jitter"]),
                    source=" ".join(str(d.get("source", "")).split()) if defaulted else None,
                    estimate=bool(d.get("estimate", False)) and defaulted)


def _resolve_workload(w: Any, i: int, cat: Catalog, loc8: _Locator, sites: tuple[str, ...] = ()) -> Workload:
    gpus_allowed = (w.gpu,) if isinstance(w.gpu, str) else tuple(w.gpu)
    if not gpus_allowed:
        raise loc8.error(("workloads", i, "gpu"), "an empty list of GPUs", "name at least one GPU id.")
    named: dict[str, str] = {}  # each GPU as written -> its catalog id (gpuplan.inputs.gpu_names)
    gpu_notes: list[str] = []
    for j, g in enumerate(gpus_allowed):
        loc = ("workloads", i, "gpu") if isinstance(w.gpu, str) else ("workloads", i, "gpu", j)
        named[g], note = _gpu(cat, loc8, loc, g)
        gpu_notes += [note] if note else []
    gpus_allowed = tuple(dict.fromkeys(named[g] for g in gpus_allowed))
    duration = _duration(loc8, ("workloads", i, "duration"), w.duration)
    if duration <= 0:
        raise loc8.error(("workloads", i, "duration"), "duration must be longer than 0", "for example 30d.")
    kinds = cat.defaults["kinds"][w.kind]
    used: list[str] = list(gpu_notes)
    util = w.utilization
    if util is None:
        used.append("utilization")
        util = float(kinds["utilization"])
    comm = w.communication
    if comm is None:
        used.append("communication")
        comm = float(kinds["communication"])
    step = Step(w.step.compute_s, w.step.gradient_gb, w.step.overlap) if w.step is not None else None
    data = None
    if w.data is not None:
        if w.data.site not in sites:
            raise loc8.error(("workloads", i, "data", "site"), f"unknown site `{w.data.site}`",
                             f"sites: {', '.join(sites) or 'none'}; list it under `sites:`.")
        data = Data(w.data.size_gb, w.data.site, w.data.moves)
    if w.checkpoint_interval is not None and w.checkpoint_interval.strip().lower() == "none":
        checkpoint = math.inf  # no checkpoints: a preempted or interrupted run starts over
    elif w.checkpoint_interval is not None:
        checkpoint = _duration(loc8, ("workloads", i, "checkpoint_interval"), w.checkpoint_interval)
        if checkpoint <= 0:
            raise loc8.error(("workloads", i, "checkpoint_interval"), "checkpoint_interval must be longer than 0",
                             "for example 2h.")
    else:
        used.append("checkpoint_interval")
        checkpoint = parse_duration(cat.defaults["interruptions"]["checkpoint_interval"])
    speed: list[tuple[str, float]] = []
    for gpu_name, factor in (w.speed or {}).items():
        gpu_name = named.get(gpu_name) or _gpu_or_none(cat, gpu_name)
        if gpu_name not in gpus_allowed:
            raise loc8.error(("workloads", i, "speed", gpu_name), f"`{gpu_name}` is not one of this workload's GPUs",
                             f"speed keys are GPUs from its `gpu:` list ({', '.join(gpus_allowed)}).")
        speed.append((gpu_name, float(factor)))
    return Workload(
        id=w.id,
        kind=w.kind,
        gpus_allowed=gpus_allowed,
        gpus=max(1, int(w.gpus)),
        share=float(w.gpus) if w.gpus < 1 else 1.0,
        hours_per_day=float(w.hours_per_day),
        days_per_week=w.days_per_week,
        duration_hours=duration,
        utilization=float(util),
        communication=float(comm),
        requires=frozenset(w.requires),
        window=w.window,
        defaults_used=tuple(used),
        step=step,
        data_wait=w.data_wait,
        memory_gb=w.memory_gb,
        speed=tuple(speed),
        data=data,
        checkpoint_hours=checkpoint,
    )
