"""What Claude Code, Codex and OpenCode do *directly* (no proxy) with each broken turn of
issue 21 and each candidate form of a refused call, in the pinned binaries against the
scripted upstream (``scripted``, ``harnessloop``; the tables are in
docs/integrations/harness-loops.md). A harness upgrade that changes any of it fails here.

The steps after which a harness's loop goes on run as one chained conversation per
harness (``scenarios.chain``: each broken reply is answered by the harness's next
request, then one reply writes what they all meant): one process instead of fifteen,
which keeps OpenCode (3-15 s a run) inside the time budget. Each step is still its own
test, reading its part of the shared run. The steps after which a harness ends its turn
or retries run alone.

Each step's expectation: the text of the tool result the model reads (substrings), the
name the harness echoes for the call in its next request (OpenCode renames a call it
cannot use to ``invalid``), whether the guidance written into the call's arguments is
still in front of the model (in the echoed call or the result), and the files the step
wrote (nearly always none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pytest
from forms import FORMS, STOPS, guidance_for
from harnessloop import Bench, Harness, LoopRun, Via, run_loop, skip_reason
from scenarios import CONTENT, SCENARIOS, WINDOWS_TEXT, Step, chain

#: What all chained steps meant, written by the chain's last reply.
INTENDED: Final = {
    "out.txt": CONTENT,
    "a.txt": "alpha\n",
    "b.txt": "beta\n",
    "win.txt": WINDOWS_TEXT + "\n",
}
PARSE_CC: Final = (
    "InputValidationError: Write was called with input that could not be parsed as JSON"
)
PARSE_OC: Final = "The arguments provided to the tool are invalid: Invalid input for tool write: JSON parsing failed"
PARSE_CX: Final = "failed to parse function arguments: "
DONE: Final = {
    Harness.CLAUDE_CODE: "File created successfully at: ",
    Harness.CODEX: "Process exited with code 0",
    Harness.OPENCODE: "Wrote file successfully.",
}


@dataclass(frozen=True)
class Expect:
    """One step's direct outcome (module docstring)."""

    result: Sequence[str]
    echoed: str | None = None
    guidance_seen: bool | None = None
    writes: Mapping[str, str] = field(default_factory=dict)


def _unknown(harness: Harness, name: str) -> Expect:
    if harness is Harness.CLAUDE_CODE:
        return Expect(
            [f"<tool_use_error>Error: No such tool available: {name}</tool_use_error>"], name, True
        )
    if harness is Harness.CODEX:
        return Expect([f"unsupported call: {name}"], name, True)
    # OpenCode swaps the call for its `invalid` tool: {"tool", "error"}, the guidance gone
    return Expect(
        [f"Model tried to call unavailable tool '{name}'. Available tools: bash, edit, "],
        "invalid",
        False,
    )


def _stop_written(label: str) -> dict[str, str]:
    return {f"stop_{label}.txt": CONTENT}


