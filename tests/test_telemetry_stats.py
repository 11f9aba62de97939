"""Telemetry records and logs, the stream layer's records, OpenTelemetry counters, and
``streamrepair stats`` on a generated log."""

from __future__ import annotations

import collections
import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

import streamrepair.telemetry.stats as telemetry
from streamrepair import iter_events
from streamrepair.cli import main
from streamrepair.schema.profiles import (
    MAX_PROFILE_TEXT_CHARS,
    PROFILES,
    ProfileRule,
    apply_profiles,
    profile_names,
    select_profiles,
)
from streamrepair.telemetry import (
    LogReader,
    OTelMetrics,
    Outcome,
    StatsBuilder,
    TelemetryLog,
    TelemetryRecord,
    default_telemetry_path,
    metrics_from_env,
    telemetry_path_from_env,
)

ROOT = Path(__file__).resolve().parent.parent


def record(**kwargs: Any) -> TelemetryRecord:
    base: dict[str, Any] = {"harness": "claude-code", "tool": "Read", "outcome": Outcome.CLEAN}
    base.update(kwargs)
    return TelemetryRecord(**base)


# ------------------------------------------------------------------ records and logs


def test_record_round_trips_and_keeps_contents_out_unless_asked() -> None:
    r = record(
        outcome=Outcome.REPAIRED,
        model="glm-4.6",
        rules=("drop_null",),
        repairs=2,
        session="s",
        call_id="c",
        arguments={"secret": 1},
        repaired_arguments={},
    )
    plain = r.to_dict()
    assert "arguments" not in plain
    assert "repaired_arguments" not in plain
    assert plain["rules"] == ["drop_null"]
    assert plain["outcome"] == "repaired"
    back = TelemetryRecord.from_dict(json.loads(json.dumps(plain)))
    assert back == record(
        outcome=Outcome.REPAIRED,
        model="glm-4.6",
        rules=("drop_null",),
        repairs=2,
        session="s",
        call_id="c",
        time=r.time,
    )
    assert r.to_dict(include_arguments=True)["arguments"] == {"secret": 1}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r.time)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"outcome": "clean"}, TypeError),
        ({"event": "later"}, ValueError),
        ({"tool": 3}, TypeError),
        ({"rules": ("a", 1)}, TypeError),
        ({"repairs": -1}, ValueError),
        ({"errors": True}, ValueError),
    ],
)
def test_bad_records_are_refused(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        record(**kwargs)


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"outcome": "weird"},
        {"outcome": "clean", "rules": "drop_null"},
        {"outcome": "clean", "tool": 5},
    ],
)
def test_from_dict_refuses_what_is_not_a_record(data: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        TelemetryRecord.from_dict(data)


def test_log_appends_lines_and_survives_an_unwritable_path(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "t.jsonl"
    log = TelemetryLog(path)
    assert log.write(record())
    assert log.write(record(tool="Bash"))
    assert [json.loads(x)["tool"] for x in path.read_text().splitlines()] == ["Read", "Bash"]
    assert path.stat().st_mode & 0o777 == 0o600
    blocker = tmp_path / "file"
    blocker.write_text("")
    bad = TelemetryLog(blocker / "t.jsonl")
    assert bad.write(record()) is False
    assert bad.failed_writes == 1
    assert TelemetryLog(None).write(record()) is True


def test_log_paths_from_the_environment(tmp_path: Path) -> None:
    assert telemetry_path_from_env({"STREAMREPAIR_TELEMETRY": "off"}) is None
    assert telemetry_path_from_env({"STREAMREPAIR_TELEMETRY": " 0 "}) is None
    assert (
        telemetry_path_from_env({"STREAMREPAIR_TELEMETRY": str(tmp_path / "x")}) == tmp_path / "x"
    )
    state = {"XDG_STATE_HOME": str(tmp_path)}
    assert telemetry_path_from_env(state) == tmp_path / "streamrepair" / "telemetry.jsonl"
    relative = default_telemetry_path({"XDG_STATE_HOME": "rel"})
    assert relative == Path.home() / ".local" / "state" / "streamrepair" / "telemetry.jsonl"


def test_reader_skips_garbage_and_overlong_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telemetry, "MAX_LINE_BYTES", 400)
    good = json.dumps(record().to_dict())
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(
            [
                good,
                "not json",
                "[1]",
                '{"outcome": "nope"}',
                "",
                '{"x": "' + "y" * 1000 + '"}',
                good,
            ]
        )
        + "\n"
    )
    reader = LogReader()
    assert len(list(reader.read_file(path))) == 2
    assert reader.skipped == 4


