"""Generated FlatBuffers bindings and binary schemas (.bfbs) for the `core` namespace.

Do not edit: regenerate with `python tools/generate_schema.py`. Per-element accessors are slow;
hot paths use `wuji_tactile_device.contract.records` and `.metadata` instead.
"""