CHAINS: Final[Mapping[Harness, Mapping[str, Expect]]] = {
    Harness.CLAUDE_CODE: {
        "cut_length": Expect([PARSE_CC, '"content": "line one\\nline'], "Write"),
        "cut_normal": Expect([PARSE_CC], "Write"),
        "renamed_key": Expect(
            [
                "InputValidationError: Write failed due to the following issues:\n"
                "The required parameter `file_path` is missing\n"
                "An unexpected parameter `filePath` was provided"
            ],
            "Write",
        ),
        "invalid_after_repairs": Expect([PARSE_CC], "Write"),
        "merged_objects": Expect([PARSE_CC, "}{"], "Write"),
        "merged_at_boundary": Expect([PARSE_CC, "}{"], "Write"),
        "windows_path": Expect([PARSE_CC, "Common causes: unescaped backslashes"], "Write"),
        "unknown_tool": _unknown(Harness.CLAUDE_CODE, "streamrepair_refused_call"),
        "suffixed_tool": _unknown(Harness.CLAUDE_CODE, "Write_refused"),
        "upper_unknown": _unknown(Harness.CLAUDE_CODE, "STREAMREPAIR_REFUSED_CALL"),
        "case_variant": Expect(
            ["No such tool available: write. Tool names are case-sensitive: call Write instead."],
            "write",
        ),
        # the guidance reaches the model twice: in the error and in the echoed input
        "sentence_args": Expect([PARSE_CC, "You sent (first 171 of 171 bytes): "], "Write", True),
        "stop_tool_use": Expect(
            [DONE[Harness.CLAUDE_CODE]], "Write", None, _stop_written("tool_use")
        ),
        "stop_end_turn": Expect(
            [DONE[Harness.CLAUDE_CODE]], "Write", None, _stop_written("end_turn")
        ),
        "stop_max_tokens": Expect(
            [DONE[Harness.CLAUDE_CODE]], "Write", None, _stop_written("max_tokens")
        ),
        "stop_stop_sequence": Expect(
            [DONE[Harness.CLAUDE_CODE]], "Write", None, _stop_written("stop_sequence")
        ),
    },
    Harness.CODEX: {
        "cut_normal": Expect(
            [PARSE_CX + "EOF while parsing a string at line 1 column"], "exec_command"
        ),
        "renamed_key": Expect([PARSE_CX + "missing field `cmd` at line 1 column"], "exec_command"),
        "invalid_after_repairs": Expect(
            [PARSE_CX + "trailing comma at line 1 column 17"], "exec_command"
        ),
        "merged_objects": Expect(
            [PARSE_CX + "trailing characters at line 1 column"], "exec_command"
        ),
        "merged_at_boundary": Expect(
            [PARSE_CX + "trailing characters at line 1 column"], "exec_command"
        ),
        "windows_path": Expect([PARSE_CX + "invalid escape at line 1 column"], "exec_command"),
        "unknown_tool": _unknown(Harness.CODEX, "streamrepair_refused_call"),
        "suffixed_tool": _unknown(Harness.CODEX, "exec_command_refused"),
        "upper_unknown": _unknown(Harness.CODEX, "STREAMREPAIR_REFUSED_CALL"),
        "case_variant": Expect(["unsupported call: Exec_command"], "Exec_command"),
        # the result says nothing of it; the echoed call keeps the sentence as arguments
        "sentence_args": Expect(
            [PARSE_CX + "expected value at line 1 column 1"], "exec_command", True
        ),
        "stop_completed": Expect(
            [DONE[Harness.CODEX]], "exec_command", None, _stop_written("completed")
        ),
    },
    Harness.OPENCODE: {
        "cut_length": Expect([PARSE_OC, "JSON Parse error: Unterminated string"], "invalid"),
        "cut_normal": Expect([PARSE_OC, "JSON Parse error: Unterminated string"], "invalid"),
        "renamed_key": Expect(
            [
                'The write tool was called with invalid arguments: SchemaError(Missing key\n  at ["filePath"])'
            ],
            "write",
        ),
        "invalid_after_repairs": Expect(
            [PARSE_OC, "JSON Parse error: Property name must be a string literal"], "invalid"
        ),
        "merged_objects": Expect(
            [PARSE_OC, "JSON Parse error: Unable to parse JSON string"], "invalid"
        ),
        # the SDK runs the call once the arguments so far parse: the first object runs,
        # the second is dropped without a word
        "merged_at_boundary": Expect([DONE[Harness.OPENCODE]], "write", None, {"a.txt": "alpha\n"}),
        "windows_path": Expect(
            [PARSE_OC, "JSON Parse error: Invalid escape character U"], "invalid"
        ),
        "unknown_tool": _unknown(Harness.OPENCODE, "streamrepair_refused_call"),
        "suffixed_tool": _unknown(Harness.OPENCODE, "write_refused"),
        "upper_unknown": _unknown(Harness.OPENCODE, "STREAMREPAIR_REFUSED_CALL"),
        # `Write` is lowercased to `write` and RUN
        "case_variant": Expect([DONE[Harness.OPENCODE]], "write", None, {"case.txt": "case\n"}),
        # the whole sentence is quoted back in the error
        "sentence_args": Expect(
            [PARSE_OC + ": Text: streamrepair: the call to write was not run"], "invalid", True
        ),
        "stop_tool_calls": Expect(
            [DONE[Harness.OPENCODE]], "write", None, _stop_written("tool_calls")
        ),
        "stop_stop": Expect([DONE[Harness.OPENCODE]], "write", None, _stop_written("stop")),
        "stop_length": Expect([DONE[Harness.OPENCODE]], "write", None, _stop_written("length")),
        "stop_none": Expect([DONE[Harness.OPENCODE]], "write", None, _stop_written("none")),
    },
}


