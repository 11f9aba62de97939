"""The Hermes plugin's callbacks, driven the way hermes-agent 0.19.0 calls them (keyword
arguments only, in the order tool_request -> pre_tool_call -> tool -> transform_tool_result),
without Hermes. The same plugin inside the real Hermes is tests/e2e/test_e2e_hermes.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from streamrepair.integrations import hermes_plugin as hp
from streamrepair.telemetry import TelemetryLog

READ = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "limit": {"type": "integer"},
        "files": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["path"],
}
SCHEMAS = {"read": READ, "shot": {"type": "object", "properties": {"scale": {"type": "number"}}}}


class Context:
    """Hermes's PluginContext, as far as the plugin uses it."""

    def __init__(self) -> None:
        self.hooks: dict[str, Any] = {}
        self.middleware: dict[str, Any] = {}

    def register_hook(self, name: str, callback: Any) -> None:
        self.hooks[name] = callback

    def register_middleware(self, kind: str, callback: Any) -> None:
        self.middleware[kind] = callback


def plugin(tmp_path: Path | None = None, **environ: str) -> hp.HermesPlugin:
    telemetry = TelemetryLog(tmp_path / "t.jsonl", harness="hermes") if tmp_path else None
    return hp.HermesPlugin(environ=environ, schema_for=SCHEMAS.get, telemetry=telemetry)


def dispatch(
    p: hp.HermesPlugin,
    tool: str,
    args: Any,
    call_id: str,
    result: Any = "RESULT",
    session: str = "s1",
) -> tuple[Any, Any, Any]:
    """(what the tool ran with, or None when blocked; the block; what the model reads)."""
    before = copy.deepcopy(args)
    kwargs = {"tool_call_id": call_id, "session_id": session, "task_id": "t", "turn_id": "u"}
    answer = p.on_tool_request(tool_name=tool, args=args, original_args=args, **kwargs)
    assert args == before  # never mutated
    ran = answer["args"] if answer else args
    block = p.on_pre_tool_call(tool_name=tool, args=ran, **kwargs)
    if block is not None:
        return None, block, None
    new = p.on_transform_tool_result(
        tool_name=tool, args=ran, result=result, status="ok", error_type=None, **kwargs
    )
    return ran, None, result if new is None else new


def test_register_uses_the_seams_that_run_before_dispatch() -> None:
    ctx = Context()
    hp.register(ctx, environ={"STREAMREPAIR_TELEMETRY": "off"})
    assert set(ctx.middleware) == {"tool_request", "llm_execution"}
    assert set(ctx.hooks) == {"pre_tool_call", "transform_tool_result"}
    off = Context()
    hp.register(off, environ={"STREAMREPAIR_TELEMETRY": "off", hp.TEXT_ENV: "0"})
    assert set(off.middleware) == {"tool_request"}


def test_a_repair_replaces_the_arguments_and_the_note_follows_once(tmp_path: Path) -> None:
    p = plugin(tmp_path)
    args = {"path": "/x/[a.md](http://a.md)", "limit": None, "files": "b.md"}
    answer = p.on_tool_request(tool_name="read", args=args, tool_call_id="c1", session_id="s1")
    assert answer == {
        "args": {"path": "/x/a.md", "files": ["b.md"]},
        "source": "streamrepair",
        "reason": "unwrap_autolink at $.path, drop_null at $.limit, wrap_bare_string at $.files",
    }
    text = p.on_transform_tool_result(
        tool_name="read", result="RESULT", tool_call_id="c1", session_id="s1"
    )
    assert text is not None
    assert text.startswith("RESULT\n\n[streamrepair: arguments of read were repaired]")
    assert "drop_null at $.limit" in text
    _, _, again = dispatch(p, "read", {"path": "/y", "limit": None}, "c2")
    assert again == "RESULT"  # the same lesson in the same session: not repeated
    _, _, other = dispatch(p, "read", {"path": "/y", "limit": None}, "c3", session="s2")
    assert "drop_null at $.limit" in other  # another session learns it too
    log = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [(r["event"], r["outcome"]) for r in log][:2] == [
        ("call", "repaired"),
        ("result", "succeeded"),
    ]


def test_valid_arguments_are_never_touched() -> None:
    p = plugin()
    args = {"path": "/x/a.md", "limit": 3}
    assert p.on_tool_request(tool_name="read", args=args, tool_call_id="c1") is None
    assert p.on_pre_tool_call(tool_call_id="c1") is None
    assert p.on_transform_tool_result(tool_name="read", result="R", tool_call_id="c1") is None


