"""Models: the formulas every engine shares.

- `perf`: slowdown of a workload on an offer against dedicated bare metal;
- `tariff`: the one money model (leases, containers, ops, setup, per-month) for every command.
"""