def _step(name: str) -> Step:
    if name in SCENARIOS:
        return SCENARIOS[name].broken
    first = FORMS[name].first
    assert first is not None
    return first


def _binary_or_skip(harness: Harness) -> None:
    reason = skip_reason(harness)
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def chained(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Harness], LoopRun]:
    """The chained run of a harness, made once per session."""
    runs: dict[Harness, LoopRun] = {}

    def get(harness: Harness) -> LoopRun:
        _binary_or_skip(harness)
        if harness not in runs:
            steps = [_step(name) for name in CHAINS[harness]]
            root = tmp_path_factory.mktemp(f"loops-{harness.value}")
            runs[harness] = run_loop(harness, chain(harness, steps, INTENDED), root=root)
        return runs[harness]

    return get


CHAIN_CASES: Final = [
    pytest.param(harness, index, name, id=f"{harness.value}-{name}")
    for harness, steps in CHAINS.items()
    for index, name in enumerate(steps)
]


@pytest.mark.parametrize(("harness", "index", "name"), CHAIN_CASES)
def test_direct_step_is_answered_and_the_loop_goes_on(
    chained: Callable[[Harness], LoopRun], harness: Harness, index: int, name: str
) -> None:
    run = chained(harness)
    expect = CHAINS[harness][name]
    assert len(run.main) > index + 1, f"no request after step {index} ({name}): {run.summary()}"
    assert not run.is_retry(index + 1)
    results = run.results(index + 1)
    assert len(results) == 1, results
    result = results[0]
    for piece in expect.result:
        assert piece in result.text, result.text
    if harness is Harness.CLAUDE_CODE:  # the only wire with an error flag
        assert result.is_error is (expect.writes == {})
    echoed = run.main[index + 1].assistant_calls()[-1]
    assert echoed["name"] == expect.echoed
    if expect.guidance_seen is not None:
        seen = guidance_for(harness) in (str(echoed["arguments"]) + result.text)
        assert seen is expect.guidance_seen, (echoed, result.text)
    before, after = run.written(index), run.written(index + 1)
    assert {k: v for k, v in after.items() if before.get(k) != v} == dict(expect.writes)


@pytest.mark.parametrize("harness", list(Harness), ids=lambda h: h.value)
def test_direct_chain_ends_with_every_intended_file(
    chained: Callable[[Harness], LoopRun], harness: Harness
) -> None:
    run = chained(harness)
    steps = CHAINS[harness]
    expected = dict(INTENDED)
    for expect in steps.values():
        expected.update(expect.writes)
    assert len(run.main) == len(steps) + 2  # every step, the second attempt, done
    assert run.written() == expected
    assert (run.returncode, run.final_text, run.output.failure) == (0, "done", None)


# -- steps run alone: the turn ends, or the harness retries ------------------------------------


