"""Exporters take the names of any catalog GPU from the one alias table (issue 12)."""

from gpuplan.export.gpus import TABLE, names
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.gpu_names import k8s_product, skypilot_name


def test_every_catalog_gpu_has_scheduler_names() -> None:
    cat = load_catalog()
    for gpu in cat.gpus:
        n = names(gpu)
        assert n.short and ":" not in n.short and "," not in n.short and n.short == n.short.lower()
        if gpu not in TABLE:  # not checked by hand: the alias table's names, or none
            assert n.gfd == k8s_product(gpu)
            assert n.skypilot == (skypilot_name(gpu) or n.skypilot)


def test_a_gpu_outside_the_checked_rows_uses_the_alias_table() -> None:
    n = names("l4")
    assert "l4" not in TABLE
    assert n.gfd == "NVIDIA-L4" and n.skypilot == "L4" and n.short == "l4"