# ------------------------------------------------------------------ the stream layer


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "x", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def call(arguments: str, call_id: str = "c1") -> dict[str, Any]:
    return chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "read", "arguments": arguments},
                }
            ]
        }
    )


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["path"],
            },
        },
    }
]


def test_stream_events_become_records_without_contents(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    log = TelemetryLog(path, model="deepseek-chat")
    ready = [call('{"path": "SECRET.txt", "limit": null,}'), chunk({}, "tool_calls")]
    events = list(log.tap(iter_events(ready, tools=TOOLS)))
    assert any(e.type == "tool_call_ready" for e in events)
    cut = [call('{"path": "SECRET', "c2"), chunk({}, "length")]
    list(log.tap(iter_events(cut, tools=TOOLS), session="s9"))
    text = path.read_text()
    assert "SECRET" not in text
    first, second = (json.loads(x) for x in text.splitlines())
    assert first["outcome"] == "repaired"
    assert first["rules"] == ["trailing_comma", "drop_null"]
    assert (first["harness"], first["model"], first["call_id"]) == ("stream", "deepseek-chat", "c1")
    assert (second["outcome"], second["reason"], second["session"]) == ("rejected", "cut_off", "s9")
    loud = TelemetryLog(tmp_path / "a.jsonl", include_arguments=True)
    list(loud.tap(iter_events(ready, tools=TOOLS)))
    logged = json.loads((tmp_path / "a.jsonl").read_text())
    assert logged["arguments"] == '{"path": "SECRET.txt", "limit": null,}'
    assert logged["repaired_arguments"] == {"path": "SECRET.txt"}


# ------------------------------------------------------------------ OpenTelemetry


class FakeCounter:
    def __init__(self, name: str, adds: list[tuple[str, int, dict[str, str]]]) -> None:
        self.name = name
        self.adds = adds

    def add(self, amount: int, attributes: dict[str, str]) -> None:
        self.adds.append((self.name, amount, attributes))


class FakeMeter:
    def __init__(self) -> None:
        self.adds: list[tuple[str, int, dict[str, str]]] = []

    def create_counter(self, name: str, unit: str = "", description: str = "") -> FakeCounter:
        assert unit
        assert description
        return FakeCounter(name, self.adds)


def test_otel_counters_by_model_tool_and_rule() -> None:
    meter = FakeMeter()
    metrics = OTelMetrics(meter)
    metrics.record(
        record(outcome=Outcome.REPAIRED, model="m", rules=("drop_null", "wrap_bare_string"))
    )
    metrics.record(record(outcome=Outcome.REJECTED, tool="Bash", reason="invalid"))
    metrics.record(record(event="result", outcome=Outcome.FAILED))
    base = {
        "gen_ai.request.model": "m",
        "gen_ai.tool.name": "Read",
        "streamrepair.harness": "claude-code",
    }
    assert meter.adds[:3] == [
        ("streamrepair.tool_calls", 1, {**base, "streamrepair.outcome": "repaired"}),
        ("streamrepair.repairs", 1, {**base, "streamrepair.rule": "drop_null"}),
        ("streamrepair.repairs", 1, {**base, "streamrepair.rule": "wrap_bare_string"}),
    ]
    names = [name for name, _, _ in meter.adds[3:]]
    assert names == ["streamrepair.tool_calls", "streamrepair.rejections"]
    assert meter.adds[-1][2]["gen_ai.request.model"] == "unknown"
    assert meter.adds[-1][2]["streamrepair.reason"] == "invalid"


def test_otel_with_the_real_api_and_the_environment_switch(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.metrics")
    assert metrics_from_env({}) is None
    metrics = metrics_from_env({"STREAMREPAIR_OTEL": "1"})
    assert isinstance(metrics, OTelMetrics)
    log = TelemetryLog(tmp_path / "t.jsonl", metrics=metrics)
    assert log.write(record(outcome=Outcome.REPAIRED, rules=("drop_null",)))


def test_a_failing_metrics_backend_does_not_stop_the_log(tmp_path: Path) -> None:
    class Broken:
        def record(self, _: TelemetryRecord) -> None:
            raise RuntimeError("backend down")

    log = TelemetryLog(tmp_path / "t.jsonl", metrics=Broken())  # type: ignore[arg-type]
    assert log.write(record())
    assert (tmp_path / "t.jsonl").exists()


# ------------------------------------------------------------------ stats


MODELS = ["deepseek-chat", "glm-4.6", "kimi-k2", "<script>alert(1)</script>"]
RULES = ["drop_null", "parse_json_string", "wrap_bare_string", "unwrap_autolink"]
OUTCOMES = [Outcome.CLEAN, Outcome.REPAIRED, Outcome.GUIDED, Outcome.REJECTED, Outcome.SKIPPED]


def generate(path: Path, n: int, seed: int) -> dict[str, dict[str, Any]]:
    """Write a random log and return the expected statistics, counted independently."""
    rng = random.Random(seed)
    log = TelemetryLog(path)
    expected: dict[str, dict[str, Any]] = collections.defaultdict(
        lambda: {
            "calls": 0,
            "outcomes": collections.Counter(),
            "rules": collections.Counter(),
            "ran": 0,
            "failed": 0,
        }
    )
    for i in range(n):
        model = rng.choice(MODELS)
        outcome = rng.choice(OUTCOMES)
        rules = (
            tuple(rng.sample(RULES, rng.randint(1, 2)))
            if outcome in (Outcome.REPAIRED, Outcome.GUIDED)
            else ()
        )
        log.write(record(model=model, outcome=outcome, rules=rules, call_id=f"c{i}"))
        e = expected[model]
        e["calls"] += 1
        e["outcomes"][outcome.value] += 1
        e["rules"].update(rules)
        if outcome is Outcome.REPAIRED and rng.random() < 0.5:
            failed = rng.random() < 0.3
            log.write(
                record(
                    model=model,
                    event="result",
                    call_id=f"c{i}",
                    outcome=Outcome.FAILED if failed else Outcome.SUCCEEDED,
                )
            )
            e["ran"] += 1
            e["failed"] += failed
    with path.open("a") as handle:
        handle.write("garbage line\n")
    return expected


def test_stats_json_matches_an_independent_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    expected = generate(path, 300, seed=7)
    assert main(["stats", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["calls"] == 300
    assert data["skipped_lines"] == 1
    got = {m["model"]: m for m in data["models"]}
    assert set(got) == set(expected)
    for model, e in expected.items():
        assert got[model]["calls"] == e["calls"]
        assert got[model]["outcomes"] == dict(e["outcomes"])
        assert got[model]["rules"] == dict(e["rules"])
        assert (got[model]["repaired_results"], got[model]["repaired_failures"]) == (
            e["ran"],
            e["failed"],
        )
    calls = [m["calls"] for m in data["models"]]
    assert calls == sorted(calls, reverse=True)


def test_stats_table_and_html_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    expected = generate(path, 120, seed=3)
    out_html = tmp_path / "report.html"
    assert main(["stats", str(path), "--html", str(out_html)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("120 tool calls, ")
    for model, e in expected.items():
        row = next(line for line in text.splitlines() if line.startswith(model + " "))
        cells = row[len(model) :].split()
        counts = [str(e["outcomes"][o.value]) for o in OUTCOMES]
        assert cells[: 1 + len(counts)] == [str(e["calls"]), *counts]
        repaired = e["outcomes"]["repaired"] + e["outcomes"]["guided"]
        assert cells[-2] == f"{100 * repaired / e['calls']:.1f}%"
    page = out_html.read_text()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<svg") == 2 * len(expected)  # outcomes and rules per model


def test_stats_of_a_missing_or_empty_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", str(tmp_path / "none.jsonl")]) == 1
    assert "cannot read" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["stats", str(empty)]) == 0
    assert capsys.readouterr().out == "no tool calls in the log\n"


def test_stats_without_a_log_says_there_is_none_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new user's first `streamrepair stats`, before any hook has run: a sentence, not
    # a bare "[Errno 2] No such file or directory".
    log = tmp_path / "state" / "telemetry.jsonl"
    monkeypatch.setenv("STREAMREPAIR_TELEMETRY", str(log))
    assert main(["stats"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"streamrepair stats: cannot read {log}: there is no telemetry log yet.")
    assert "streamrepair install" in err
    assert "name a FILE" in err
    assert "Errno" not in err


def test_stats_of_a_named_file_that_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none.jsonl"
    assert main(["stats", str(missing)]) == 1
    assert capsys.readouterr().err == f"streamrepair stats: cannot read {missing}: no such file\n"
    assert main(["stats", str(tmp_path)]) == 1  # a directory
    err = capsys.readouterr().err
    assert err.startswith(f"streamrepair stats: cannot read {tmp_path}: ")
    assert "Errno" not in err
    assert "directory" in err.lower()


def test_stats_of_one_call_and_one_skipped_line_are_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    TelemetryLog(path).write(record(model="m1"))
    with path.open("a") as handle:
        handle.write("garbage line\n")
    out_html = tmp_path / "report.html"
    assert main(["stats", str(path), "--html", str(out_html)]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("1 tool call, ")
    assert head.endswith(" (1 line skipped)")
    assert "<p>1 call; repaired" in out_html.read_text()
    only_garbage = tmp_path / "garbage.jsonl"
    only_garbage.write_text("garbage line\n")
    assert main(["stats", str(only_garbage)]) == 0
    assert capsys.readouterr().out == (
        "no tool calls in the log\n(1 line skipped: not telemetry records)\n"
    )


def test_stats_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(telemetry, "MAX_GROUPS", 3)
    builder = StatsBuilder()
    for i in range(10):
        builder.add(record(model=f"m{i}", tool=f"t{i}", rules=(f"r{i}",)))
    summary = builder.summary()
    models = {m.model: m for m in summary.models}
    assert set(models) == {"m0", "m1", "m2", "(other)"}
    assert models["(other)"].calls == 7
    assert len(models["(other)"].tools) == 3 + 1  # three names, then "(other)"
    assert models["(other)"].tools["(other)"] == 4


def test_telemetry_doc_example_runs() -> None:
    page = (ROOT / "docs" / "telemetry.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/telemetry.md", "exec"), {})


# ------------------------------------------------------------------ profiles


def test_profiles_are_off_by_default_and_chosen_by_model_or_name() -> None:
    assert select_profiles(None, "grok-4") == ()
    assert select_profiles("", "grok-4") == ()
    assert select_profiles("off", "grok-4") == ()
    assert [p.name for p in select_profiles("auto", "xAI/Grok-4-Fast")] == ["grok"]
    assert [p.name for p in select_profiles("auto", "x-ai/grok-code-fast-1")] == ["grok"]
    assert select_profiles("auto", "deepseek-chat") == ()
    assert select_profiles("auto", "") == ()
    assert [p.name for p in select_profiles("grok", "deepseek-chat")] == ["grok"]
    assert [p.name for p in select_profiles("auto, grok", "grok-4")] == ["grok"]
    with pytest.raises(ValueError, match="unknown profile 'kimi'"):
        select_profiles("auto,kimi", "x")
    assert profile_names() == ("grok",)
    assert all(p.evidence for p in PROFILES.values())


def test_grok_profile_decodes_command_entities_once_and_nothing_else() -> None:
    grok = select_profiles("grok", "")
    args = {
        "command": "a &amp;&amp; b &gt; out &amp;lt; &#36; &quot;x&quot; &#39;y&#x27;",
        "content": "&amp;",
        "cmd": "plain",
        "nested": {"command": "&amp;"},
    }
    before = copy.deepcopy(args)
    value, repairs = apply_profiles(args, grok)
    assert args == before  # the caller's object is untouched
    assert value["command"] == "a && b > out &lt; &#36; \"x\" 'y'"
    assert value["content"] == "&amp;"
    assert value["nested"] == {"command": "&amp;"}
    (repair,) = repairs
    assert (repair.profile, repair.rule, repair.field) == (
        "grok",
        ProfileRule.HTML_ENTITIES_IN_COMMANDS,
        "command",
    )
    assert repair.location == "$.command"
    once, _ = apply_profiles({"command": "x &amp;&amp; y"}, grok)
    assert apply_profiles(once, grok) == (once, ())  # a decoded command stays as it is


def test_grok_profile_respects_the_schema_type_and_bounds() -> None:
    grok = select_profiles("grok", "")
    integer = {"properties": {"command": {"type": "integer"}}}
    args = {"command": "&amp;"}
    assert apply_profiles(args, grok, integer) == (args, ())
    union = {"properties": {"command": {"type": ["string", "null"]}}}
    assert apply_profiles(args, grok, union)[0] == {"command": "&"}
    huge = {"command": "&amp;" * (MAX_PROFILE_TEXT_CHARS // 5 + 1)}
    assert apply_profiles(huge, grok) == (huge, ())
    assert apply_profiles(["&amp;"], grok) == (["&amp;"], ())
    odd = {"we ird": "&amp;"}
    assert apply_profiles(odd, grok) == (odd, ())