@dataclass(frozen=True)
class Alone:
    """A run of one scenario or form: how many requests, which of them were retries, the
    exit code, the failure the harness reported (substring), files written at the end."""

    requests: int
    retries: Sequence[int]
    exit: int
    failure: str | None
    written: Mapping[str, str]
    codex: Mapping[str, object] = field(default_factory=dict)


OUT: Final = {"out.txt": CONTENT}
DEFAULT_RETRIES: Final = {"stream_max_retries": None, "request_max_retries": None}

ALONE: Final[Mapping[tuple[Harness, str], Alone]] = {
    # Claude Code retries a request whose stream broke, and the retry runs the next reply
    (Harness.CLAUDE_CODE, "dropped"): Alone(3, [1], 0, None, OUT),
    (Harness.CLAUDE_CODE, "no_stop"): Alone(3, [1], 0, None, OUT),
    (Harness.CLAUDE_CODE, "error_event"): Alone(3, [1], 0, None, OUT),
    # Codex without retries (what cxharness sets) fails the turn
    (Harness.CODEX, "cut_length"): Alone(
        1, [], 1, "Incomplete response returned, reason: max_output_tokens", {}
    ),
    (Harness.CODEX, "dropped"): Alone(
        1,
        [],
        1,
        "stream disconnected before completion: Transport error: network error: error decoding response body",
        {},
    ),
    (Harness.CODEX, "no_stop"): Alone(
        1,
        [],
        1,
        "stream disconnected before completion: stream closed before response.completed",
        {},
    ),
    # a Responses `error` event is not read as a failure: the stream just ends
    (Harness.CODEX, "error_event"): Alone(1, [], 1, "stream closed before response.completed", {}),
    # response.incomplete with a complete call: the call runs, then the turn fails
    (Harness.CODEX, "stop_incomplete"): Alone(
        1,
        [],
        1,
        "Incomplete response returned, reason: max_output_tokens",
        _stop_written("incomplete"),
    ),
    (Harness.CODEX, "stop_incomplete_item_incomplete"): Alone(
        1, [], 1, "Incomplete response returned", _stop_written("incomplete_item_incomplete")
    ),
    # Codex with its default retries: a broken stream is retried ("Reconnecting... 1/5")
    (Harness.CODEX, "codex_default_retries_dropped"): Alone(3, [1], 0, None, OUT, DEFAULT_RETRIES),
    (Harness.CODEX, "codex_default_retries_no_stop"): Alone(3, [1], 0, None, OUT, DEFAULT_RETRIES),
    (Harness.CODEX, "codex_default_retries_error_event"): Alone(
        3, [1], 0, None, OUT, DEFAULT_RETRIES
    ),
    (Harness.CODEX, "codex_default_retries_length"): Alone(
        1, [], 1, "Incomplete response returned, reason: max_output_tokens", {}, DEFAULT_RETRIES
    ),
    # OpenCode retries a dropped connection (and a server_error chunk: below)...
    (Harness.OPENCODE, "dropped"): Alone(3, [1], 0, None, OUT),
    # ...but not an error chunk of another type and message (the proxy's, when its
    # upstream breaks): the run fails
    (Harness.OPENCODE, "error_upstream_error"): Alone(
        1, [], 1, "the upstream stream broke: ClientPayloadError", {}
    ),
    # ...and it runs the unfinished call of a stream that just ends (an `invalid` error)
    (Harness.OPENCODE, "no_stop"): Alone(3, [], 0, None, OUT),
}


@pytest.mark.parametrize(
    ("harness", "name"),
    [pytest.param(h, n, id=f"{h.value}-{n}") for h, n in ALONE],
)
def test_direct_outcome_of_a_step_alone(harness: Harness, name: str, tmp_path: Path) -> None:
    _binary_or_skip(harness)
    expect = ALONE[(harness, name)]
    script = SCENARIOS[name].script(harness) if name in SCENARIOS else FORMS[name].script(harness)
    run = run_loop(harness, script, root=tmp_path, codex=expect.codex)
    summary = run.summary()
    assert len(run.main) == expect.requests, summary
    assert [i for i in range(1, len(run.main)) if run.is_retry(i)] == list(expect.retries), summary
    assert run.returncode == expect.exit, summary
    if expect.failure is None:
        assert run.output.failure is None, summary
    else:
        assert expect.failure in (run.output.failure or ""), summary
    assert run.written() == dict(expect.written), summary
    # nothing but the intended content was ever on disk
    assert all(v == CONTENT for v in run.written(1).values()), summary


