"""``streamrepair hook claude-code``: real PreToolUse/PostToolUse payloads, the permission
policy, the hostile stdin list, the time bound, and the tool-repair skill's documented
cases (including those its adapter got wrong)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _hook_support import HOSTILE_STDINS, cli_env, run_cli
from streamrepair.integrations import (
    CLAUDE_CODE_SCHEMAS,
    HookSettings,
    Permission,
    claude_code_hook,
    hooks,
    parse_payload,
)
from streamrepair.integrations.claude_code import permission_for
from streamrepair.telemetry import Outcome


def payload(tool: str, tool_input: Any, **extra: Any) -> dict[str, Any]:
    base = {
        "session_id": "abc123",
        "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
        "cwd": "/home/u/proj",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC",
    }
    base.update(extra)
    return base


SETTINGS = HookSettings(environ={})


def answer(p: Any, settings: HookSettings = SETTINGS) -> tuple[dict[str, Any], Any]:
    result = claude_code_hook(p, settings)
    assert result.exit_code == 0
    assert "\n" not in result.stdout
    return json.loads(result.stdout) if result.stdout else {}, result


def specific(out: dict[str, Any]) -> dict[str, Any]:
    assert set(out) == {"hookSpecificOutput"}
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    return dict(spec)


# ------------------------------------------------------------------ rewrite and allow


def test_repairs_are_rewritten_and_left_to_claude_codes_own_permission_rules() -> None:
    p = payload(
        "Read",
        {"file_path": "/home/u/proj/[notes.md](http://notes.md)", "limit": None, "offset": "10"},
    )
    before = copy.deepcopy(p)
    out, result = answer(p)
    spec = specific(out)
    assert "permissionDecision" not in spec  # Claude Code decides, as for the original
    assert "permissionDecisionReason" not in spec
    assert spec["updatedInput"] == {"file_path": "/home/u/proj/notes.md", "offset": 10}
    context = spec["additionalContext"]
    assert context.startswith("[streamrepair: arguments of Read were repaired]")
    assert "drop_null at $.limit" in context
    assert "parse_scalar_string at $.offset" in context
    assert p == before  # the caller's payload is not mutated
    assert result.record.outcome is Outcome.REPAIRED
    assert result.record.rules == ("unwrap_autolink", "parse_scalar_string", "drop_null")
    assert result.record.call_id == "toolu_01ABC"
    assert result.record.session == "abc123"


def test_updated_input_is_the_whole_input_since_claude_code_replaces_it() -> None:
    p = payload(
        "Edit",
        {
            "file_path": "src/app.py",
            "old_string": "a",
            "new_string": "b",
            "replace_all": "true",
        },
        permission_mode="acceptEdits",
    )
    spec = specific(answer(p)[0])
    assert spec["updatedInput"] == {
        "file_path": "src/app.py",
        "old_string": "a",
        "new_string": "b",
        "replace_all": True,
    }


def test_stringified_arrays_in_builtin_array_fields_are_parsed() -> None:
    todos = [{"content": "write tests", "status": "pending", "activeForm": "Writing tests"}]
    spec = specific(answer(payload("TodoWrite", {"todos": json.dumps(todos)}))[0])
    assert spec["updatedInput"] == {"todos": todos}
    edits = [{"old_string": "x", "new_string": "y"}]
    p = payload("MultiEdit", {"file_path": "/home/u/proj/a.py", "edits": json.dumps(edits)})
    spec = specific(answer(p)[0])
    assert spec["updatedInput"]["edits"] == edits


def test_aliases_from_the_other_harness_are_renamed() -> None:
    p = payload("Read", {"filePath": "/home/u/proj/a.py"})
    spec = specific(answer(p)[0])
    assert spec["updatedInput"] == {"file_path": "/home/u/proj/a.py"}
    assert "rename_alias" in spec["additionalContext"]


# ------------------------------------------------------------------ pass and deny


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Read", {"file_path": "/home/u/proj/a.py", "limit": 5}),
        ("Write", {"file_path": "/x/a.json", "content": "[1, 2]"}),
        ("Write", {"file_path": "/x/a.md", "content": "[1, 2] and [3, 4]"}),
        ("Write", {"file_path": "/x/a.md", "content": "see [click](https://example.com)"}),
        ("Write", {"file_path": "/x/a.md", "content": "[notes.md](http://notes.md)"}),
        ("Read", {"file_path": "[notes.md](https://example.com/docs/notes.md)"}),
        ("Read", {"file_path": "[notes.md](http://notes.md?raw=1)"}),
        ("Bash", {"command": 'echo \'["a", "b"]\'', "timeout": 1000}),
        ("Grep", {"pattern": "null", "-i": True, "-A": 3}),
        ("mcp__github__create_issue", {"title": "x", "labels": None}),
    ],
)
def test_valid_input_passes_untouched(tool: str, tool_input: dict[str, Any]) -> None:
    out, result = answer(payload(tool, tool_input))
    assert out == {}
    assert result.stdout == "{}"
    assert result.record.outcome is Outcome.CLEAN
    assert result.record.rules == ()


def test_still_invalid_input_is_denied_with_feedback_for_the_model() -> None:
    out, result = answer(payload("Read", {"limit": "ten", "offset": None}))
    spec = specific(out)
    assert spec["permissionDecision"] == "deny"
    reason = spec["permissionDecisionReason"]
    assert reason.startswith('Invalid input for tool "Read". Please correct and retry:')
    assert "$.file_path: required property is missing" in reason
    assert "$.limit: expected a number" in reason
    assert "$.offset: omit optional fields instead of sending null" in reason
    assert "updatedInput" not in spec
    assert result.record.outcome is Outcome.REJECTED
    assert result.record.errors == 2


def test_unknown_tools_get_only_the_rules_that_need_no_schema() -> None:
    p = payload("mcp__fs__read", {"path": "/home/u/proj/[a.md](http://a.md)", "opts": None})
    spec = specific(answer(p)[0])
    assert spec["updatedInput"] == {"path": "/home/u/proj/a.md", "opts": None}


def test_user_schemas_take_precedence_and_cover_mcp_tools() -> None:
    schema = {"type": "object", "properties": {"labels": {"type": "array"}}}
    settings = HookSettings(schemas={"mcp__github__create_issue": schema}, environ={})
    p = payload("mcp__github__create_issue", {"labels": "bug"})
    spec = specific(answer(p, settings)[0])
    assert spec["updatedInput"] == {"labels": ["bug"]}
    off = HookSettings(builtin_schemas=False, environ={})
    assert answer(payload("Read", {"file_path": "/a", "limit": None}), off)[0] == {}


def test_hostile_keys_give_valid_json() -> None:
    key = 'we"ird\\key\u2028'
    schema = {"type": "object", "properties": {key: {"type": "integer"}}}
    settings = HookSettings(schemas={"t": schema}, environ={})
    out, result = answer(payload("t", {key: None, "x": "\ud800"}), settings)
    spec = specific(out)
    assert spec["updatedInput"] == {"x": "\ud800"}
    assert result.stdout.isascii()


# ------------------------------------------------------------------ permission policy


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "dontAsk", "plan"])
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("Read", {"file_path": "/home/u/proj/a"}),
        ("Read", {"file_path": "/etc/passwd"}),
        ("Bash", {"command": "ls"}),
        ("Edit", {"file_path": "/home/u/proj/a"}),
        ("mcp__x__y", {}),
    ],
)
def test_auto_permission_leaves_every_decision_to_claude_code(
    tool: str, args: dict[str, Any], mode: str
) -> None:
    # Measured (2.1.332): updatedInput without a decision runs where Claude Code would
    # have run the original, prompts (showing the repaired input) where it would have
    # prompted, and is denied where it would have been denied; "ask" is a denial under
    # claude -p, "allow" skips prompts.
    p = payload(tool, args, permission_mode=mode)
    assert permission_for(tool, args, p, Permission.AUTO) == ""
    assert permission_for(tool, args, p, Permission.ALLOW) == "allow"
    assert permission_for(tool, args, p, Permission.ASK) == "ask"


@pytest.mark.parametrize(
    ("policy", "expected"), [(Permission.ALLOW, "allow"), (Permission.ASK, "ask")]
)
def test_an_explicit_policy_sends_its_decision_and_the_repairs_as_reason(
    policy: Permission, expected: str
) -> None:
    p = payload("Bash", {"command": "ls", "timeout": "30"}, permission_mode="dontAsk")
    out, result = answer(p, HookSettings(permission=policy, environ={}))
    spec = specific(out)
    assert spec["permissionDecision"] == expected
    assert spec["permissionDecisionReason"] == (
        "streamrepair repaired the arguments of Bash: parse_scalar_string at $.timeout"
    )
    assert spec["updatedInput"] == {"command": "ls", "timeout": 30}
    assert result.record.outcome is Outcome.REPAIRED


def test_links_are_recognised_after_claude_codes_path_normalisation() -> None:
    # Claude Code 2.1.332 resolves file paths before its hooks run: the model's
    # "[new.md](http://new.md)" arrives as "<cwd>/[new.md](http:/new.md)".
    for sent in ("/home/u/proj/[new.md](http:/new.md)", "/home/u/proj/[new.md](https:/new.md)"):
        p = payload("Write", {"file_path": sent, "content": "hi\n"})
        spec = specific(answer(p)[0])
        assert spec["updatedInput"] == {"file_path": "/home/u/proj/new.md", "content": "hi\n"}
        assert "unwrap_autolink at $.file_path" in spec["additionalContext"]


# ------------------------------------------------------------------ profiles


def test_grok_profile_is_off_by_default_and_decodes_entities_when_on() -> None:
    p = payload("Bash", {"command": "cd x &amp;&amp; make &quot;all&quot;"})
    grok = {"ANTHROPIC_MODEL": "grok-code-fast-1"}
    assert answer(p, HookSettings(environ=grok))[0] == {}
    out, result = answer(p, HookSettings(profiles="auto", environ=grok))
    spec = specific(out)
    assert spec["updatedInput"] == {"command": 'cd x && make "all"'}
    assert "permissionDecision" not in spec  # Bash prompts as usual, showing the repair
    assert "html_entities_in_commands at $.command" in spec["additionalContext"]
    assert result.record.model == "grok-code-fast-1"
    other = HookSettings(profiles="auto", environ={"ANTHROPIC_MODEL": "deepseek-chat"})
    assert answer(p, other)[0] == {}


# ------------------------------------------------------------------ what passes through


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (None, "JSON null"),
        ([1, 2, 3], "JSON list"),
        ("a string", "JSON str"),
        (42, "JSON int"),
        (False, "JSON bool"),
    ],
)
def test_non_object_payloads_pass_through(value: Any, why: str) -> None:
    result = claude_code_hook(value, SETTINGS)
    assert result.stdout == "{}"
    assert len(result.stderr) == 1
    assert why in result.stderr[0]
    assert result.record is None


@pytest.mark.parametrize(
    "p",
    [
        {"hook_event_name": "PreToolUse", "tool_input": {"limit": None}},
        payload("Read", None),
        payload("Read", "not an object"),
        payload("", {"file_path": "/a", "limit": None}),
        {"hook_event_name": "SessionStart", "tool_name": "Read"},
    ],
)
def test_uninspectable_calls_pass_through(p: dict[str, Any]) -> None:
    result = claude_code_hook(p, SETTINGS)
    assert result.stdout == "{}"
    assert len(result.stderr) == 1


def test_the_skills_own_envelope_is_not_the_claude_code_payload() -> None:
    # The tool-repair skill's hook read {"tool", "input"}; Claude Code sends tool_name /
    # tool_input, so the skill's adapter never inspected a real call. Ours reads the
    # documented keys, and the skill's envelope (no tool_name) passes through.
    skill = {"tool": "Read", "input": {"file_path": "/a", "limit": None}}
    assert claude_code_hook(skill, SETTINGS).stdout == "{}"
    real = payload("Read", {"file_path": "/home/u/proj/a", "limit": None})
    assert specific(answer(real)[0])["updatedInput"] == {"file_path": "/home/u/proj/a"}


# ------------------------------------------------------------------ PostToolUse


@pytest.mark.parametrize(
    ("event", "response", "outcome"),
    [
        ("PostToolUse", {"filePath": "/a", "success": True}, Outcome.SUCCEEDED),
        ("PostToolUse", {"is_error": True}, Outcome.FAILED),
        ("PostToolUseFailure", {"error": "boom"}, Outcome.FAILED),
    ],
)
def test_post_tool_use_prints_nothing_and_records_the_result(
    event: str, response: dict[str, Any], outcome: Outcome
) -> None:
    p = payload("Write", {"file_path": "/a", "content": "secret"}, hook_event_name=event)
    p["tool_response"] = response
    result = claude_code_hook(p, SETTINGS)
    assert result.stdout == ""
    assert result.stderr == ()
    assert result.record.event == "result"
    assert result.record.outcome is outcome
    assert result.record.call_id == "toolu_01ABC"
    assert result.record.arguments is None


# ------------------------------------------------------------------ as a subprocess


def test_subprocess_round_trip_with_telemetry_without_contents(tmp_path: Path) -> None:
    env = cli_env(tmp_path, ANTHROPIC_MODEL="deepseek-chat")
    p = payload(
        "Write",
        {"file_path": "/home/u/proj/[s.txt](http://s.txt)", "content": "TOP-SECRET"},
        permission_mode="acceptEdits",
    )
    done = run_cli("hook", "claude-code", stdin=json.dumps(p).encode(), env=env)
    assert done.returncode == 0, done.stderr
    spec = specific(json.loads(done.stdout))
    assert spec["updatedInput"] == {"file_path": "/home/u/proj/s.txt", "content": "TOP-SECRET"}
    assert "permissionDecision" not in spec
    post = dict(p, hook_event_name="PostToolUse", tool_response={"success": True})
    done = run_cli("hook", "claude-code", stdin=json.dumps(post).encode(), env=env)
    assert done.returncode == 0
    assert done.stdout == b""
    log = (tmp_path / "state" / "streamrepair" / "telemetry.jsonl").read_text()
    assert "TOP-SECRET" not in log
    lines = [json.loads(line) for line in log.splitlines()]
    assert [(r["event"], r["outcome"], r["model"]) for r in lines] == [
        ("call", "repaired", "deepseek-chat"),
        ("result", "succeeded", "deepseek-chat"),
    ]
    assert lines[0]["rules"] == ["unwrap_autolink"]


def test_subprocess_logs_contents_only_when_asked(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    env = cli_env(tmp_path)
    p = payload("Read", {"file_path": "/home/u/proj/TOP-SECRET", "limit": None})
    args = ("hook", "claude-code", "--telemetry", str(log), "--log-arguments")
    done = run_cli(*args, stdin=json.dumps(p).encode(), env=env)
    assert done.returncode == 0
    record = json.loads(log.read_text())
    assert record["arguments"] == p["tool_input"]
    assert record["repaired_arguments"] == {"file_path": "/home/u/proj/TOP-SECRET"}


@pytest.mark.parametrize("stdin", HOSTILE_STDINS)
def test_hostile_stdin_passes_through_with_one_stderr_line(tmp_path: Path, stdin: bytes) -> None:
    done = run_cli("hook", "claude-code", stdin=stdin, env=cli_env(tmp_path))
    assert done.returncode == 0
    assert done.stdout == b"{}\n"
    assert len(done.stderr.decode().splitlines()) == 1
    assert not (tmp_path / "state").exists()  # nothing inspected, nothing logged


def test_bad_options_and_unknown_harness_never_exit_2(tmp_path: Path) -> None:
    # argparse's exit status 2 would tell Claude Code to block the call.
    env = cli_env(tmp_path, STREAMREPAIR_TELEMETRY="off")
    p = json.dumps(payload("Read", {"file_path": "/home/u/proj/a", "limit": None})).encode()
    args = ("hook", "claude-code", "--no-such-option", "--permission", "x", "--model", "m")
    done = run_cli(*args, stdin=p, env=env)
    assert done.returncode == 0
    assert b"hook options ignored: --no-such-option" in done.stderr
    assert b"unknown permission policy 'x'; using auto" in done.stderr
    assert specific(json.loads(done.stdout))["updatedInput"] == {"file_path": "/home/u/proj/a"}
    done = run_cli("hook", "claude-code", "--schemas", stdin=p, env=env)  # no value
    assert done.returncode == 0
    assert specific(json.loads(done.stdout))["updatedInput"] == {"file_path": "/home/u/proj/a"}
    assert b"hook options ignored: --schemas (it needs a value)" in done.stderr
    done = run_cli("hook", "cursor", stdin=p, env=env)
    assert (done.returncode, done.stdout) == (0, b"{}\n")
    done = run_cli("hook", stdin=p, env=env)
    assert (done.returncode, done.stdout) == (0, b"{}\n")


def test_a_stdin_that_never_closes_gets_an_answer_in_bounded_time(tmp_path: Path) -> None:
    env = cli_env(tmp_path, STREAMREPAIR_HOOK_DEADLINE="0.5")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamrepair.cli", "hook", "claude-code"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(b'{"tool_name": "Read", ')
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
        assert proc.stdout is not None
        assert proc.stderr is not None
        assert proc.stdout.read() == b"{}\n"
        assert b"no answer within 0.5 seconds" in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_settings_come_from_the_environment(tmp_path: Path) -> None:
    schemas = tmp_path / "schemas.json"
    schemas.write_text(
        json.dumps(
            [{"name": "mcp__x__tag", "input_schema": {"properties": {"tags": {"type": "array"}}}}]
        )
    )
    env = cli_env(
        tmp_path,
        STREAMREPAIR_SCHEMAS=str(schemas),
        STREAMREPAIR_PERMISSION="allow",
        STREAMREPAIR_TELEMETRY="off",
    )
    p = json.dumps(payload("mcp__x__tag", {"tags": "a"})).encode()
    done = run_cli("hook", "claude-code", stdin=p, env=env)
    spec = specific(json.loads(done.stdout))
    assert (spec["updatedInput"], spec["permissionDecision"]) == ({"tags": ["a"]}, "allow")
    bad = cli_env(tmp_path, STREAMREPAIR_SCHEMAS=str(tmp_path / "missing.json"))
    done = run_cli("hook", "claude-code", stdin=p, env=bad)
    assert (done.returncode, done.stdout) == (0, b"{}\n")
    assert b"schemas not loaded" in done.stderr


# ------------------------------------------------------------------ properties

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELD_VALUES = st.one_of(
    JSON_VALUES,
    st.sampled_from(
        ["null", "30", "true", '["a", "b"]', "[not json]", "/p/[a.md](http://a.md)", "{}"]
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tool=st.sampled_from([*sorted(CLAUDE_CODE_SCHEMAS), "mcp__x__y"]),
    data=st.data(),
)
def test_any_input_gets_one_answer_that_never_mutates_and_repairs_only_to_valid(
    tool: str, data: st.DataObject
) -> None:
    schema = CLAUDE_CODE_SCHEMAS.get(tool, {"properties": {}})
    keys = [*sorted(schema["properties"]), "extra"]
    tool_input = data.draw(st.dictionaries(st.sampled_from(keys), FIELD_VALUES, max_size=4))
    p = payload(tool, tool_input)
    before = copy.deepcopy(p)
    result = claude_code_hook(p, SETTINGS)
    assert p == before
    out = json.loads(result.stdout)
    if out == {}:
        assert result.record.outcome is Outcome.CLEAN
        if tool in CLAUDE_CODE_SCHEMAS:
            jsonschema.validate(tool_input, schema)  # passed through means valid
        return
    spec = specific(out)
    if spec.get("permissionDecision") == "deny":
        assert result.record.outcome is Outcome.REJECTED
        return
    updated = spec["updatedInput"]
    assert updated != tool_input
    if tool in CLAUDE_CODE_SCHEMAS:
        jsonschema.validate(updated, schema)
    again = json.loads(claude_code_hook(payload(tool, updated), SETTINGS).stdout)
    assert again == {}  # a repaired input needs no second repair


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "hook input is empty"),
        (b" \n\t", "hook input is empty"),
        (b"\xff", "hook input is not UTF-8"),
        (b"{", "hook input is not JSON"),
        (b"[" * 100_000, "hook input is not JSON"),
        (b"NaN", ""),
        (b'\xef\xbb\xbf{"a": 1}', ""),
    ],
)
def test_parse_payload(data: bytes, problem: str) -> None:
    value, why = parse_payload(data)
    assert why == problem
    if problem:
        assert value is None


def test_parse_payload_bounds_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hooks, "MAX_PAYLOAD_BYTES", 16)
    assert parse_payload(b'{"tool_name": "Read"}')[1] == "hook input is larger than 16 bytes"
    assert parse_payload(b'{"a": 1}') == ({"a": 1}, "")
