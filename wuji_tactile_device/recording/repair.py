"""recover: rewrite a damaged MCAP file (cut off by a crash, with corrupt chunks or damaged
framing) into a complete, indexed one, keeping every message of every intact chunk and the
complete records of a cut-off chunk's readable prefix, and saying what was lost.

The target is written to a temporary file beside it and renamed over it only when complete, and
only ever over a regular file: a FIFO, device, directory or anything else is refused."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import mcap
from mcap.writer import CompressionType, Writer

from .. import __version__
from ..contract.hand_pose import HAND_POSE_RECORD_SCHEMA_NAME, encode_hand_pose_record
from ..errors import CorruptChunkError, ReadLimitError, RecordingError, printable
from .hand_channels import HAND_JOINTS_KEY, decode_hand_message, is_hand_channel
from .profiles import ISAAC_HEADER_PROFILE, check_profile, isaac_hand_schema
from .safe_files import check_target, publish, temporary_beside
from .scan import FileView, ReadBudget, Truncation, read_chunk, read_partial_chunk, scan


@dataclass
class RecoveryReport:
    """What `recover` kept and lost. Times are log times [ns]."""

    source: Path
    target: Path
    chunks_kept: int = 0
    messages_kept: int = 0
    messages_per_topic: dict[str, int] = field(default_factory=dict)
    kept_range: tuple[int, int] | None = None
    corrupt_chunks: list[str] = field(default_factory=list)  # one description per skipped chunk
    orphan_messages: int = 0  # messages whose channel definition was in a lost chunk
    missing_schemas: dict[str, int] = field(default_factory=dict)  # topic -> messages lost: schema record missing
    salvaged_messages: int = 0  # complete messages kept from a cut-off chunk (not CRC-checked)
    damage: list[str] = field(default_factory=list)  # damaged records skipped in the source (first ones)
    damage_count: int = 0  # all of them
    stopped: str = ""  # why reading stopped early (a work bound), "" = read to the end
    truncation: Truncation | None = None
    source_was_complete: bool = False

    @property
    def lossless(self) -> bool:
        return (self.truncation is None and not self.corrupt_chunks and not self.orphan_messages
                and not self.missing_schemas and not self.damage_count and not self.stopped)

    def text(self) -> str:
        lines = [f"recovered {self.source} -> {self.target}",
                 f"kept: {self.messages_kept} messages in {self.chunks_kept} chunks"
                 + (f", log time {self.kept_range[0]} .. {self.kept_range[1]} ns "
                    f"({(self.kept_range[1] - self.kept_range[0]) / 1e9:.3f} s)" if self.kept_range else "")]
        lines += [f"  {topic}: {n}" for topic, n in sorted(self.messages_per_topic.items())]
        if self.truncation is not None:
            t = self.truncation
            lost = f"lost: {t.bytes_lost} bytes after byte {t.valid_until} ({t.reason})"
            if t.partial_chunk_range is not None:
                lost += f", including {t.cut_off_chunk()}"
            lines.append(lost)
        if self.salvaged_messages:
            lines.append(f"salvaged: {self.salvaged_messages} complete messages from the cut-off chunk "
                         "(not CRC-checked: the CRC covers the whole chunk)")
        lines += [f"lost: {d}" for d in self.corrupt_chunks]
        lines += [f"damaged: {d}" for d in self.damage]
        if self.damage_count > len(self.damage):
            lines.append(f"damaged: ... and {self.damage_count - len(self.damage)} more damaged records")
        lines += [f"lost: {n} messages on {topic!r}, whose channel refers to a schema record missing from the file"
                  for topic, n in sorted(self.missing_schemas.items())]
        if self.stopped:
            lines.append(f"lost: everything after {self.stopped}")
        if self.orphan_messages:
            lines.append(f"lost: {self.orphan_messages} messages whose channel definition was in a lost chunk")
        if self.lossless:
            lines.append("nothing lost" + ("" if not self.source_was_complete else " (the source was already complete)"))
        return "\n".join(printable(ln) for ln in lines)  # topics from the file: control characters escaped


def recover(source: str | os.PathLike, target: str | os.PathLike, *, overwrite: bool = False,
            profile: str = "default") -> RecoveryReport:
    """Write every message of every intact chunk of `source` into a new complete MCAP `target`
    (schemas, channels, times, sequences and file metadata preserved; a metadata record
    `wuji_tactile_device.recovery` notes the loss). The target appears only when complete
    (written to a temporary file beside it, then renamed), and only a regular file or a
    symbolic link (the link itself, never what it points to) is ever replaced. Raises RecordingError if `source` is not MCAP or `target` cannot be written.
    `profile="isaac"` writes the target in the isaac profile (`recording.profiles`: uncompressed,
    header profile `teleop`, the hand channels' schema replaced by Isaac Teleop's exact bytes) —
    how a zstd/lz4 recording becomes one Isaac Teleop's ReplaySession reads as its own."""
    check_profile(profile)
    source, target = Path(source), Path(target)
    _check_target(source, target, overwrite)
    view = FileView(source)
    try:
        sc = scan(view)
        if sc.loose_messages:
            raise RecordingError(f"{source} stores {sc.loose_messages} messages outside chunks; "
                                 "recover handles chunked MCAP files (as this package writes) only")
        report = RecoveryReport(source, target, truncation=sc.truncation, source_was_complete=sc.complete,
                                damage=list(sc.damage), damage_count=sc.damage_count)
        partial = temporary_beside(target)
        try:
            with open(partial, "wb") as out:
                _write(view, sc, out, report, dict(sc.schemas), dict(sc.channels), profile)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise RecordingError(f"cannot write {target}: {exc.strerror or exc}") from None
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        _check_target(source, target, overwrite)  # still not the source (publish checks the rest)
        publish(partial, target, overwrite)
        return report
    finally:
        view.close()


