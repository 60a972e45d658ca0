"""The seed article's vendor checklist, per offer and per provider (issue 17): pure, no I/O.

Four checks per offer, each pass | warn | fail | unknown with its evidence (message keys and values;
the renderer words them):

network-25g       node network >= `min_network_gbps` (the catalog's 25, from the article): pass; below: fail;
                  the offer's `network.gbps`, or the figure a `gpuplan probe` measured on the offer's node
                  (`measured`), which wins; unknown when neither says.
nvlink-roce       NVLink/HCCS inside the node and RoCE/InfiniBand between nodes. Both: pass. No RDMA while a
                  workload on the offer spans nodes (more GPUs than a node has, or `requires: [multi-node]`):
                  fail. One of the two missing otherwise: warn (the evidence names the workloads and whether
                  they fit one node). The offer's `rdma` unsaid: unknown. The interconnect defaults to the
                  GPU's (the catalog's entry for it); the evidence says so.
data-locality     per workload that can run on the offer (its GPU is one the workload accepts) and names its
                  data: at the offer's site, or read in place (`remote_data`): pass; else the transfer
                  (`models.delays.transfer`: size over the slower of the route and the node network, times
                  the moves) against the workload's duration: up to DATA_WARN_SHARE pass, up to
                  DATA_FAIL_SHARE warn, above: fail. An offer without a site while a workload's data has one:
                  unknown. The offer's status is the worst of its workloads' (fail > warn > unknown > pass).
support-response  the vendor's written commitment: <= SUPPORT_PASS_HOURS with 24x7 coverage: pass; above
                  SUPPORT_FAIL_HOURS: fail; otherwise (slower, business hours, or coverage unsaid): warn;
                  no response time: unknown.

The data thresholds are gpuplan's choice, not the article's: 1% of a run (about 14 h of a 60-day run)
is the kind of wait a team notices but absorbs; 10% (6 days of 60) changes the schedule and, priced at
the researchers' hour, often the verdict. The support thresholds are gpuplan's choice too, not a
published standard: a first response within 4 h at any hour keeps a failed leased node's wait within
a shift; past a day a failed node stops a synchronous job for a day or more (recovery in `compare`
grows with the response time, see models.delays).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from gpuplan.inputs.calendar import active_days
from gpuplan.inputs.scenario_types import Offer, Scenario, Workload
from gpuplan.models.delays import transfer

Status = Literal["pass", "warn", "fail", "unknown"]
STATUSES: tuple[Status, ...] = ("pass", "warn", "fail", "unknown")
CHECK_IDS = ("network-25g", "nvlink-roce", "data-locality", "support-response")

DATA_WARN_SHARE = 0.01  # transfer time above this share of the workload's duration: warn
DATA_FAIL_SHARE = 0.10  # above this: fail
SUPPORT_PASS_HOURS = 4.0  # first response within this, around the clock: pass
SUPPORT_FAIL_HOURS = 24.0  # a written response time above this: fail

_WORST = {"pass": 0, "unknown": 1, "warn": 2, "fail": 3}


@dataclass(frozen=True)
class Note:
    """One sentence of evidence: a message key (`vendors.ev.<key>`) and its values."""

    key: str
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    id: str
    status: Status
    notes: tuple[Note, ...]


@dataclass(frozen=True)
class OfferChecks:
    offer: str
    provider: str | None
    checks: tuple[Check, ...]


@dataclass(frozen=True)
class ProviderSummary:
    provider: str | None  # None: offers that name no provider
    offers: tuple[str, ...]
    counts: Mapping[Status, int]
    not_passed: tuple[tuple[str, str, Status], ...]  # (offer, check, status) of every check that did not pass


@dataclass(frozen=True)
class MeasuredNetwork:
    """The node network a `gpuplan probe` saw on one offer's node."""

    offer: str
    gbps: float
    interface: str
    file: str


@dataclass(frozen=True)
class Thresholds:
    min_network_gbps: float
    data_warn_share: float = DATA_WARN_SHARE
    data_fail_share: float = DATA_FAIL_SHARE
    support_pass_hours: float = SUPPORT_PASS_HOURS
    support_fail_hours: float = SUPPORT_FAIL_HOURS


@dataclass(frozen=True)
class VendorsResult:
    scenario: Scenario
    thresholds: Thresholds
    offers: tuple[OfferChecks, ...]
    providers: tuple[ProviderSummary, ...]
    measured: MeasuredNetwork | None = None


