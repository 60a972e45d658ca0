"""Where data and GPUs are: the scenario's sites and the links between them (issue 17).

A route from the data's site to an offer's site is the path with the fewest links (breadth-first;
ties broken by the order the links are listed); it moves data at the slowest link's bandwidth and
costs the sum of the links' cost per GB. A link carries data either way unless `one_way`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from gpuplan.inputs.scenario_types import Link


@dataclass(frozen=True)
class Route:
    links: tuple[Link, ...]  # empty: the same site
    hops: tuple[str, ...] = ()  # the sites from the data's to the offer's

    @property
    def gbps(self) -> float:
        return min((lk.gbps for lk in self.links), default=float("inf"))

    @property
    def cost_per_gb(self) -> float:
        return sum(lk.cost_per_gb for lk in self.links)


def route(links: tuple[Link, ...], src: str, dst: str) -> Route | None:
    """The fewest-links route from `src` to `dst`, or None when there is none."""
    if src == dst:
        return Route(())
    prev: dict[str, tuple[str, Link]] = {}
    seen = {src}
    queue = deque([src])
    while queue:
        here = queue.popleft()
        for lk in links:
            nxt = lk.dst if lk.src == here else (lk.src if lk.dst == here and not lk.one_way else None)
            if nxt is None or nxt in seen:
                continue
            seen.add(nxt)
            prev[nxt] = (here, lk)
            if nxt == dst:
                path: list[Link] = []
                nodes = [dst]
                node = dst
                while node != src:
                    node, link = prev[node]
                    path.append(link)
                    nodes.append(node)
                return Route(tuple(reversed(path)), tuple(reversed(nodes)))
            queue.append(nxt)
    return None
