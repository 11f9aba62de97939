"""Issue 21's scenarios in Claude Code, Codex and OpenCode *through the proxy*
(``streamrepair serve``, the session's ``bench``; the tap between harness and proxy
records what the harness received), side by side with what the same binaries do
directly (``test_e2e_loops``: its tables are the direct outcomes asserted here against).

"Done when" of issue 21, for each scenario in each harness:

* the loop goes on through the proxy wherever it goes on directly (here: everywhere it
  does directly, and also where Codex ends directly, a write cut off at the output
  limit);
* the final files are exactly what the scenario intends (the scripted second attempt
  runs), nothing cut off runs and nothing wrongly decoded is written, at any moment;
* no stop reason reaches the harness that the upstream did not send, unless the proxy
  changed the turn (it sent a refusal in place of a call: then the tool stop reason);
* a refused call reaches the harness as a call to ``REFUSED_TOOL``, which each harness
  answers with its own error (OpenCode turns it into its ``invalid`` tool), and the next
  request reaches the model with the call under the name the model called, answered by
  the refusal's guidance;
* a split ``{..}{..}`` call gets ids Claude Code keeps apart (both results arrive);
* a stream that fails reaches the harness as it failed upstream, nothing of the call in
  it, and the harness's own retry (or its own failure) follows, as directly.

The steps after which a harness goes on run as one chained conversation per harness
(``scenarios.chain``), as the direct tests do; the failed streams run alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from harnessloop import Bench, Harness, LoopRun, Via, run_loop, skip_reason
from scenarios import SCENARIOS, WRITE_TOOL, chain
from scripted import ToolResult, assistant_calls, tool_results
from tap import StreamEnd
from test_e2e_loops import ALONE, CHAINS, DEFAULT_RETRIES, INTENDED

from streamrepair.proxy import NOTICE_PREFIX, REFUSED_TOOL

#: What a harness answers when a write ran (the second write of a file: Claude Code
#: says it was updated).
RAN: Final = {
    Harness.CLAUDE_CODE: ("File created successfully at: ", "has been updated successfully"),
    Harness.CODEX: ("Process exited with code 0",),
    Harness.OPENCODE: ("Wrote file successfully.",),
}
#: The stop reason of a turn with calls, per harness's wire.
TOOL_STOP: Final = {
    Harness.CLAUDE_CODE: "tool_use",
    Harness.CODEX: "completed",
    Harness.OPENCODE: "tool_calls",
}
#: What each harness itself makes of a call to REFUSED_TOOL (seen in the request it sends,
#: before the proxy puts the call back): the name it echoes, its error.
OWN_ANSWER: Final = {
    Harness.CLAUDE_CODE: (REFUSED_TOOL, f"No such tool available: {REFUSED_TOOL}"),
    Harness.CODEX: (REFUSED_TOOL, f"unsupported call: {REFUSED_TOOL}"),
    Harness.OPENCODE: ("invalid", f"Model tried to call unavailable tool '{REFUSED_TOOL}'"),
}
MISSING: Final = "[Tool result missing due to internal error]"


@dataclass(frozen=True)
class Through:
    """One chained step's outcome through the proxy: ``refused``, the reason the
    refusal carries (``None``: the calls run); ``runs``, how many calls run (a split
    ``{..}{..}``: two); ``note``, the repair rule the model reads of with the result."""

    refused: str | None = None
    runs: int = 0
    note: str | None = None


THROUGH: Final[Mapping[str, Through]] = {
    "cut_length": Through("cut_off"),
    "cut_normal": Through("cut_off"),
    "renamed_key": Through(runs=1, note="rename_spelling"),
    "invalid_after_repairs": Through("invalid"),
    "merged_objects": Through(runs=2),
    "merged_at_boundary": Through(runs=2),
    "windows_path": Through("ambiguous_escapes"),
}
STEPS: Final = tuple(THROUGH)


def _binary_or_skip(harness: Harness) -> None:
    reason = skip_reason(harness)
    if reason is not None:
        pytest.skip(reason)


def _goes_on_directly(harness: Harness, name: str) -> bool:
    """The direct outcome established by ``test_e2e_loops``."""
    if name in CHAINS[harness]:
        return True
    direct = ALONE[(harness, name)]
    return direct.requests > 1 and direct.exit == 0


def _call_id(harness: Harness, step: int, n: int = 0) -> str:
    prefix = "toolu_" if harness is Harness.CLAUDE_CODE else "call_"
    return f"{prefix}step{step}call{n}"


def _wrong_writes(run: LoopRun, intended: Mapping[str, str]) -> dict[str, str]:
    """Files the run held at any moment (when a request arrived, at the end) that are
    not what ``intended`` says: cut off, wrongly decoded, or never meant."""
    wrong: dict[str, str] = {}
    for after in [*range(1, len(run.main)), None]:
        for path, text in run.written(after).items():
            if intended.get(path) != text:
                wrong.setdefault(path, text)
    return wrong


def _result(results: Sequence[ToolResult], call_id: str) -> ToolResult:
    found = [r for r in results if r.call_id == call_id]
    assert len(found) == 1, (call_id, results)
    return found[0]


def _echoed(calls: Sequence[Mapping[str, Any]], call_id: str) -> Mapping[str, Any]:
    found = [c for c in calls if c["id"] == call_id]
    assert len(found) == 1, (call_id, calls)
    return found[0]


@pytest.fixture(scope="session")
def proxied_chain(
    tmp_path_factory: pytest.TempPathFactory, bench: Bench
) -> Callable[[Harness], LoopRun]:
    """The chained run of a harness through the proxy, made once per session."""
    runs: dict[Harness, LoopRun] = {}

    def get(harness: Harness) -> LoopRun:
        _binary_or_skip(harness)
        if harness not in runs:
            steps = [SCENARIOS[name].broken for name in STEPS]
            root = tmp_path_factory.mktemp(f"proxied-{harness.value}")
            script = chain(harness, steps, INTENDED)
            runs[harness] = run_loop(harness, script, root=root, via=Via.PROXY, bench=bench)
        return runs[harness]

    return get


STEP_CASES: Final = [
    pytest.param(harness, index, name, id=f"{harness.value}-{name}")
    for harness in Harness
    for index, name in enumerate(STEPS)
]


@pytest.mark.parametrize(("harness", "index", "name"), STEP_CASES)
def test_proxied_step_goes_on_with_nothing_wrong_run_and_a_true_stop_reason(
    proxied_chain: Callable[[Harness], LoopRun], harness: Harness, index: int, name: str
) -> None:
    run = proxied_chain(harness)
    expect = THROUGH[name]
    summary = run.summary()
    # the loop goes on (also where it goes on directly: everywhere but Codex's cut_length)
    assert _goes_on_directly(harness, name) or name == "cut_length"
    assert len(run.main) > index + 1, f"no request after step {index} ({name}): {summary}"
    assert not run.is_retry(index + 1)
    calls = run.client_calls(index)
    tool = WRITE_TOOL[harness][0]
    if expect.refused is not None:
        # nothing of the call that can run reached the harness, and it wrote nothing
        assert [(c.id, c.name) for c in calls] == [(_call_id(harness, index), REFUSED_TOOL)]
        arguments = json.loads(calls[0].arguments)
        assert (arguments["refused_call"], arguments["reason"]) == (tool, expect.refused)
        assert run.written(index + 1) == run.written(index), summary
    else:
        ids = [_call_id(harness, index) + suffix for suffix in ("", "v2")[: expect.runs]]
        assert [(c.id, c.name) for c in calls] == [(i, tool) for i in ids]
        assert not any(re.search(r"_\d+$", c.id) for c in calls)  # never Claude's batch ids
        results = run.results(index + 1)
        for call_id in ids:
            text = _result(results, call_id).text
            assert any(piece in text for piece in RAN[harness]), text
            if expect.note is not None:
                assert f"{expect.note} at $." in text, text
    assert NOTICE_PREFIX not in run.client_text(index)  # no notice as text
    # the stop reason is the upstream's, unless the proxy put a refusal in the turn
    upstream, client = run.upstream_ends()[index], run.client_ends()[index]
    changed = any(c.name == REFUSED_TOOL for c in calls)
    assert client == upstream or (changed and client == StreamEnd(TOOL_STOP[harness], True)), (
        client,
        upstream,
    )


REFUSED_CASES: Final = [
    pytest.param(harness, index, name, id=f"{harness.value}-{name}")
    for harness in Harness
    for index, name in enumerate(STEPS)
    if THROUGH[name].refused is not None
]


@pytest.mark.parametrize(("harness", "index", "name"), REFUSED_CASES)
def test_the_model_reads_its_refused_call_answered_by_the_guidance(
    proxied_chain: Callable[[Harness], LoopRun], harness: Harness, index: int, name: str
) -> None:
    """The harness answers the refusal with its own error (OpenCode: its ``invalid``
    tool); the model gets the call back under the name it called, answered by the
    guidance the refusal carried."""
    run = proxied_chain(harness)
    call_id = _call_id(harness, index)
    guidance = json.loads(run.client_calls(index)[0].arguments)["message"]
    assert guidance.startswith(f"{NOTICE_PREFIX}{WRITE_TOOL[harness][0]} was not executed")
    # what the harness sent: the refusal as it understood it, and its own error
    sent = run.client_main[index + 1].request
    own_name, own_error = OWN_ANSWER[harness]
    assert _echoed(assistant_calls(harness.wire, sent), call_id)["name"] == own_name
    assert own_error in _result(tool_results(harness.wire, sent), call_id).text
    # what the model read (the upstream's next request)
    upstream = run.main[index + 1]
    assert REFUSED_TOOL.encode() not in upstream.raw
    assert _echoed(upstream.assistant_calls(), call_id)["name"] == WRITE_TOOL[harness][0]
    assert _result(upstream.tool_results(), call_id).text == guidance


MERGED: Final = [i for i, name in enumerate(STEPS) if name.startswith("merged")]


def test_claude_code_reads_both_results_of_a_split_call(
    proxied_chain: Callable[[Harness], LoopRun],
) -> None:
    """``{..}{..}`` split into ``<id>`` and ``<id>v2``: both writes run and both results
    reach the model (``<id>_2`` would lose the second one: ``MISSING``)."""
    run = proxied_chain(Harness.CLAUDE_CODE)
    for index in MERGED:
        first = _call_id(Harness.CLAUDE_CODE, index)
        results = {r.call_id: r for r in run.results(index + 1)}
        assert set(results) == {first, first + "v2"}
        for result in results.values():
            assert MISSING not in result.text
            assert result.is_error is False, result.text


@pytest.mark.parametrize("harness", list(Harness), ids=lambda h: h.value)
def test_proxied_chain_ends_with_every_intended_file_and_nothing_else_ever(
    proxied_chain: Callable[[Harness], LoopRun], harness: Harness
) -> None:
    run = proxied_chain(harness)
    assert len(run.main) == len(STEPS) + 2, run.summary()  # every step, the fix, done
    assert run.written() == INTENDED
    assert _wrong_writes(run, INTENDED) == {}
    assert (run.returncode, run.final_text, run.output.failure) == (0, "done", None)
    assert run.client_ends()[-1] == run.upstream_ends()[-1]


# -- failed streams, alone: the failure passed on, the harness's own retry ------------------


@dataclass(frozen=True)
class Failed:
    """A failed stream through the proxy: the direct outcome it is held to (a key of
    ``ALONE``), Codex's options, and the requests that were retries (as directly, except
    where said)."""

    direct: tuple[Harness, str]
    retries: Sequence[int]
    codex: Mapping[str, object]


FAILED: Final[Mapping[tuple[Harness, str, str], Failed]] = {
    **{
        (Harness.CLAUDE_CODE, name, ""): Failed((Harness.CLAUDE_CODE, name), [1], {})
        for name in ("dropped", "no_stop", "error_event")
    },
    **{
        (Harness.CODEX, name, ""): Failed((Harness.CODEX, name), [], {})
        for name in ("dropped", "no_stop", "error_event")
    },
    **{
        (Harness.CODEX, name, "default-retries"): Failed(
            (Harness.CODEX, f"codex_default_retries_{name}"), [1], DEFAULT_RETRIES
        )
        for name in ("dropped", "no_stop", "error_event")
    },
    (Harness.OPENCODE, "dropped", ""): Failed((Harness.OPENCODE, "dropped"), [1], {}),
    (Harness.OPENCODE, "error_event", ""): Failed((Harness.OPENCODE, "error_event"), [1], {}),
    # directly OpenCode runs the unfinished call (its `invalid` error) and goes on; here
    # nothing of the call arrives, the step ends (finish reason `unknown`) and OpenCode
    # asks again with the same history: the scripted second attempt runs
    (Harness.OPENCODE, "no_stop", ""): Failed((Harness.OPENCODE, "no_stop"), [1], {}),
}
#: Directly, OpenCode retries an error event but ``test_e2e_loops`` runs it apart.
_DIRECT_ALSO: Final = {(Harness.OPENCODE, "error_event"): (3, 0, None)}


def _direct(key: tuple[Harness, str]) -> tuple[int, int, str | None]:
    """(requests, exit, failure) of the direct run ``test_e2e_loops`` established."""
    if key in _DIRECT_ALSO:
        return _DIRECT_ALSO[key]
    direct = ALONE[key]
    return direct.requests, direct.exit, direct.failure


@pytest.mark.parametrize(
    ("harness", "name", "variant"),
    [pytest.param(h, n, v, id=f"{h.value}-{n}" + (f"-{v}" if v else "")) for h, n, v in FAILED],
)
def test_a_failed_stream_reaches_the_harness_as_it_failed_upstream(
    bench: Bench, harness: Harness, name: str, variant: str, tmp_path: Path
) -> None:
    _binary_or_skip(harness)
    expect = FAILED[(harness, name, variant)]
    scenario = SCENARIOS[name]
    run = run_loop(
        harness,
        scenario.script(harness),
        root=tmp_path,
        via=Via.PROXY,
        bench=bench,
        codex=expect.codex,
    )
    summary = run.summary()
    requests, exit_code, failure = _direct(expect.direct)
    # as it failed upstream: nothing of the call, no notice, no invented ending
    assert run.client_calls(0) == [], summary
    assert NOTICE_PREFIX not in run.client_text(0)
    assert run.client_ends()[0] == run.upstream_ends()[0], summary
    assert run.client_main[0].broken is (name == "dropped")
    # the same outcome as directly
    assert (len(run.main), run.returncode) == (requests, exit_code), summary
    assert [i for i in range(1, len(run.main)) if run.is_retry(i)] == list(expect.retries)
    if failure is None:
        assert run.output.failure is None, summary
        assert scenario.done(run), summary
        # the model reads only the second attempt's result (directly, OpenCode's retried
        # error event brings the cut call back as an aborted write({}))
        fix = "toolu_fix0" if harness is Harness.CLAUDE_CODE else "call_fix0"
        assert [r.call_id for r in run.results(2)] == [fix], summary
    else:
        assert failure in (run.output.failure or ""), summary
        assert run.written() == {}
    assert scenario.wrong_writes(run) == {}
    if (harness, name) == (Harness.CLAUDE_CODE, "no_stop"):
        # the stream held only message_start and ping: Claude Code retries the request
        # unstreamed (directly, with the unfinished block in it, the retry streams)
        assert [e.body.get("stream") for e in run.main] == [True, False, True]
    if (harness, name) == (Harness.OPENCODE, "no_stop"):
        # an empty step, not an error: OpenCode asks again without a retry of its own
        finishes = [
            e["part"].get("reason")
            for e in run.output.events
            if isinstance(e.get("part"), dict) and e["part"].get("type") == "step-finish"
        ]
        assert finishes[:2] == ["unknown", "tool-calls"], finishes


def test_the_proxied_outcomes_cover_every_scenario_of_issue_21() -> None:
    covered = set(STEPS) | {name for _, name, _ in FAILED}
    assert covered == set(SCENARIOS)
    for harness in Harness:
        assert {n for h, n, _ in FAILED if h is harness} == {"dropped", "no_stop", "error_event"}
