"""recover: rewrite a damaged MCAP file (cut off by a crash, or with corrupt chunks) into a
complete, indexed one, keeping every message of every intact chunk and saying what was lost."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import mcap
from mcap.writer import CompressionType, Writer

from .. import __version__
from ..errors import CorruptChunkError, RecordingError
from .scan import FileView, Truncation, read_chunk, scan


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
    truncation: Truncation | None = None
    source_was_complete: bool = False

    @property
    def lossless(self) -> bool:
        return self.truncation is None and not self.corrupt_chunks and not self.orphan_messages

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
        lines += [f"lost: {d}" for d in self.corrupt_chunks]
        if self.orphan_messages:
            lines.append(f"lost: {self.orphan_messages} messages whose channel definition was in a lost chunk")
        if self.lossless:
            lines.append("nothing lost" + ("" if not self.source_was_complete else " (the source was already complete)"))
        return "\n".join(lines)


def recover(source: str | os.PathLike, target: str | os.PathLike, *, overwrite: bool = False) -> RecoveryReport:
    """Write every message of every intact chunk of `source` into a new complete MCAP `target`
    (schemas, channels, times, sequences and file metadata preserved; a metadata record
    `wuji_tactile_device.recovery` notes the loss). The target appears only when complete (written
    to `<target>.partial`, then renamed). Raises RecordingError if `source` is not MCAP."""
    source, target = Path(source), Path(target)
    if source.resolve() == target.resolve():
        raise RecordingError(f"recover needs a new target file, not the source {source} itself")
    if target.exists() and not overwrite:
        raise RecordingError(f"{target} already exists (pass overwrite=True / --overwrite to replace it)")
    view = FileView(source)
    try:
        sc = scan(view)
        if sc.loose_messages:
            raise RecordingError(f"{source} stores {sc.loose_messages} messages outside chunks; "
                                 "recover handles chunked MCAP files (as this package writes) only")
        report = RecoveryReport(source, target, truncation=sc.truncation, source_was_complete=sc.complete)
        partial = target.with_name(target.name + ".partial")
        schemas, channels = dict(sc.schemas), dict(sc.channels)
        try:
            _write(view, sc, partial, report, schemas, channels)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        os.replace(partial, target)
        return report
    finally:
        view.close()


def _write(view, sc, partial: Path, report: RecoveryReport, schemas: dict, channels: dict) -> None:
    with open(partial, "wb") as out:
        writer = Writer(out, chunk_size=4 << 20, compression=CompressionType.ZSTD)
        writer.start(profile=sc.profile, library=f"{sc.library}; recovered by wuji_tactile_device {__version__} "
                                                 f"(mcap {mcap.__version__})")
        for md in sc.metadata:
            writer.add_metadata(md.name, md.metadata)
        schema_ids: dict[int, int] = {}
        channel_ids: dict[int, int] = {}
        t0 = t1 = None
        for chunk in sc.chunks:
            try:
                contents = read_chunk(view, chunk)
            except CorruptChunkError as exc:
                report.corrupt_chunks.append(str(exc))
                continue
            schemas.update((s.id, s) for s in contents.schemas)
            channels.update((c.id, c) for c in contents.channels)
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
                                report.orphan_messages += 1
                                continue
                            schema_ids[ch.schema_id] = writer.register_schema(s.name, s.encoding, s.data)
                        new_schema = schema_ids[ch.schema_id]
                    new_ch = channel_ids[m.channel_id] = writer.register_channel(
                        ch.topic, ch.message_encoding, new_schema, dict(ch.metadata))
                writer.add_message(new_ch, m.log_time, m.data, m.publish_time, m.sequence)
                topic = channels[m.channel_id].topic
                report.messages_per_topic[topic] = report.messages_per_topic.get(topic, 0) + 1
                report.messages_kept += 1
                t0 = m.log_time if t0 is None else min(t0, m.log_time)
                t1 = m.log_time if t1 is None else max(t1, m.log_time)
        report.kept_range = None if t0 is None else (t0, t1)
        notes = {"source": str(report.source), "messages_kept": str(report.messages_kept),
                 "chunks_kept": str(report.chunks_kept), "corrupt_chunks": str(len(report.corrupt_chunks)),
                 "orphan_messages": str(report.orphan_messages),
                 "bytes_lost_at_end": str(sc.truncation.bytes_lost if sc.truncation else 0)}
        writer.add_metadata("wuji_tactile_device.recovery", notes)
        writer.finish()
