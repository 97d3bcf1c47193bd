"""`wuji-tactile sensor-model`: print the shipped example sensor model (JSON) to copy and edit,
or check a sensor-model file and print the parameters it gives (`producers.sim.sensor_model`)."""
from __future__ import annotations

import argparse
import sys

from .args import sensor_model_file


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sensor-model", help="print the example sensor model (JSON), or check a sensor-model file",
        description="Without FILE, print the sensor model shipped with the package (the JSON that "
                    "`sim --sensor-model example` applies; save it, edit it, pass the file to --sensor-model). "
                    "With FILE, check it as --sensor-model would and print each parameter it gives, with its unit.")
    p.add_argument("file", nargs="?", metavar="FILE.json", type=sensor_model_file,
                   help="a sensor-model file to check ('example': the shipped one)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..producers.sim.sensor_model import UNITS, example_text, load_sensor_specs

    if args.file is None:
        sys.stdout.write(example_text())
        return 0
    specs = load_sensor_specs(args.file)
    for name, spec in specs.items():
        unit = UNITS.get(name, "")
        value = f"{spec[0]:g} .. {spec[1]:g} {unit} (drawn per episode)" if isinstance(spec, tuple) else f"{spec:g} {unit}"
        print(f"{name}: {value}")
    return 0