def probe_network(doc: Mapping[str, Any]) -> tuple[float, str] | None:
    """The fastest physical link a `gpuplan.probe/1` document reports: (Gbit/s, interface), or None.

    Virtual interfaces (veth, bridges, virtio) report fiction or nothing and are skipped, as the probe's
    own `network_speed` check does; an RDMA port counts at its rate. Raises ValueError on a document
    that is not a probe's."""
    if not isinstance(doc, Mapping) or doc.get("schema") != "gpuplan.probe/1":
        raise ValueError("not a `gpuplan probe -o json` document (no `schema: gpuplan.probe/1`)")
    network = doc.get("network")
    if not isinstance(network, list):
        raise ValueError("`network` is not a list")
    best: tuple[float, str] | None = None
    for nic in network:
        if not isinstance(nic, Mapping) or nic.get("virtual"):
            continue
        name = str(nic.get("name") or "?")
        rdma = nic.get("rdma")
        rate = rdma.get("rate_gbps") if isinstance(rdma, Mapping) else None
        for value in (nic.get("speed_gbps"), rate):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                continue
            if best is None or float(value) > best[0]:
                best = (float(value), name)
    return best


def _workloads_on(offer: Offer, scenario: Scenario) -> list[Workload]:
    return [w for w in scenario.workloads if offer.gpu in w.gpus_allowed]


def _multi_node(w: Workload, offer: Offer) -> bool:
    return w.gpus > offer.gpus_per_node or "multi-node" in w.requires


def network_check(offer: Offer, th: Thresholds, measured: MeasuredNetwork | None) -> Check:
    lim = th.min_network_gbps
    if measured is not None:
        notes = [Note("net_measured", {"gbps": measured.gbps, "interface": measured.interface,
                                       "file": measured.file, "min": lim})]
        if offer.network_gbps is not None:
            notes.append(Note("net_offer_says", {"gbps": offer.network_gbps}))
        return Check("network-25g", "pass" if measured.gbps >= lim else "fail", tuple(notes))
    if offer.network_gbps is None:
        return Check("network-25g", "unknown", (Note("net_unsaid", {"min": lim}),))
    ok = offer.network_gbps >= lim
    return Check("network-25g", "pass" if ok else "fail",
                 (Note("net_ok" if ok else "net_slow", {"gbps": offer.network_gbps, "min": lim}),))


def nvlink_roce_check(offer: Offer, scenario: Scenario) -> Check:
    intra = offer.interconnect in ("nvlink", "hccs")
    assumed = "interconnect" in offer.defaults_used
    notes = [Note(("intra_yes" if intra else "intra_no") + ("_gpu" if assumed else ""),
                  {"kind": offer.interconnect, "gpu": offer.gpu})]
    ws = _workloads_on(offer, scenario)
    multi = [w.id for w in ws if _multi_node(w, offer)]
    single = [w.id for w in ws if not _multi_node(w, offer)]
    if offer.rdma is None:
        notes.append(Note("rdma_unsaid"))
    elif offer.rdma == "none":
        notes.append(Note("rdma_no"))
    else:
        notes.append(Note("rdma_yes", {"kind": offer.rdma}))
    if multi:
        notes.append(Note("multi_node", {"workloads": tuple(multi), "per_node": offer.gpus_per_node}))
    if single:
        notes.append(Note("single_node", {"workloads": tuple(single), "per_node": offer.gpus_per_node}))
    if not ws:
        notes.append(Note("no_workloads", {"gpu": offer.gpu}))
    status: Status
    if offer.rdma is None:
        status = "unknown"
    elif offer.rdma == "none" and multi:
        status = "fail"
    elif offer.rdma == "none" or not intra:
        status = "warn"
    else:
        status = "pass"
    return Check("nvlink-roce", status, tuple(notes))


