"""The compiled part of the package; everything else is in pyproject.toml.

The distributed contact model's per-frame read, compiled at install: CPython C API only (a C
compiler and the Python headers, no numpy headers). Optional: without a compiler the install
still succeeds and the numpy path reads the same forces (docs/performance.md, "Simulation: the
taxel read"). -fno-math-errno -fno-trapping-math: no errno store, no FP-exception ordering, so the
signed-distance loops vectorise (no reassociation: the same values).
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "wuji_tactile_device.producers.sim._contact_read",
    sources=["wuji_tactile_device/producers/sim/_native/contact_read.c"],
    extra_compile_args=["-O3", "-fno-math-errno", "-fno-trapping-math"],
    optional=True,
)])
