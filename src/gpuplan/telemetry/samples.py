"""What every telemetry reader produces: utilisation samples per GPU, plus a ledger of bad data.

Readers turn their format into numeric columns (GPU key id, time in ms, utilisation as a ratio,
source file id, location in that file) and report every row they could not use in a `BadLog`.
`finish` then finds what only the whole picture shows (clock jumps, duplicate timestamps) and
sorts the samples by GPU and time for the analysis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # polars is imported lazily by the functions that need it
    import polars as pl

# Every kind of bad data, in the order reports list them.
BAD_KINDS = (
    "nul_bytes",  # a line containing NUL bytes (a log cut by a crash or a full disk)
    "truncated",  # fewer fields than the header
    "malformed",  # too many fields, or a value that does not parse
    "na",  # [N/A], [Not Supported], NaN: the driver had no value
    "unit_change",  # a value's unit differs from its header's (or a new header changes units)
    "out_of_range",  # utilisation below 0% or above 100%
    "duplicate",  # a second sample of the same GPU at the same timestamp (the first is kept)
    "clock_jump",  # a timestamp earlier than one already seen for that GPU in the same file
)
EXAMPLES_PER_KIND = 5
UTIL_COLUMNS = ("key", "t", "u")


@dataclass
class BadLog:
    """Counts of unusable rows by kind, with the first few locations (`file:line`) of each."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, count: int, examples: list[str]) -> None:
        if count <= 0:
            return
        if kind not in BAD_KINDS:
            raise ValueError(f"unknown bad-data kind {kind!r}")
        self.counts[kind] = self.counts.get(kind, 0) + count
        have = self.examples.setdefault(kind, [])
        have.extend(examples[: max(0, EXAMPLES_PER_KIND - len(have))])

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def by_kind(self) -> dict[str, int]:
        return {k: self.counts[k] for k in BAD_KINDS if self.counts.get(k)}

    def examples_by_kind(self) -> dict[str, list[str]]:
        return {k: list(self.examples[k]) for k in BAD_KINDS if self.counts.get(k)}


@dataclass
class KeyRegistry:
    """Maps (node, gpu) to a dense integer id; remembers each GPU's model name when known."""

    keys: list[tuple[str, str]] = field(default_factory=list)
    index: dict[tuple[str, str], int] = field(default_factory=dict)
    models: dict[int, str] = field(default_factory=dict)

    def id(self, node: str, gpu: str) -> int:
        key = (node, gpu)
        found = self.index.get(key)
        if found is None:
            found = len(self.keys)
            self.index[key] = found
            self.keys.append(key)
        return found

    def set_model(self, key_id: int, model: str | None) -> None:
        if model and key_id not in self.models:
            self.models[key_id] = model


@dataclass
class Source:
    """One input (a file or a live query) and how to name a location inside it."""

    name: str
    describe: Callable[[int], str]


@dataclass
class Samples:
    """All usable samples, sorted by (key, t): t in ms since the epoch (UTC), u a ratio in [0, 1]."""

    registry: KeyRegistry
    frame: pl.DataFrame  # columns key (u32), t (i64 ms), u (f32)
    sources: list[str]
    rows: int  # data rows read (good + bad)
    bad: BadLog
    extras: dict[int, dict[str, float]] = field(default_factory=dict)  # key -> {metric: mean}
    notes: list[str] = field(default_factory=list)


@dataclass
class Collector:
    """Accumulates readers' output across files, then `finish()`es into `Samples`."""

    registry: KeyRegistry = field(default_factory=KeyRegistry)
    parts: list[pl.DataFrame] = field(default_factory=list)  # key, t, u, src (u16), loc (u32)
    sources: list[Source] = field(default_factory=list)
    rows: int = 0
    bad: BadLog = field(default_factory=BadLog)
    extras: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_source(self, name: str, describe: Callable[[int], str]) -> int:
        self.sources.append(Source(name, describe))
        return len(self.sources) - 1

    def add_extra(self, key_id: int, metric: str, total: float, count: int) -> None:
        acc = self.extras.setdefault(key_id, {}).setdefault(metric, [0.0, 0.0])
        acc[0] += total
        acc[1] += count

    def locations(self, src: list[int], loc: list[int]) -> list[str]:
        return [self.sources[s].describe(int(p)) for s, p in zip(src, loc, strict=True)]

    def finish(self) -> Samples:
        import polars as pl

        schema = {"key": pl.UInt32, "t": pl.Int64, "u": pl.Float32, "src": pl.UInt16, "loc": pl.UInt32}
        frame = pl.concat(self.parts, how="vertical") if self.parts else pl.DataFrame(schema=schema)
        self.parts = []
        if frame.height:
            # Clock jumps: within one source, a GPU's timestamp falls below the latest one already seen.
            # Rows are grouped by (src, key) in input order; a running maximum per group is one
            # numpy accumulate over t shifted by the group number (t < 2^42 ms, so groups never overlap).
            import numpy as np

            frame = frame.sort(["src", "key", "loc"])
            src = frame["src"].to_numpy().astype(np.int64)
            key = frame["key"].to_numpy().astype(np.int64)
            t = frame["t"].to_numpy()
            new_group = np.r_[True, (src[1:] != src[:-1]) | (key[1:] != key[:-1])]
            shifted = t - t.min() + (np.cumsum(new_group) << 42)
            running = np.maximum.accumulate(shifted)
            jump = np.r_[False, shifted[1:] < running[:-1]] & ~new_group
            frame = (
                frame.with_columns(jump=pl.Series(jump)).sort(["src", "loc"])
                if jump.any()
                else (frame.with_columns(jump=pl.lit(False)))
            )
            self._record(frame.filter(pl.col("jump")), "clock_jump")
            frame = frame.filter(~pl.col("jump")).drop("jump")
            # Duplicates: same GPU, same timestamp; keep the first seen (input order), count the rest.
            frame = frame.sort(["key", "t", "src", "loc"])
            dup = (pl.col("key") == pl.col("key").shift(1)) & (pl.col("t") == pl.col("t").shift(1))
            frame = frame.with_columns(dup=dup.fill_null(False))
            self._record(frame.filter(pl.col("dup")).sort(["src", "loc"]), "duplicate")
            frame = frame.filter(~pl.col("dup"))
        frame = frame.select(UTIL_COLUMNS)
        extras = {
            k: {m: (v[0] / v[1]) for m, v in metrics.items() if v[1] > 0}
            for k, metrics in self.extras.items()
        }
        return Samples(
            registry=self.registry,
            frame=frame,
            sources=[s.name for s in self.sources],
            rows=self.rows,
            bad=self.bad,
            extras=extras,
            notes=list(self.notes),
        )

    def _record(self, bad: pl.DataFrame, kind: str) -> None:
        if bad.height:
            head = bad.head(EXAMPLES_PER_KIND)
            self.bad.add(kind, bad.height, self.locations(head["src"].to_list(), head["loc"].to_list()))