def data_check(offer: Offer, scenario: Scenario, th: Thresholds) -> Check:
    ws = _workloads_on(offer, scenario)
    with_data = [w for w in ws if w.data is not None]
    if not with_data:
        key = "no_data" if ws else "no_workloads"
        return Check("data-locality", "pass", (Note(key, {"gpu": offer.gpu}),))
    status: Status = "pass"
    notes: list[Note] = []
    for w in with_data:
        d = w.data
        assert d is not None
        base = {"workload": w.id, "gb": d.size_gb, "site": d.site, "offer_site": offer.site}
        st: Status
        if d.size_gb == 0:
            st, note = "pass", Note("data_empty", base)
        elif offer.remote_data:
            st, note = "pass", Note("data_remote", base)
        elif offer.site is None:
            st, note = "unknown", Note("data_no_site", base)
        elif offer.site == d.site:
            st, note = "pass", Note("data_local", base)
        else:
            try:
                tr = transfer(w, offer, scenario, active_days(w.duration_hours, w.days_per_week))
            except ValueError:  # the scenario reader refuses this; a scenario built by hand may not
                st, note = "fail", Note("data_no_route", base)
            else:
                share = tr.hours / w.duration_hours if w.duration_hours > 0 else float("inf")
                st = "pass" if share <= th.data_warn_share else ("warn" if share <= th.data_fail_share else "fail")
                note = Note("data_moves", {**base, "moves": tr.moves, "how": d.moves, "path": tr.path,
                                           "gbps": tr.gbps, "hours": tr.hours, "share": share,
                                           "days": w.duration_hours / 24, "cost": tr.cost,
                                           "currency": scenario.currency})
        notes.append(note)
        if _WORST[st] > _WORST[status]:
            status = st
    if status in ("warn", "fail"):
        notes.append(Note("data_thresholds", {"warn": th.data_warn_share, "fail": th.data_fail_share}))
    return Check("data-locality", status, tuple(notes))


def support_check(offer: Offer, th: Thresholds) -> Check:
    hours, coverage = offer.support_response_hours, offer.support_coverage
    extra: list[Note] = []
    if offer.mode == "container":
        extra.append(Note("support_elastic"))
    elif offer.spares > 0:
        extra.append(Note("support_spares", {"spares": offer.spares}))
    if hours is None:
        key = "support_unsaid" if coverage is None else "support_coverage_only"
        return Check("support-response", "unknown", (Note(key, {"coverage": coverage or ""}), *extra))
    values = {"hours": hours, "coverage": coverage or "", "pass": th.support_pass_hours,
              "fail": th.support_fail_hours}
    status: Status
    if hours > th.support_fail_hours:
        status, key = "fail", "support_too_slow"
    elif hours <= th.support_pass_hours and coverage == "24x7":
        status, key = "pass", "support_ok"
    elif coverage == "business-hours":
        status, key = "warn", "support_business_hours"
    elif coverage is None:
        status, key = "warn", "support_no_coverage"
    else:
        status, key = "warn", "support_slow"
    return Check("support-response", status, (Note(key, values), *extra))


def _summaries(offers: Sequence[OfferChecks]) -> tuple[ProviderSummary, ...]:
    order: dict[str | None, list[OfferChecks]] = {}
    for oc in offers:
        order.setdefault(oc.provider, []).append(oc)
    out = []
    for provider, group in order.items():
        counts: dict[Status, int] = dict.fromkeys(STATUSES, 0)
        bad: list[tuple[str, str, Status]] = []
        for oc in group:
            for c in oc.checks:
                counts[c.status] += 1
                if c.status != "pass":
                    bad.append((oc.offer, c.id, c.status))
        bad.sort(key=lambda x: -_WORST[x[2]])  # stable: fails first, then warnings, then unknowns
        out.append(ProviderSummary(provider, tuple(oc.offer for oc in group), counts, tuple(bad)))
    return tuple(out)


def check_vendors(scenario: Scenario, *, min_network_gbps: float,
                  measured: MeasuredNetwork | None = None) -> VendorsResult:
    """The checklist for every offer of `scenario`; `measured`: one offer's probed node network (it also
    sets the node-network side of that offer's data transfers)."""
    th = Thresholds(min_network_gbps=min_network_gbps)
    results = []
    for offer in scenario.offers:
        m = measured if measured is not None and measured.offer == offer.id else None
        o = replace(offer, network_gbps=m.gbps) if m is not None else offer
        checks = (network_check(offer, th, m), nvlink_roce_check(o, scenario), data_check(o, scenario, th),
                  support_check(o, th))
        results.append(OfferChecks(offer.id, offer.provider, checks))
    return VendorsResult(scenario, th, tuple(results), _summaries(results), measured)
