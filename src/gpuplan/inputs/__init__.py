"""Inputs: what a user gives gpuplan, read and checked once.

- `scenario`, `scenario_types`: the scenario file (version 1) and its resolved, unit-parsed forms;
- `catalog/`: bundled GPU specs, reference offers and defaults as data, each with `source`/`as_of`;
- `units`: durations, rates and prices normalised per GPU-hour;
- `demand`: hourly demand curves from schedules, a demand CSV or a job trace;
- `starter`: the commented starter scenario (`starter.yaml`) that `gpuplan init` writes.

Job traces and telemetry have their readers beside their engines (`sim.traces`, `telemetry`).
"""
