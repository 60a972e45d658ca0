"""Engines: pure functions from inputs and models to results.

- `cost`: one workload on one offer (time and money, through the tariff);
- `advise`: `compare`'s verdict, four dimensions, break-even and flips;
- `pool`, `planner`, `pricing`: `plan`'s exact pool sizing, the portfolio, and the pool's tariffs.

`simulate`, `audit` and `probe` have their engines in `sim/`, `telemetry/` and `probe/`.
"""