def test_a_call_that_stays_invalid_is_blocked_with_the_feedback() -> None:
    ran, block, _ = dispatch(plugin(), "read", {"limit": "ten"}, "c1")
    assert ran is None
    assert block["action"] == "block"
    assert block["message"].startswith('Invalid input for tool "read". Please correct and retry:')
    assert "$.path: required property is missing" in block["message"]
    ran, block, told = dispatch(plugin(**{hp.BLOCK_ENV: "0"}), "read", {"limit": "ten"}, "c1")
    assert (ran, block, told) == ({"limit": "ten"}, None, "RESULT")  # Hermes decides


def test_a_multimodal_result_is_left_exactly_as_it_is() -> None:
    envelope = {
        "_multimodal": True,
        "content": [{"type": "text", "text": "x"}],
        "text_summary": "x",
    }
    ran, _, told = dispatch(plugin(), "shot", {"scale": None}, "c1", result=envelope)
    assert ran == {}
    assert told is envelope
    # the lesson was not given, so a later string result still gets it
    _, _, later = dispatch(plugin(), "shot", {"scale": None}, "c2")
    assert "drop_null at $.scale" in later


def test_tools_without_a_schema_get_the_rules_that_need_none() -> None:
    ran, _, told = dispatch(plugin(), "mcp_fs_read", {"path": "/x/[a](http://a)", "n": None}, "c1")
    assert ran == {"path": "/x/a", "n": None}
    assert "unwrap_autolink at $.path" in told


def test_user_schemas_come_first(tmp_path: Path) -> None:
    schemas = tmp_path / "s.json"
    schemas.write_text(json.dumps({"read": {"type": "object", "properties": {"limit": {}}}}))
    p = plugin(STREAMREPAIR_SCHEMAS=str(schemas))
    assert p.on_tool_request(tool_name="read", args={"limit": None}, tool_call_id="c") is None
    broken = plugin(STREAMREPAIR_SCHEMAS=str(tmp_path / "missing.json"))
    assert broken.schemas == {}


@pytest.mark.parametrize(
    "bad",
    [
        {"tool_name": "read", "args": None},
        {"tool_name": "read", "args": [1, 2]},
        {"tool_name": None, "args": {"path": "x"}},
        {"args": {"path": "x"}},
    ],
)
def test_what_it_cannot_read_passes(bad: dict[str, Any]) -> None:
    assert plugin().on_tool_request(tool_call_id="c1", **bad) is None


def test_every_callback_fails_open(caplog: pytest.LogCaptureFixture) -> None:
    def broken(tool: str) -> Any:
        raise RuntimeError("registry gone")

    p = hp.HermesPlugin(environ={}, schema_for=broken)
    assert p.on_tool_request(tool_name="read", args={"path": "x"}, tool_call_id="c") is None
    assert "registry gone" in caplog.text
    assert p.on_pre_tool_call(tool_call_id="c") is None
    assert p.on_transform_tool_result(tool_name="read", result="R", tool_call_id="c") is None


def test_pending_notes_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hp, "MAX_PENDING_CALLS", 3)
    p = plugin()
    for i in range(5):
        p.on_tool_request(tool_name="read", args={"path": "x", "limit": None}, tool_call_id=f"c{i}")
    assert list(p._calls) == ["c2", "c3", "c4"]
    assert p.on_transform_tool_result(tool_name="read", result="R", tool_call_id="c0") is None


# ------------------------------------------------------------------ llm_execution


def response(*texts: str) -> Any:
    calls = [
        SimpleNamespace(id=f"c{i}", function=SimpleNamespace(name="read", arguments=text))
        for i, text in enumerate(texts)
    ]
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(tool_calls=calls))])


def test_argument_text_is_repaired_only_without_invented_structure() -> None:
    p = plugin()
    sent = response(
        '{"path": "a.txt", "limit": 5,}',  # trailing comma: repaired
        '{"path": "a.txt", "limit": 1',  # cut off: left for Hermes to refuse
        '{"path": "a.txt"}',  # valid: untouched
        "",
    )
    got = p.on_llm_execution(request="REQ", next_call=lambda request: sent, model="m")
    assert got is sent
    texts = [c.function.arguments for c in got.choices[0].message.tool_calls]
    assert texts == [
        '{"path": "a.txt", "limit": 5}',
        '{"path": "a.txt", "limit": 1',
        '{"path": "a.txt"}',
        "",
    ]
    _, _, told = dispatch(p, "read", {"path": "a.txt", "limit": 5}, "c0")
    assert "trailing_comma at character" in told


def test_a_response_of_another_shape_is_returned_as_it_is() -> None:
    p = plugin()
    for odd in (None, "text", SimpleNamespace(choices=None), {"choices": []}):
        assert p.on_llm_execution(request=None, next_call=lambda request, odd=odd: odd) is odd
    with pytest.raises(TypeError):
        p.on_llm_execution(request=None)
