"""The telemetry log rotates by size and stays whole with several writer processes.

``TelemetryLog`` appends whole lines with ``O_APPEND`` and rotates by rename under
``<log>.lock``; ``LogReader.read_log`` reads the rotated files and the log, oldest first.
Checked in one process (what is kept, in which file, in which order), with several
writer processes at once (every record read back exactly once, no line cut or mixed),
with a reader running while writers rotate, and through ``streamrepair stats``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from streamrepair.cli import main
from streamrepair.telemetry import (
    BACKUPS_ENV,
    DEFAULT_LOG_BACKUPS,
    DEFAULT_LOG_MAX_BYTES,
    MAX_BYTES_ENV,
    MAX_LINE_BYTES,
    LogReader,
    LogRotation,
    Outcome,
    TelemetryLog,
    TelemetryRecord,
)

ROOT = Path(__file__).resolve().parent.parent


def record(n: int, writer: str = "w") -> TelemetryRecord:
    """A record that says who wrote it and its sequence number."""
    return TelemetryRecord(
        harness="test", tool="Read", outcome=Outcome.CLEAN, model=writer, session=str(n)
    )


def read(path: Path) -> tuple[list[tuple[str, int]], int]:
    reader = LogReader()
    got = [(r.model, int(r.session)) for r in reader.read_log(path)]
    return got, reader.skipped


def test_rotation_settings_and_the_environment() -> None:
    assert LogRotation() == LogRotation(max_bytes=16 * 2**20, backups=4)
    assert (DEFAULT_LOG_MAX_BYTES, DEFAULT_LOG_BACKUPS) == (16 * 2**20, 4)
    assert LogRotation.from_env({}) == LogRotation()
    env = {MAX_BYTES_ENV: "64M", BACKUPS_ENV: "9"}
    assert LogRotation.from_env(env) == LogRotation(max_bytes=64 * 2**20, backups=9)
    for text, size in (("1000", 1000), ("2k", 2048), ("3 MiB", 3 * 2**20), ("1G", 2**30)):
        assert LogRotation.from_env({MAX_BYTES_ENV: text}).max_bytes == size
    assert LogRotation.from_env({MAX_BYTES_ENV: "0"}).max_bytes == 0
    with pytest.raises(ValueError, match="STREAMREPAIR_TELEMETRY_MAX_BYTES"):
        LogRotation.from_env({MAX_BYTES_ENV: "lots"})
    with pytest.raises(ValueError, match="STREAMREPAIR_TELEMETRY_BACKUPS"):
        LogRotation.from_env({BACKUPS_ENV: "-1"})
    with pytest.raises(ValueError, match="non-negative"):
        LogRotation(max_bytes=-1)
    with pytest.raises(ValueError, match="non-negative"):
        LogRotation(backups=True)  # type: ignore[arg-type]


def test_the_log_takes_its_rotation_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MAX_BYTES_ENV, "4k")
    monkeypatch.setenv(BACKUPS_ENV, "2")
    assert TelemetryLog(tmp_path / "t.jsonl").rotation == LogRotation(max_bytes=4096, backups=2)
    monkeypatch.setenv(MAX_BYTES_ENV, "nonsense")  # never fails a tool call: the defaults
    assert TelemetryLog(tmp_path / "t.jsonl").rotation == LogRotation()
    explicit = LogRotation(max_bytes=1, backups=1)
    assert TelemetryLog(tmp_path / "t.jsonl", rotation=explicit).rotation == explicit


def test_rotation_keeps_the_newest_records_in_order_within_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "telemetry.jsonl"
    rotation = LogRotation(max_bytes=2000, backups=2)
    log = TelemetryLog(path, rotation=rotation)
    line = len(json.dumps(record(0).to_dict())) + 10
    for n in range(300):
        assert log.write(record(n))
    names = sorted(p.name for p in tmp_path.iterdir())
    # the log itself is absent right after the write that rotated it
    assert set(names) - {"telemetry.jsonl"} == {
        "telemetry.jsonl.1",
        "telemetry.jsonl.2",
        "telemetry.jsonl.lock",
    }
    for name in names:
        assert (tmp_path / name).stat().st_size < rotation.max_bytes + line
    got, skipped = read(path)
    assert skipped == 0
    numbers = [n for _, n in got]
    # the newest records, oldest first, with no gap: what rotated out was the oldest
    assert numbers == list(range(300 - len(numbers), 300))
    assert len(numbers) > 2 * rotation.max_bytes // line
    assert log.rotations > 0
    assert oct((tmp_path / "telemetry.jsonl.lock").stat().st_mode & 0o777) == "0o600"


def test_no_backups_starts_the_log_again_and_zero_size_never_rotates(tmp_path: Path) -> None:
    dropped = TelemetryLog(tmp_path / "a.jsonl", rotation=LogRotation(max_bytes=1000, backups=0))
    kept = TelemetryLog(tmp_path / "b.jsonl", rotation=LogRotation(max_bytes=0, backups=3))
    for n in range(100):
        dropped.write(record(n))
        kept.write(record(n))
    assert not (tmp_path / "a.jsonl.1").exists()
    assert (tmp_path / "a.jsonl").stat().st_size < 1000
    got, _ = read(tmp_path / "a.jsonl")
    assert [n for _, n in got] == list(range(100 - len(got), 100))
    assert not list(tmp_path.glob("b.jsonl.*"))
    assert [n for _, n in read(tmp_path / "b.jsonl")[0]] == list(range(100))


def test_read_log_without_the_log_itself(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with pytest.raises(FileNotFoundError):
        list(LogReader().read_log(path))
    log = TelemetryLog(path, rotation=LogRotation(max_bytes=100, backups=3))
    log.write(record(1))  # one line is over 100 bytes: rotated at once
    assert not path.exists()
    assert [n for _, n in read(path)[0]] == [1]
    (tmp_path / "t.jsonl.x").write_text("not a rotated file\n")
    (tmp_path / "t.jsonl.01").write_text("nor this\n")
    assert read(path) == ([("w", 1)], 0)


def test_a_record_too_long_for_the_reader_is_written_without_its_arguments(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    log = TelemetryLog(path, include_arguments=True)
    big = TelemetryRecord(
        harness="h",
        tool="Write",
        outcome=Outcome.CLEAN,
        arguments={"content": "x" * MAX_LINE_BYTES},
    )
    small = TelemetryRecord(harness="h", tool="Read", outcome=Outcome.CLEAN, arguments={"p": 1})
    assert log.write(big)
    assert log.write(small)
    lines = path.read_text().splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["arguments_omitted"] is True
    assert "arguments" not in first
    assert second["arguments"] == {"p": 1}
    reader = LogReader()
    assert [r.tool for r in reader.read_log(path)] == ["Write", "Read"]
    assert reader.skipped == 0


_WRITER = textwrap.dedent(
    """
    import sys
    from streamrepair.telemetry import LogRotation, Outcome, TelemetryLog, TelemetryRecord

    path, writer, count, size, backups = sys.argv[1:6]
    log = TelemetryLog(path, rotation=LogRotation(max_bytes=int(size), backups=int(backups)))
    for n in range(int(count)):
        padding = "p" * (n % 50)  # lines of different lengths
        log.write(TelemetryRecord(harness=padding, tool="Read", outcome=Outcome.CLEAN,
                                  model=writer, session=str(n)))
        assert log.failed_writes == 0
    """
)


def _writers(path: Path, count: int, writers: int, size: int, backups: int) -> list[str]:
    names = [f"writer{i}" for i in range(writers)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), name, str(count), str(size), str(backups)],
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        for name in names
    ]
    for process in processes:
        assert process.wait(120) == 0
    return names


def test_several_writer_processes_lose_no_record_and_cut_no_line(tmp_path: Path) -> None:
    path = tmp_path / "telemetry.jsonl"
    count, size = 600, 16_000
    names = _writers(path, count, writers=4, size=size, backups=10_000)
    got, skipped = read(path)
    assert skipped == 0  # no line was cut or mixed with another
    assert sorted(got) == sorted((name, n) for name in names for n in range(count))
    for name in names:  # each writer's records in its own order
        assert [n for w, n in got if w == name] == list(range(count))
    rotated = list(tmp_path.glob("telemetry.jsonl.*[0-9]"))
    assert len(rotated) > 4 * count * 100 // size // 2  # it did rotate, many times
    line = 400
    assert all(p.stat().st_size < size + 4 * line for p in rotated)


def test_several_writers_with_few_backups_keep_whole_lines_within_the_bound(
    tmp_path: Path,
) -> None:
    path = tmp_path / "telemetry.jsonl"
    size, backups = 8_000, 2
    _writers(path, 500, writers=3, size=size, backups=backups)
    got, skipped = read(path)
    assert skipped == 0
    assert len(got) == len(set(got))
    files = [path, *(path.with_name(f"{path.name}.{i}") for i in range(1, backups + 1))]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [*(p.name for p in files if p.exists()), "telemetry.jsonl.lock"]
    )
    total = sum(p.stat().st_size for p in files if p.exists())
    assert total < (backups + 1) * (size + 3 * 400)


def test_a_reader_while_writers_rotate_reads_each_line_once(tmp_path: Path) -> None:
    path = tmp_path / "telemetry.jsonl"
    script = _WRITER
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), f"w{i}", "1500", "6000", "100000"],
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        for i in range(2)
    ]
    reads = 0
    try:
        while any(p.poll() is None for p in processes):
            if not path.exists() and not list(tmp_path.glob("telemetry.jsonl.*")):
                time.sleep(0.01)
                continue
            got, skipped = read(path)
            assert skipped == 0
            assert len(got) == len(set(got)), "a record read twice"
            for name in ("w0", "w1"):  # what a writer wrote, read as a prefix, in order
                mine = [n for w, n in got if w == name]
                assert mine == list(range(len(mine)))
            reads += 1
            time.sleep(0.05)  # a reader now and then, as `streamrepair stats` is
    finally:
        for process in processes:
            assert process.wait(120) == 0
    assert reads > 0
    got, _ = read(path)
    assert len(got) == 3000


def test_stats_reads_the_rotated_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "telemetry.jsonl"
    log = TelemetryLog(path, rotation=LogRotation(max_bytes=3000, backups=50))
    for n in range(200):
        log.write(record(n, writer="model-a" if n % 2 else "model-b"))
    assert path.with_name("telemetry.jsonl.3").exists()
    assert main(["stats", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["calls"] == 200
    assert {m["model"]: m["calls"] for m in data["models"]} == {"model-a": 100, "model-b": 100}
