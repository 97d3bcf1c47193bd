"""Run with the Python of an environment that has `lerobot` (0.4.x): load a dataset with LeRobot's
own `LeRobotDataset` from a local root, offline, and dump what it delivers for the test to compare.

    HF_HUB_OFFLINE=1 python tests/lerobot_load_check.py DATASET_DIR OUT.npz

Writes OUT.npz: every feature of every frame as LeRobot's `__getitem__` returns it (stacked), and
`_summary` (JSON: version, episodes, frames, fps, feature shapes, one DataLoader batch's shapes,
and LeRobot's own compute_episode_stats of each episode). Needs no network.
"""
from __future__ import annotations

import json
import sys

import numpy as np


def main(root: str, out: str) -> None:
    import torch
    from lerobot.datasets.compute_stats import compute_episode_stats
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    import lerobot

    ds = LeRobotDataset("local/wuji_tactile", root=root)
    keys = list(ds.features)
    frames = {k: [] for k in keys}
    tasks = []
    for i in range(len(ds)):
        item = ds[i]
        for k in keys:
            frames[k].append(item[k].numpy())
        tasks.append(item["task"])
    arrays = {k.replace(".", "__"): np.stack(v) for k, v in frames.items()}
    batch = next(iter(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=False)))
    ep = arrays["episode_index"]
    ours = {}
    for e in range(ds.meta.total_episodes):
        data = {k: np.stack(frames[k])[ep == e] for k in keys}
        stats = compute_episode_stats(data, ds.features)
        ours[e] = {k: {s: np.asarray(v).tolist() for s, v in st.items()} for k, st in stats.items()}
    summary = {
        "lerobot_version": lerobot.__version__, "num_episodes": ds.num_episodes, "num_frames": ds.num_frames,
        "fps": ds.fps, "tasks": tasks,
        "feature_shapes": {k: list(v["shape"]) for k, v in ds.features.items()},
        "item_shapes": {k: list(np.asarray(frames[k][0]).shape) for k in keys},
        "batch_shapes": {k: list(v.shape) for k, v in batch.items() if hasattr(v, "shape")},
        "episodes": [{"episode_index": int(e["episode_index"]), "length": int(e["length"]),
                      "from": int(e["dataset_from_index"]), "to": int(e["dataset_to_index"])} for e in ds.meta.episodes],
        "lerobot_episode_stats": ours,
        "meta_stats_keys": sorted(ds.meta.stats),
    }
    np.savez(out, _summary=np.array(json.dumps(summary)), **arrays)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
