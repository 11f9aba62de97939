"""``/metrics`` and the telemetry fields stay bounded whatever the client sends: label
values are shortened past ``MAX_LABEL_CHARS`` (a 256 KiB model name once made a 52 MB
``/metrics``), their number per label is bounded by ``MAX_LABEL_VALUES`` (then
``other``), and the page stays valid Prometheus text. Checked on ``ProxyMetrics`` alone
and through the proxy on loopback with a fake upstream."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _proxy_support import FakeUpstream, Reply, chat_stream, close_clients, serving
from streamrepair.proxy import (
    MAX_LABEL_CHARS,
    MAX_LABEL_VALUES,
    ProxyConfig,
    ProxyMetrics,
    create_app,
)
from streamrepair.telemetry import (
    MAX_FIELD_CHARS,
    Outcome,
    TelemetryLog,
    TelemetryRecord,
    shorten,
)

CALLS = "streamrepair_proxy_tool_calls_total"
# One sample line of the Prometheus text format: a name, optional labels with escaped
# values, a value.
_SAMPLE = re.compile(r'^[a-z_]+(\{([a-z_]+="(?:[^"\\\n]|\\[\\"n])*",?)*\})? -?\d+$')


@pytest.fixture(autouse=True)
def _close_sdk_clients() -> Iterator[None]:
    yield
    close_clients()


def _valid(page: str) -> bool:
    return all(line.startswith("# ") or _SAMPLE.match(line) for line in page.splitlines())


@given(st.text(max_size=400), st.integers(min_value=16, max_value=300))
def test_shorten_bounds_keeps_the_start_and_leaves_short_text_alone(text: str, limit: int) -> None:
    short = shorten(text, limit)
    assert len(short) <= limit
    if len(text) <= limit:
        assert short == text
    else:
        assert short.startswith(text[: limit - 9])
        assert short[limit - 9] == "…"
        assert shorten(text, limit) == short  # the same text, the same label


def test_shorten_keeps_long_names_that_begin_alike_apart() -> None:
    one, two = "m" * 1000 + "a", "m" * 1000 + "b"
    assert shorten(one) != shorten(two)
    assert len(shorten(one)) == MAX_FIELD_CHARS
    with pytest.raises(ValueError, match="at least 16"):
        shorten("x" * 20, 10)


def test_a_huge_model_name_is_shortened_in_every_label() -> None:
    metrics = ProxyMetrics()
    huge = "deepseek-" + "x" * (256 * 1024)
    for outcome in ("clean", "repaired", "rejected"):
        metrics.add(CALLS, model=huge, outcome=outcome)
    metrics.add("streamrepair_proxy_repairs_total", model=huge, rule="trailing_comma")
    page = metrics.render()
    assert len(page) < 4000
    assert _valid(page)
    assert metrics.value(CALLS, model=huge, outcome="clean") == 1  # found by its full name
    labels = re.findall(r'model="([^"]*)"', page)
    assert labels
    assert {len(label) for label in labels} == {MAX_LABEL_CHARS}
    assert all(label.startswith("deepseek-xxxx") for label in labels)


def test_the_number_of_values_per_label_is_bounded_then_other() -> None:
    metrics = ProxyMetrics()
    for i in range(MAX_LABEL_VALUES + 50):
        metrics.add(CALLS, model=f"model-{i}-" + "y" * 5000, outcome="clean")
    page = metrics.render()
    models = set(re.findall(r'model="([^"]*)"', page))
    assert len(models) == MAX_LABEL_VALUES + 1
    assert metrics.value(CALLS, model="other", outcome="clean") == 50
    # every sample at most one bounded label value long: the page is bounded whatever
    # the names were
    assert len(page) < (MAX_LABEL_VALUES + 1) * (MAX_LABEL_CHARS + 100) + 2000


def test_label_values_that_need_escaping_stay_valid_text() -> None:
    metrics = ProxyMetrics()
    metrics.add(CALLS, model='a"b\\c\nd' + "\\" * 300, outcome="clean")
    page = metrics.render()
    assert _valid(page)
    assert metrics.value(CALLS, model='a"b\\c\nd' + "\\" * 300, outcome="clean") == 1


def test_telemetry_record_fields_are_bounded_in_the_log(tmp_path: Path) -> None:
    path = tmp_path / "telemetry.jsonl"
    log = TelemetryLog(path)
    huge = "z" * (256 * 1024)
    record = TelemetryRecord(
        harness=huge,
        tool=huge,
        outcome=Outcome.REJECTED,
        model=huge,
        reason=huge,
        session=huge,
        call_id=huge,
        rules=(huge,) * 1000,
    )
    assert log.write(record)
    line = path.read_text()
    assert len(line) < 400 * MAX_FIELD_CHARS
    data = json.loads(line)
    for name in ("harness", "tool", "model", "reason", "session", "call_id"):
        assert len(data[name]) == MAX_FIELD_CHARS
        assert data[name].startswith("zzzz")
    assert len(data["rules"]) == MAX_FIELD_CHARS
    assert record.model == huge  # the record itself is left as it was given


def test_huge_model_names_through_the_proxy_keep_metrics_and_telemetry_small(
    tmp_path: Path,
) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    names = [f"{i}-" + "m" * (256 * 1024) for i in range(3)]
    stream = chat_stream(calls=(("call_1", "f", '{"a": 1,}'),))
    fake = FakeUpstream(script=[Reply(body=stream)] * len(names))
    path = tmp_path / "telemetry.jsonl"
    telemetry = TelemetryLog(path, harness="proxy")
    with serving(fake.app()) as upstream:
        app = create_app(ProxyConfig(upstream=upstream, telemetry=telemetry, access_log=False))
        with serving(app) as url:
            for name in names:
                body = {
                    "model": name,
                    "stream": True,
                    "tools": tools,
                    "messages": [{"role": "user", "content": "go"}],
                }
                answer = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30)
                assert answer.status_code == 200
            page = httpx.get(f"{url}/metrics").text
    assert len(page) < 8000  # was over 256 KiB per sample line
    assert _valid(page)
    models = set(re.findall(r'model="([^"]*)"', page))
    assert len(models) == len(names)  # still three models, each shortened
    assert all(len(m) == MAX_LABEL_CHARS for m in models)
    lines = path.read_text().splitlines()
    assert len(lines) == len(names)
    assert all(len(line) < 2000 for line in lines)
    assert len({json.loads(line)["model"] for line in lines}) == len(names)
