"""SkyPilot's task and resources JSON schemas, reproduced for the export tests.

Source: skypilot 0.14.1 (PyPI wheel), `sky/utils/schemas.py` get_task_schema() and
get_resources_schema(), with `sky/skylet/constants.py` (ALL_CLOUDS, MIN/MAX_PRIORITY,
MEMORY_SIZE_PATTERN). Why not the package: `pip install skypilot` pulls ~40 packages (460 MB, 45 s
here; fastapi, pandas, sqlalchemy, click<8.2 ...) into the test environment for two dicts.
Why it is still SkyPilot's schema: the top levels are reproduced field for field with
`additionalProperties: false` (a misspelt or invented key fails as it does in `sky launch`), and so
are every property the exporter writes (name, num_nodes, resources.accelerators / infra / ordered /
any_of, with the infra pattern built from the same cloud list). Nested properties the exporter never
writes (job_recovery, volumes, autostop, config, ...) are kept by name with their top type only.
The reproduction was checked once against the real package (0.14.1 in a scratch venv): the same
exported tasks validate there and the same broken ones fail.
"""

from __future__ import annotations

from typing import Any

ALL_CLOUDS = (
    "aws", "azure", "gcp", "ibm", "lambda", "scp", "oci", "kubernetes", "runpod", "vast", "vsphere", "cudo",
    "fluidstack", "paperspace", "primeintellect", "do", "nebius", "ssh", "slurm", "hyperbolic", "seeweb",
    "shadeform", "yotta", "mithril", "verda",
)  # fmt: skip
MIN_PRIORITY, MAX_PRIORITY = -1000, 1000
_UNITS = ["kb", "ki", "mb", "mi", "gb", "gi", "tb", "ti", "pb", "pi"]
MEMORY_SIZE_PATTERN = (
    "^[0-9]+("
    + "|".join(_UNITS)
    + "|"
    + "|".join(u.upper() for u in _UNITS)
    + "|"
    + "|".join(u[0].upper() + u[1:] for u in _UNITS)
    + ")?$"
)


def infra_pattern() -> str:
    """_get_infra_pattern(): cloud[/region[/zone]], wildcards, or k8s/kubernetes[/context]."""
    clouds = [c for c in ALL_CLOUDS if c != "kubernetes"]
    cloud = f"(?i:({'|'.join(clouds)}))"
    region_zone = "(?:/[^/]+(?:/[^/]+)?)?"
    return f"^(?:{cloud}{region_zone}|\\*{region_zone}|(?i:kubernetes|k8s)(?:/.+)?)$"


_STR_OR_NUM = {"anyOf": [{"type": "string"}, {"type": "number"}]}
_DISK = {"anyOf": [{"type": "string", "pattern": MEMORY_SIZE_PATTERN}, {"type": "integer"}]}


def _single_resources_properties() -> dict[str, Any]:
    return {
        "cloud": {"type": "string"},
        "region": {"type": "string"},
        "zone": {"type": "string"},
        "infra": {"type": "string", "pattern": infra_pattern()},
        "cpus": _STR_OR_NUM,
        "memory": _STR_OR_NUM,
        "accelerators": {
            "anyOf": [
                {"type": "string"},
                {"type": "object", "required": [], "maxProperties": 1, "additionalProperties": {"type": "number"}},
            ]
        },
        "instance_type": {"type": "string"},
        "use_spot": {"type": "boolean"},
        "job_recovery": {"anyOf": [{"type": "string"}, {"type": "object"}]},
        "volumes": {"type": "array"},
        "disk_size": _DISK,
        "ephemeral_storage": _DISK,
        "disk_tier": {"type": "string"},
        "network_tier": {"type": "string"},
        "local_disk": {"type": "string"},
        "max_hourly_cost": {"type": "number", "exclusiveMinimum": 0},
        "ports": {},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "accelerator_args": {"type": "object"},
        "_no_missing_accel_warnings": {"type": "boolean"},
        "image_id": {"anyOf": [{"type": "string"}, {"type": "object", "required": []}, {"type": "null"}]},
        "autostop": {},
        "priority": {"type": "integer", "minimum": MIN_PRIORITY, "maximum": MAX_PRIORITY},
        "priority_class": {"type": "string"},
        "_docker_login_config": {"type": "object"},
        "_is_image_managed": {"type": "boolean"},
        "_requires_fuse": {"type": "boolean"},
        "_cluster_config_overrides": {"type": "object"},
    }


def resources_schema() -> dict[str, Any]:
    """get_resources_schema(): a single resources block plus `any_of` / `ordered` candidate lists."""
    multi = {
        "type": "object",
        "required": [],
        "additionalProperties": False,
        "properties": _single_resources_properties(),
    }
    props = _single_resources_properties()
    props["accelerators"] = {
        "anyOf": [
            {"type": "string"},
            {
                "type": "object",
                "required": [],
                "additionalProperties": {"anyOf": [{"type": "null"}, {"type": "number"}]},
            },
            {"type": "array", "items": {"type": "string"}},
        ]
    }
    props["any_of"] = {"type": "array", "items": multi}
    props["ordered"] = {"type": "array", "items": multi}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "required": [],
        "additionalProperties": False,
        "properties": props,
    }


def task_schema() -> dict[str, Any]:
    """get_task_schema(): the top level of a task YAML (resources are checked with resources_schema)."""
    obj = {"type": "object"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": [],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "workdir": {"anyOf": [{"type": "string"}, obj]},
            "event_callback": {"type": "string"},
            "num_nodes": {"type": "integer"},
            "resources": obj,
            "file_mounts": obj,
            "service": obj,
            "pool": obj,
            "setup": {"type": "string"},
            "run": {"type": "string"},
            "envs": {
                "type": "object",
                "required": [],
                "patternProperties": {"^[a-zA-Z_][a-zA-Z0-9_]*$": {"type": ["string", "null"]}},
                "additionalProperties": False,
            },
            "secrets": {"oneOf": [obj, {"type": "array", "items": {"type": "string"}}]},
            "managed_secrets": {"type": "array"},
            "inputs": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "number"}},
            "outputs": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "number"}},
            "file_mounts_mapping": obj,
            "config": obj,
            "volumes": obj,
            "volume_mounts": {"type": "array"},
            "api_server_access": {"type": "boolean"},
            "_metadata": obj,
        },
    }
