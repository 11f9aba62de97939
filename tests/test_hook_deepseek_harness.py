"""``streamrepair hook deepseek-harness``: dsh payloads, deny-with-guidance (the seam
cannot rewrite), the Codex bridge projection, the hostile stdin list, and the skill's
documented DeepSeek Harness cases with where and why our answers differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _hook_support import HOSTILE_STDINS, cli_env, run_cli
from streamrepair.integrations import Bridge, HookSettings, claude_code_hook, deepseek_harness_hook
from streamrepair.integrations.deepseek_harness import PROJECTION_NOTE
from streamrepair.telemetry import Outcome

# The tools of the skill's DeepSeek Harness tests, with the schemas a user would pass
# with --schemas (dsh does not publish its tool schemas as data).
SCHEMAS: dict[str, Any] = {
    "readFile": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "filePath": {"type": "string"},
            "limit": {"type": "integer"},
            'we"ird\\key': {"type": "integer"},
        },
    },
    "writeFile": {
        "type": "object",
        "properties": {
            "files": {"type": "array", "items": {"type": "string"}},
            "content": {"type": "string"},
            "options": {"type": "object", "properties": {"timeout": {"type": "integer"}}},
        },
    },
    "exec": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["command"],
    },
}
WITH = HookSettings(schemas=SCHEMAS, environ={})
WITHOUT = HookSettings(environ={})


def payload(tool: str | None, tool_input: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "session_id": "s1",
        "transcript_path": "",
        "cwd": "/data",
        "hook_event_name": "PreToolUse",
        "tool_input": tool_input,
        "tool_use_id": "call_1",
    }
    if tool is not None:
        out["tool_name"] = tool
    return out


def decide(tool: str | None, tool_input: Any, settings: HookSettings = WITH) -> tuple[str, Any]:
    """("proceed", answer) or ("deny", answer), checking the deny shape."""
    result = deepseek_harness_hook(payload(tool, tool_input), settings)
    assert result.exit_code == 0
    assert "\n" not in result.stdout
    out = json.loads(result.stdout)
    if out == {}:
        return "proceed", result
    assert out["decision"] == "block"
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert spec["permissionDecision"] == "deny"
    assert spec["permissionDecisionReason"] == out["reason"]
    assert "updatedInput" not in spec  # the seam cannot rewrite
    return "deny", result


def reason(result: Any) -> str:
    return str(json.loads(result.stdout)["reason"])


# ------------------------------------------------------------------ the skill's cases


def test_null_optional_is_denied_with_guidance_naming_tool_field_and_the_fix() -> None:
    verdict, result = decide("readFile", {"path": "/data/x", "limit": None})
    assert verdict == "deny"
    text = reason(result)
    assert '"readFile" was not run' in text
    assert "$.limit: omit optional fields instead of sending null" in text
    assert 'Send the call again with these arguments: {"path": "/data/x"}' in text
    assert result.record.outcome is Outcome.GUIDED
    assert result.record.rules == ("drop_null",)


def test_the_same_payload_is_repaired_in_place_under_claude_code_when_a_schema_is_known() -> None:
    # The skill pinned "proceed" for this payload in its Claude Code hook (key mismatch).
    # Both of our hooks read tool_name; Claude Code can rewrite, so it repairs.
    settings = HookSettings(schemas=SCHEMAS, environ={})
    result = claude_code_hook(payload("readFile", {"path": "/data/x", "limit": None}), settings)
    spec = json.loads(result.stdout)["hookSpecificOutput"]
    assert spec["updatedInput"] == {"path": "/data/x"}


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("readFile", {"path": "/data/x"}),
        ("readFile", {"path": "/data/x", "limit": 5}),
        ("readFile", {}),
        (None, {"limit": None}),
        ("readFile", None),
        ("writeFile", {"content": "see [click](https://example.com)"}),
        ("writeFile", {"content": "[1, 2] and [3, 4]"}),
        ("writeFile", {"content": '["looks", "like", "json"]'}),
        ("readFile", {"path": "[notes.md](https://example.com/docs/notes.md)"}),
        ("writeFile", {"files": ["a.txt"], "options": {"timeout": 5}}),
    ],
)
def test_proceeds(tool: str | None, tool_input: Any) -> None:
    assert decide(tool, tool_input)[0] == "proceed"


@pytest.mark.parametrize(
    ("tool", "tool_input", "fragment"),
    [
        ("writeFile", {"files": '["a.txt", "b.txt"]'}, "$.files: send arrays and objects"),
        ("writeFile", {"files": ' ["a.txt"] '}, "$.files: send arrays and objects"),
        ("writeFile", {"files": "a.txt"}, "$.files: send a list even for a single item"),
        ("readFile", {"path": "/x/[notes.md](http://notes.md)"}, "$.path: write file paths"),
        ("readFile", {"filePath": "[notes.md](http://notes.md)"}, "$.filePath: write file paths"),
        ("writeFile", {"options": {"timeout": None}}, "$.options.timeout: omit optional"),
        ("writeFile", {"files": '["a"]', "options": {"timeout": None}}, "$.options.timeout"),
    ],
)
def test_denied_with_guidance(tool: str, tool_input: Any, fragment: str) -> None:
    verdict, result = decide(tool, tool_input)
    assert verdict == "deny"
    assert fragment in reason(result)
    assert tool in reason(result)


def test_without_schemas_only_schema_free_rules_deny() -> None:
    # The skill's detectors blocked any null and any bracket string with no schema, which
    # also blocks nullable parameters and JSON-looking content forever. We need a schema
    # to call a null wrong; the autolink rule needs none.
    assert decide("readFile", {"path": "/data/x", "limit": None}, WITHOUT)[0] == "proceed"
    assert decide("writeFile", {"files": '["a.txt"]'}, WITHOUT)[0] == "proceed"
    verdict, result = decide("readFile", {"path": "/x/[n.md](http://n.md)"}, WITHOUT)
    assert verdict == "deny"
    assert '{"path": "/x/n.md"}' in reason(result)


def test_hostile_key_gives_one_line_of_valid_json() -> None:
    verdict, result = decide("readFile", {'we"ird\\key': None})
    assert verdict == "deny"
    assert '$["we\\"ird\\\\key"]: omit optional fields' in reason(result)


def test_still_invalid_is_denied_with_feedback_and_the_repairable_parts() -> None:
    verdict, result = decide("writeFile", {"files": "[not json]", "options": {"timeout": None}})
    assert verdict == "deny"
    text = reason(result)
    assert text.startswith('Invalid input for tool "writeFile". Please correct and retry:')
    assert "$.files: expected an array" in text
    assert "$.options.timeout: omit optional fields" in text
    assert result.record.outcome is Outcome.REJECTED


# ------------------------------------------------------------------ Codex bridge


def test_codex_projection_is_said_on_stderr_every_time() -> None:
    for _ in range(2):
        result = deepseek_harness_hook(payload("readFile", {"command": "cat /x"}), WITH)
        assert result.stdout == "{}"
        assert result.stderr == (PROJECTION_NOTE,)
    assert "only tool_input.command is visible" in PROJECTION_NOTE


def test_codex_projection_checks_only_the_command_schema() -> None:
    # readFile has no `command`; under the projection its other fields are not required.
    assert decide("exec", {"command": "ls -la"})[0] == "proceed"
    verdict, result = decide("exec", {"command": None})
    assert verdict == "deny"
    assert "$.command" in reason(result)
    assert result.stderr == (PROJECTION_NOTE,)
    # The skill blocked these two; a shell command that is a JSON array, or that holds
    # a markdown link, is a valid string (a command may echo a link into a README).
    assert decide("exec", {"command": '["a.txt", "b.txt"]'})[0] == "proceed"
    assert decide("exec", {"command": "cat /x/[notes.md](http://notes.md)"})[0] == "proceed"


def test_more_than_command_is_not_a_projection_unless_the_bridge_is_named() -> None:
    verdict, result = decide("exec", {"command": "ls", "timeout": None})
    assert verdict == "deny"
    assert "$.timeout" in reason(result)
    assert result.stderr == ()
    codex = HookSettings(schemas=SCHEMAS, bridge=Bridge.CODEX, environ={})
    verdict, result = decide("exec", {"command": "ls", "timeout": None}, codex)
    assert verdict == "proceed"
    assert result.stderr == (PROJECTION_NOTE,)


def test_grok_profile_turns_entity_escaped_commands_into_guidance() -> None:
    settings = HookSettings(profiles="grok", environ={})
    verdict, result = decide("exec", {"command": "make &amp;&amp; make test"}, settings)
    assert verdict == "deny"
    text = reason(result)
    assert "$.command: write shell commands as plain text" in text
    assert '{"command": "make && make test"}' in text


def test_post_tool_use_records_and_prints_nothing() -> None:
    p = dict(payload("exec", {"command": "ls"}), hook_event_name="PostToolUse")
    result = deepseek_harness_hook(p, WITH)
    assert (result.stdout, result.stderr) == ("", ())
    assert result.record.event == "result"
    assert result.record.harness == "deepseek-harness"


@pytest.mark.parametrize("value", [None, [1, 2, 3], "a string", 42, True])
def test_non_object_payloads_pass_through(value: Any) -> None:
    result = deepseek_harness_hook(value, WITH)
    assert (result.stdout, len(result.stderr)) == ("{}", 1)


# ------------------------------------------------------------------ as a subprocess


def test_subprocess_with_a_schema_file(tmp_path: Path) -> None:
    schemas = tmp_path / "dsh-tools.json"
    schemas.write_text(json.dumps(SCHEMAS))
    env = cli_env(tmp_path)
    p = json.dumps(payload("readFile", {"path": "/data/x", "limit": None})).encode()
    done = run_cli("hook", "deepseek-harness", "--schemas", str(schemas), stdin=p, env=env)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1
    out = json.loads(done.stdout)
    assert out["decision"] == "block"
    assert "$.limit" in out["reason"]
    log = (tmp_path / "state" / "streamrepair" / "telemetry.jsonl").read_text()
    record = json.loads(log)
    assert (record["harness"], record["outcome"], record["rules"]) == (
        "deepseek-harness",
        "guided",
        ["drop_null"],
    )
    projected = json.dumps(payload("exec", {"command": "ls"})).encode()
    done = run_cli("hook", "deepseek-harness", stdin=projected, env=env)
    assert (done.returncode, done.stdout) == (0, b"{}\n")
    assert PROJECTION_NOTE.encode() in done.stderr


@pytest.mark.parametrize("stdin", HOSTILE_STDINS)
def test_hostile_stdin_passes_through_with_one_stderr_line(tmp_path: Path, stdin: bytes) -> None:
    done = run_cli("hook", "deepseek-harness", stdin=stdin, env=cli_env(tmp_path))
    assert done.returncode == 0
    assert done.stdout == b"{}\n"
    assert len(done.stderr.decode().splitlines()) == 1
