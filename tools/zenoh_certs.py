#!/usr/bin/env python3
"""The same as `wuji-tactile certs` (kept for the clone's older instructions):

    python3 tools/zenoh_certs.py OUT_DIR --router-address 192.168.1.10 \
        --producer tactile/right=producer-right --consumer tracker

The logic is the package's (`wuji_tactile_device.streams.zenoh_certs`), so an installed user has
it as `wuji-tactile certs OUT_DIR ...`; see `wuji-tactile certs --help`.
"""
from __future__ import annotations

import sys

from wuji_tactile_device.cli import main

if __name__ == "__main__":
    sys.exit(main(["certs", *sys.argv[1:]]))
