"""The compiled parts of the package; everything else is in pyproject.toml.

Two extensions, compiled at install: the distributed contact model's per-frame read and the
consumer's run check of force records. CPython C API only (a C compiler and the Python headers,
no numpy headers). Optional: without a compiler the install still succeeds and the numpy paths
read the same forces and pass the same records (docs/performance.md, "Simulation: the taxel read"
and "The consumer's run check"). -fno-math-errno -fno-trapping-math: no errno store, no FP-exception ordering, so the
signed-distance loops vectorise (no reassociation: the same values).
"""
from setuptools import Extension, setup

setup(ext_modules=[
    Extension(
        "wuji_tactile_device.producers.sim._contact_read",
        sources=["wuji_tactile_device/producers/sim/_native/contact_read.c"],
        extra_compile_args=["-O3", "-fno-math-errno", "-fno-trapping-math"],
        optional=True,
    ),
    Extension(
        "wuji_tactile_device.contract._record_check",
        sources=["wuji_tactile_device/contract/_native/record_check.c"],
        extra_compile_args=["-O3"],
        optional=True,
    ),
])
