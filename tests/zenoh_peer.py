"""The producer half of the two-process Zenoh tests: a separate OS process driven by JSON lines on
stdin, one reply line per command on stdout.

    python tests/zenoh_peer.py --connect tcp/127.0.0.1:PORT

Commands (`op`): publisher (open a TactilePublisher), publish (frames), publish_metadata, close,
raw (a payload on a raw ProducerLink, for malformed input), raw_fill (`count` distinct payloads of
`size` bytes on a raw link, for memory bounds), raw_close, bare_put (a sample with no attachment),
wait_matching (until the test's subscriber is known here), quit.
Replies: {"ok": true, ...} or {"ok": false, "error": <exception class>, "message": <text>}.
"""
from __future__ import annotations

import dataclasses

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from streams_helpers import forces_for, small_metadata

from wuji_tactile_device.errors import TactileError
from wuji_tactile_device.contract import TactileMetadata
from wuji_tactile_device.streams.publisher import TactilePublisher
from wuji_tactile_device.streams.base import Stream
from wuji_tactile_device.streams.zenoh_transport import ZenohTransport


def variant(name: str) -> TactileMetadata:
    if name == "small":
        return small_metadata()
    if name == "other":  # same counts, taxels shifted 1 mm
        return small_metadata(x_offset=0.001)
    if name == "four":  # 20 taxels
        return small_metadata(4)
    if name == "invalid":  # taxel 4 weights sum to 0.5
        md = small_metadata()
        weights = np.array(md.segment_weights)
        weights[4, 0] = 0.5
        return dataclasses.replace(md, segment_weights=weights)
    raise ValueError(f"unknown metadata variant {name!r}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connect", required=True)
    args = parser.parse_args()
    transport = ZenohTransport(connect=[args.connect])
    publishers: dict[str, TactilePublisher] = {}
    links = {}
    print(json.dumps({"ok": True, "ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        reply: dict = {"ok": True}
        try:
            if op == "publisher":
                md = variant(cmd.get("variant", "small"))
                pub = TactilePublisher(cmd["collection"], md, transport,
                                       metadata_period_s=cmd.get("period", 1.0),
                                       producer_session=cmd.get("session"),
                                       **({"max_flatbuffer_size": cmd["max_size"]} if "max_size" in cmd else {}))
                publishers[cmd["name"]] = pub
                reply["session"] = pub.producer_session
            elif op == "publish":
                pub = publishers[cmd["name"]]
                sequences = []
                for i in range(cmd.get("count", 1)):
                    forces = forces_for(cmd.get("start", 0) + i, pub.metadata.num_taxels)
                    if cmd.get("nan"):
                        forces[1, 2] = np.nan
                    sequences.append(pub.publish(forces, sample_time_ns=time.monotonic_ns()))
                    if cmd.get("interval"):
                        time.sleep(cmd["interval"])
                reply["sequences"] = sequences
            elif op == "publish_metadata":
                reply["sequence"] = publishers[cmd["name"]].publish_metadata()
            elif op == "close":
                publishers.pop(cmd["name"]).close()
            elif op == "raw":
                key = (cmd["collection"], cmd["session"])
                if key not in links:
                    links[key] = transport.open_producer(*key)
                links[key].publish(Stream(cmd["stream"]), bytes.fromhex(cmd["payload_hex"]), cmd["sequence"])
            elif op == "raw_fill":
                key = (cmd["collection"], cmd["session"])
                if key not in links:
                    links[key] = transport.open_producer(*key)
                for i in range(cmd["count"]):
                    payload = bytes([i % 251]) * cmd["size"]
                    links[key].publish(Stream(cmd["stream"]), payload, cmd.get("start", 0) + i)
                    del payload
            elif op == "raw_close":
                links.pop((cmd["collection"], cmd["session"])).close()
            elif op == "bare_put":
                transport.session.put(cmd["key"], bytes.fromhex(cmd["payload_hex"]))
            elif op == "wait_matching":
                probe = transport.session.declare_publisher(cmd["key"])
                deadline = time.monotonic() + cmd.get("timeout", 5.0)
                while not probe.matching_status.matching and time.monotonic() < deadline:
                    time.sleep(0.005)
                reply["matching"] = probe.matching_status.matching
                probe.undeclare()
            elif op == "quit":
                print(json.dumps(reply), flush=True)
                break
            else:
                raise ValueError(f"unknown op {op!r}")
        except (TactileError, ValueError, KeyError) as exc:
            reply = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
        print(json.dumps(reply), flush=True)
    for pub in publishers.values():
        pub.close()
    for link in links.values():
        link.close()
    transport.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
