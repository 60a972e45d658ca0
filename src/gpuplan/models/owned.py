"""Owned hardware (`mode: owned`, issue 28): what a bought server costs per hour, as the tariff bills it.

An owned server is paid whether it is busy or not, like a lease (its capital is spent, its rack is
rented and it draws power while idle), so the tariff bills it as a node lease at a fixed price per
node-hour held, and adds the extra power drawn while it runs. Per node, in the scenario's currency:

    capex        = purchase x (1 - resale) / life             per node-hour held (straight line; selling
                                                              before `life` ends recovers the book value,
                                                              so every hour held costs the same)
    colocation   = the colocation price per node-hour          (a node-month price / (days_per_month x 24))
    power_busy   = kw_per_node x pue x price_per_kwh           per node-hour running work (full draw)
    power_idle   = power_busy x idle_share                     per node-hour held idle
    fixed        = capex + colocation + power_idle             per node-hour held, busy or idle
    extra        = power_busy - power_idle                     per node-hour running, on top of `fixed`

so a node held H hours and running B of them costs  fixed x H + extra x B
                                                  = capex x H + colocation x H + power_busy x B + power_idle x (H - B).
The rates are `inputs.scenario_types.Owned`'s properties (the scenario resolves an owned offer into a
node lease at `fixed`, so every command that prices a lease prices a bought server the same way).
Ops labour is bare metal's (`ops:`, the catalog's bare-metal default), setup likewise.
`lead_time` (order to delivery) delays the work on owned capacity: the work waits for the servers
(wall time, priced at researcher_hour_cost) and nothing is paid before delivery; compare does not run
the work elsewhere meanwhile (a plan that needs it sooner keeps a lease or containers for that time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuplan.inputs.scenario_types import Owned


@dataclass(frozen=True)
class OwnedCost:
    """One owned option's money, split into the items compare reports."""

    capex: float
    power: float
    colocation: float

    @property
    def total(self) -> float:
        return self.capex + self.power + self.colocation


def owned_cost(o: Owned, node_hours_held: float, node_hours_running: float) -> OwnedCost:
    """The capex, power and colocation of nodes held `node_hours_held` and running `node_hours_running`."""
    running = min(node_hours_running, node_hours_held)
    return OwnedCost(
        capex=o.capex_per_node_hour * node_hours_held,
        power=o.power_busy_per_node_hour * running + o.power_idle_per_node_hour * (node_hours_held - running),
        colocation=o.colocation_per_node_hour * node_hours_held,
    )
