"""The compiled replay kernel (`gpuplan.sim._ckernel`), built by `pip install`; everything else is in
pyproject.toml. The extension is optional: without a C compiler or Python's headers (Debian's
python3-dev) the install still succeeds and `gpuplan simulate` runs the pure-Python replay instead."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "gpuplan.sim._ckernel",
            sources=["src/gpuplan/sim/_ckernel.c"],
            extra_compile_args=["-O2", "-pthread", "-ffp-contract=off"],
            extra_link_args=["-pthread"],
            optional=True,
        ),
        # The audit's parser and fold (same optional rule: without it the audit runs the numba kernels).
        Extension(
            "gpuplan.telemetry._ctelemetry",
            sources=["src/gpuplan/telemetry/_ctelemetry.c"],
            extra_compile_args=["-O2", "-ffp-contract=off"],
            optional=True,
        ),
    ]
)
