"""Iterate a dataset written by `wuji-tactile export … --format lerobot DIR` with LeRobot's own loader
and print one batch's shapes. Trains nothing.

Run it with the Python of an environment that has `lerobot` 0.4.x (docs/lerobot.md), offline:

    HF_HUB_OFFLINE=1 python examples/lerobot/iterate_dataset.py ds/
"""
from __future__ import annotations

import sys

import torch
from lerobot.datasets.lerobot_dataset import LeRobotDataset


def main(root: str) -> None:
    ds = LeRobotDataset("local/wuji_tactile", root=root)  # a local root: nothing is downloaded
    print(f"{ds.num_episodes} episodes, {ds.num_frames} frames at {ds.fps} Hz")
    loader = torch.utils.data.DataLoader(ds, batch_size=8, shuffle=True)
    batch = next(iter(loader))
    for key, value in batch.items():
        shape = tuple(value.shape) if hasattr(value, "shape") else f"{len(value)} × {type(value[0]).__name__}"
        print(f"  {key:45s} {shape} {getattr(value, 'dtype', '')}")
    valid = batch["observation.tactile.right.valid"] if "observation.tactile.right.valid" in batch else None
    if valid is not None:
        print(f"  rows with a right-hand tactile frame: {int(valid.sum())} of {len(valid)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ds")