def test_opencode_retries_an_error_event_and_the_cut_call_resurfaces_aborted(
    tmp_path: Path,
) -> None:
    """OpenCode retries a stream that carried an error event; the call it cut resurfaces
    in the history after the retry, with empty arguments and a ``Tool execution
    aborted`` result."""
    _binary_or_skip(Harness.OPENCODE)
    script = SCENARIOS["error_event"].script(Harness.OPENCODE)
    run = run_loop(Harness.OPENCODE, script, root=tmp_path)
    assert (len(run.main), run.is_retry(1), run.returncode) == (3, True, 0), run.summary()
    assert run.written() == OUT
    texts = [r.text for r in run.results(2)]
    assert texts == ["Tool execution aborted", DONE[Harness.OPENCODE]], run.summary()
    aborted = run.main[2].assistant_calls()[0]
    assert (aborted["name"], aborted["arguments"]) == ("write", "{}")


def test_claude_code_loses_the_result_of_an_id_ending_in_underscore_digits(tmp_path: Path) -> None:
    """Two calls ``X`` and ``X_2``: both run, but the second result reaches the model as
    ``[Tool result missing due to internal error]``; ``Y``/``Y2`` and ``Z``/``B2_Z`` are
    fine."""
    _binary_or_skip(Harness.CLAUDE_CODE)
    run = run_loop(
        Harness.CLAUDE_CODE, FORMS["claude_ids"].script(Harness.CLAUDE_CODE), root=tmp_path
    )
    assert len(run.main) == 4, run.summary()
    first = {r.call_id: r for r in run.results(1)}
    assert first["toolu_X_2"].text == "[Tool result missing due to internal error]"
    assert first["toolu_X"].text.startswith(DONE[Harness.CLAUDE_CODE])
    for index, ids in ((2, ("toolu_Y", "toolu_Y2")), (3, ("toolu_Z", "B2_toolu_Z"))):
        results = {r.call_id: r.text for r in run.results(index)}
        assert set(results) == set(ids)
        assert all(text.startswith(DONE[Harness.CLAUDE_CODE]) for text in results.values())
    # all six writes ran, the one whose result went missing too
    assert run.written(1) == {"0a.txt": "toolu_X\n", "0b.txt": "toolu_X_2\n"}
    assert len(run.written()) == 6


# -- through the proxy: what must hold before and after issue 21 ----------------------------


@pytest.mark.parametrize("harness", list(Harness), ids=lambda h: h.value)
def test_a_correct_call_runs_through_the_proxy_with_the_upstreams_stop_reasons(
    bench: Bench, harness: Harness, tmp_path: Path
) -> None:
    """The infrastructure for the proxied tests (``bench``: one proxy for the session,
    the tap between it and the harness): a correct write runs through it, and every
    stream reaches the harness with the stop reason the upstream sent."""
    _binary_or_skip(harness)
    script = FORMS[f"stop_{STOPS[harness][0][0]}"].script(harness)
    run = run_loop(harness, script, root=tmp_path, via=Via.PROXY, bench=bench)
    assert run.written() == _stop_written(STOPS[harness][0][0]), run.summary()
    assert (len(run.main), run.returncode, run.final_text) == (2, 0, "done")
    assert run.client_ends() == run.upstream_ends()
    assert run.client_ends()[0].terminal
    assert '"calls_sent": 1' in run.proxy_log