def _check_target(source: Path, target: Path, overwrite: bool) -> None:
    """Refuse a target that is the source, then apply the package's rule for every file it writes
    (`safe_files.check_target`: absent, a symbolic link (replaced itself), or a regular file with
    `overwrite`)."""
    try:
        same = source.resolve() == target.resolve()
    except (OSError, RuntimeError) as exc:
        raise RecordingError(f"cannot resolve {target}: {exc}") from None
    if same:
        raise RecordingError(f"recover needs a new target file, not the source {source} itself")
    check_target(target, overwrite)


def _write(view, sc, out, report: RecoveryReport, schemas: dict, channels: dict, profile: str = "default") -> None:
    isaac = profile == "isaac"
    writer = Writer(out, chunk_size=256 << 10, compression=CompressionType.NONE if isaac else CompressionType.ZSTD)
    writer.start(profile=ISAAC_HEADER_PROFILE if isaac else sc.profile, library=f"{sc.library}; recovered by wuji_tactile_device {__version__} "
                                             f"(mcap {mcap.__version__})")
    for md in sc.metadata:
        writer.add_metadata(md.name, md.metadata)
    schema_ids: dict[int, int] = {}
    channel_ids: dict[int, int] = {}
    transcode: dict[int, str] = {}  # isaac: new hand channel id -> the source's hand schema name
    t0 = t1 = None
    budget = ReadBudget(sc.chunk_bytes, view.path)
    chunks = list(sc.chunks)
    partial = sc.truncation.partial_chunk if sc.truncation is not None else None
    if partial is not None:
        chunks.append(partial)
    for chunk in chunks:
        try:
            contents = read_partial_chunk(view, chunk, budget) if chunk.cut_off else read_chunk(view, chunk, budget)
        except CorruptChunkError as exc:
            report.corrupt_chunks.append(str(exc))
            continue
        except ReadLimitError as exc:
            report.stopped = f"{chunk.describe()}: {exc}"
            break
        schemas.update((s.id, s) for s in contents.schemas)
        channels.update((c.id, c) for c in contents.channels)
        if chunk.cut_off:
            report.salvaged_messages = len(contents.messages)
        else:
            report.chunks_kept += 1
        for m in contents.messages:
            new_ch = channel_ids.get(m.channel_id)
            if new_ch is None:
                ch = channels.get(m.channel_id)
                if ch is None:
                    report.orphan_messages += 1
                    continue
                new_schema = 0
                if ch.schema_id:
                    if ch.schema_id not in schema_ids:
                        s = schemas.get(ch.schema_id)
                        if s is None:
                            report.missing_schemas[ch.topic] = report.missing_schemas.get(ch.topic, 0) + 1
                            continue
                        if isaac and is_hand_channel(s.name, ch.metadata):
                            # Isaac Teleop's record with its exact schema bytes (the viewer twin is re-encoded)
                            schema_ids[ch.schema_id] = writer.register_schema(
                                HAND_POSE_RECORD_SCHEMA_NAME, "flatbuffer", isaac_hand_schema().data)
                        else:
                            schema_ids[ch.schema_id] = writer.register_schema(s.name, s.encoding, s.data)
                    new_schema = schema_ids[ch.schema_id]
                hand = isaac and ch.schema_id and schemas.get(ch.schema_id) is not None and is_hand_channel(
                    schemas[ch.schema_id].name, ch.metadata)
                meta = {k: v for k, v in ch.metadata.items() if k != HAND_JOINTS_KEY} if hand else dict(ch.metadata)
                new_ch = channel_ids[m.channel_id] = writer.register_channel(
                    ch.topic, "flatbuffer" if hand else ch.message_encoding, new_schema, meta)
                if hand:
                    transcode[new_ch] = schemas[ch.schema_id].name
            data = m.data
            if new_ch in transcode and transcode[new_ch] != HAND_POSE_RECORD_SCHEMA_NAME:
                sample = decode_hand_message(transcode[new_ch], data)
                data = encode_hand_pose_record(sample.poses, sample.timestamp,
                                               valid=True if sample.valid is None else sample.valid,
                                               radius=0.0 if sample.radius is None else sample.radius)
            writer.add_message(new_ch, m.log_time, data, m.publish_time, m.sequence)
            topic = channels[m.channel_id].topic
            report.messages_per_topic[topic] = report.messages_per_topic.get(topic, 0) + 1
            report.messages_kept += 1
            t0 = m.log_time if t0 is None else min(t0, m.log_time)
            t1 = m.log_time if t1 is None else max(t1, m.log_time)
    report.kept_range = None if t0 is None or t1 is None else (t0, t1)
    notes = {"source": str(report.source), "messages_kept": str(report.messages_kept),
             "chunks_kept": str(report.chunks_kept), "corrupt_chunks": str(len(report.corrupt_chunks)),
             "orphan_messages": str(report.orphan_messages),
             "missing_schema_messages": str(sum(report.missing_schemas.values())),
             "salvaged_messages": str(report.salvaged_messages), "damaged_records": str(report.damage_count),
             "bytes_lost_at_end": str(sc.truncation.bytes_lost if sc.truncation else 0)}
    writer.add_metadata("wuji_tactile_device.recovery", notes)
    writer.finish()
