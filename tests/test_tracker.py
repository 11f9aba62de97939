"""The tool-call tracker: identity rules for every provider quirk, and the finish policy.

Each test feeds wire deltas (what ``providers.py`` produces) and checks the events; each
would fail if the rule it names were dropped."""

from __future__ import annotations

import re
from typing import Any

import pytest

from streamrepair import (
    CallProgress,
    Done,
    RejectReason,
    RepairKind,
    StopReason,
    StreamEvent,
    StreamFailed,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStarted,
    ToolCallTracker,
    normalize_stop_reason,
    tool_message,
)
from streamrepair.providers import (
    Provider,
)
from streamrepair.providers.wire import (
    WireDelta,
    WireEnd,
    WireError,
    WireItem,
    WireMessageStart,
    WireReasoning,
    WireRedactedThinking,
    WireSignature,
    WireStop,
    WireText,
    WireToolArguments,
    WireToolCall,
    WireToolEnd,
    WireUsage,
)
from streamrepair.schema.tools import tool_schemas
from streamrepair.stream.tracker import MAX_TOOL_CALLS


def run(deltas: list[WireDelta], *, end: bool = True, **kwargs: Any) -> list[StreamEvent]:
    tracker = ToolCallTracker(**kwargs)
    events: list[StreamEvent] = []
    for delta in deltas:
        events.extend(tracker.feed(delta))
    if end:
        events.extend(tracker.finish())
    return events


def outcomes(events: list[StreamEvent]) -> list[tuple[str, str, Any]]:
    """(kind, call_id, arguments or reason) for each ready / rejected call."""
    out: list[tuple[str, str, Any]] = []
    for e in events:
        if isinstance(e, ToolCallReady):
            out.append(("ready", e.call_id, e.arguments))
        elif isinstance(e, ToolCallRejected):
            out.append(("rejected", e.call_id, e.reason))
    return out


def done(events: list[StreamEvent]) -> Done:
    last = events[-1]
    assert isinstance(last, Done)
    assert sum(isinstance(e, Done) for e in events) == 1
    return last


def call(**kwargs: Any) -> WireToolCall:
    return WireToolCall(**kwargs)


STOP_TOOLS = WireStop(reason="tool_calls")


# -- identity ------------------------------------------------------------------------------


def test_same_id_on_every_chunk_is_one_call() -> None:  # vLLM, LiteLLM
    events = run(
        [
            call(id="a", index=0, name="f", arguments=""),
            call(id="a", index=0, arguments='{"x"'),
            call(id="a", index=0, arguments=": 1}"),
            STOP_TOOLS,
        ]
    )
    assert outcomes(events) == [("ready", "a", {"x": 1})]


def test_no_id_continues_by_index() -> None:  # Qwen "id": "" (read as absent), OpenAI
    events = run(
        [
            call(id="a", index=0, name="f"),
            call(id="b", index=1, name="g"),
            call(index=0, arguments='{"x": 1}'),
            call(index=1, arguments='{"y": 2}'),
            STOP_TOOLS,
        ]
    )
    assert outcomes(events) == [("ready", "a", {"x": 1}), ("ready", "b", {"y": 2})]


def test_no_id_no_index_continues_the_latest_call() -> None:  # Gemini, Mistral
    events = run([call(id="a", name="f", arguments='{"x":'), call(arguments=" 1}"), STOP_TOOLS])
    assert outcomes(events) == [("ready", "a", {"x": 1})]


def test_new_nameless_id_continues_an_incomplete_call() -> None:  # GLM-4 server
    events = run(
        [
            call(id="a", index=0, name="f", arguments=""),
            call(id="b", index=0, arguments='{"x"'),
            call(id="c", index=0, arguments=": 1}"),
            STOP_TOOLS,
        ]
    )
    assert outcomes(events) == [("ready", "a", {"x": 1})]
    ready = next(e for e in events if isinstance(e, ToolCallReady))
    assert "2 deltas with a new id continued this call" in ready.notes[0]


def test_a_count_of_one_in_a_note_or_detail_is_singular() -> None:
    # "1 deltas", "1 characters": what `streamrepair replay` printed for counts of one.
    events = run(
        [
            call(id="a", index=0, name="f", arguments=""),
            call(id="b", index=0, arguments='{"x": 1}'),
            STOP_TOOLS,
        ]
    )
    ready = next(e for e in events if isinstance(e, ToolCallReady))
    assert "1 delta with a new id continued this call" in ready.notes[0]
    events = run([call(id="a", index=0, name="f", arguments="{"), WireStop(reason="length")])
    rejected = next(e for e in events if isinstance(e, ToolCallRejected))
    assert "; 1 character arrived and the JSON is unfinished." in rejected.detail
    events = run(
        [
            call(id="a", index=0, name="f", arguments="{"),
            WireToolArguments(id="a", index=0, arguments='{"x": 1}'),
            STOP_TOOLS,
        ]
    )
    ready = next(e for e in events if isinstance(e, ToolCallReady))
    assert "the streamed argument deltas (1 char) differ from the final arguments the " in " ".join(
        ready.notes
    )
    assert "(8 chars); the final ones were used" in " ".join(ready.notes)


def test_new_nameless_id_after_a_complete_call_is_a_new_call() -> None:
    events = run(
        [
            call(id="a", index=0, name="f", arguments='{"x": 1}'),
            call(id="b", index=0, arguments='{"y": 2}'),
            STOP_TOOLS,
        ]
    )
    # The second call never got a name: it is reported, not merged into the first.
    assert outcomes(events) == [("ready", "a", {"x": 1}), ("rejected", "b", RejectReason.INVALID)]


def test_new_id_with_a_name_on_a_reused_index_starts_a_new_call() -> None:  # Ollama, Gemini
    events = run(
        [
            call(id="a", index=0, name="f", arguments='{"q": "one"}'),
            call(id="b", index=0, name="f", arguments='{"q": "two"}'),
            STOP_TOOLS,
        ]
    )
    assert outcomes(events) == [("ready", "a", {"q": "one"}), ("ready", "b", {"q": "two"})]


def test_empty_name_does_not_rename_and_a_different_name_without_id_is_a_new_call() -> None:
    events = run(
        [
            call(id="a", index=0, name="f", arguments=""),
            call(index=0, arguments='{"x": 1}'),  # "name": "" normalized to absent
            call(index=0, name="g", arguments='{"y": 2}'),
            STOP_TOOLS,
        ]
    )
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.call_id, e.name) for e in started] == [("a", "f"), ("call_sr1", "g")]
    assert outcomes(events) == [("ready", "a", {"x": 1}), ("ready", "call_sr1", {"y": 2})]


def test_indexes_may_start_at_one_and_have_gaps() -> None:
    events = run(
        [
            call(id="a", index=1, name="f"),
            call(id="b", index=5, name="f"),
            call(index=5, arguments='{"n": 5}'),
            call(index=1, arguments='{"n": 1}'),
            STOP_TOOLS,
        ]
    )
    assert outcomes(events) == [("ready", "a", {"n": 1}), ("ready", "b", {"n": 5})]


def test_text_is_buffered_until_the_name_arrives() -> None:
    events = run(
        [
            call(id="a", index=0),
            call(index=0, arguments='{"q": '),
            call(index=0, name="search", arguments='"x"}'),
            STOP_TOOLS,
        ]
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ToolCallStarted", "ToolCallDelta", "ToolCallDelta", "ToolCallReady", "Done"]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.text for d in deltas] == ['{"q": ', '"x"}']
    assert deltas[0].preview == {}
    assert deltas[1].preview == {"q": "x"}


def test_missing_ids_are_generated_in_order() -> None:
    events = run([call(index=0, name="f", arguments="{}"), call(index=1, name="g"), STOP_TOOLS])
    assert [e.call_id for e in events if isinstance(e, ToolCallStarted)] == ["call_sr1", "call_sr2"]


# -- concatenated arguments ----------------------------------------------------------------


def test_concatenated_values_become_separate_calls_with_derived_ids() -> None:
    events = run(
        [call(id="a", index=0, name="w", arguments='{"c": 1}{"c": 2}{"c": 3}'), STOP_TOOLS]
    )
    assert outcomes(events) == [
        ("ready", "a", {"c": 1}),
        ("ready", "av2", {"c": 2}),
        ("ready", "av3", {"c": 3}),
    ]
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert {e.origin_id for e in ready} == {"a"}
    assert ready[1].notes == ("value 2 of 3 concatenated in one call's arguments",)
    message = done(events).messages[0]
    assert [c["id"] for c in message["tool_calls"]] == ["a", "av2", "av3"]


def test_duplicates_collapse_and_placeholders_drop_with_a_recorded_repair() -> None:
    events = run(
        [
            call(id="a", index=0, name="w", arguments='{"c": 1}{"c": 1}'),
            call(id="b", index=1, name="w", arguments='{}{"c": 2}'),
            STOP_TOOLS,
        ]
    )
    assert outcomes(events) == [("ready", "a", {"c": 1}), ("ready", "b", {"c": 2})]
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [r.kind for r in ready[0].repairs] == [RepairKind.DUPLICATE_VALUE]
    assert [r.kind for r in ready[1].repairs] == [RepairKind.EMPTY_PLACEHOLDER]


def test_one_bad_value_among_concatenated_ones() -> None:
    events = run([call(id="a", index=0, name="w", arguments='{"c": 1}[2]'), STOP_TOOLS])
    assert outcomes(events) == [("ready", "a", {"c": 1}), ("rejected", "av2", RejectReason.INVALID)]


# -- finish policy -------------------------------------------------------------------------

COMPLETE = '{"path": "a.md"}'
CUT = '{"path": "a.md", "content": "half'


@pytest.mark.parametrize(
    ("stop", "complete_outcome", "cut_outcome"),
    [
        ("tool_calls", "ready", RejectReason.CUT_OFF),
        ("stop", "ready", RejectReason.CUT_OFF),  # truncation misreported as stop (Qwen)
        ("length", "ready", RejectReason.CUT_OFF),  # degrade, don't kill the turn
        ("max_tokens", "ready", RejectReason.CUT_OFF),
        ("MAX_TOKENS", "ready", RejectReason.CUT_OFF),
        ("content_filter", RejectReason.STREAM_INCOMPLETE, RejectReason.STREAM_INCOMPLETE),
        (
            "insufficient_system_resource",
            RejectReason.STREAM_INCOMPLETE,
            RejectReason.STREAM_INCOMPLETE,
        ),
        (
            "incomplete:content_filter",
            RejectReason.STREAM_INCOMPLETE,
            RejectReason.STREAM_INCOMPLETE,
        ),
        ("some_new_reason", RejectReason.STREAM_INCOMPLETE, RejectReason.STREAM_INCOMPLETE),
        (None, RejectReason.STREAM_INCOMPLETE, RejectReason.STREAM_INCOMPLETE),
    ],
)
def test_finish_policy(stop: str | None, complete_outcome: Any, cut_outcome: Any) -> None:
    deltas: list[WireDelta] = [
        call(id="a", index=0, name="read", arguments=COMPLETE),
        call(id="b", index=1, name="write", arguments=CUT),
    ]
    if stop is not None:
        deltas.append(WireStop(reason=stop))
    events = run(deltas)
    result = outcomes(events)
    assert result[0] == (
        ("ready", "a", {"path": "a.md"})
        if complete_outcome == "ready"
        else ("rejected", "a", complete_outcome)
    )
    assert result[1] == ("rejected", "b", cut_outcome)
    rejected = [e for e in events if isinstance(e, ToolCallRejected)]
    assert all(e.detail.startswith("Not executed") for e in rejected)
    assert rejected[-1].raw == CUT  # the raw text, never altered


def test_nothing_is_ready_before_the_end_even_if_it_parses() -> None:
    tracker = ToolCallTracker()
    events: list[StreamEvent] = []
    for delta in [call(id="a", index=0, name="f", arguments='{"q": "test"}'), STOP_TOOLS]:
        events.extend(tracker.feed(delta))
    # vercel/ai#13137: '{"query": "test"}' can be followed by ', "limit": 10}'.
    assert not any(isinstance(e, ToolCallReady) for e in events)
    assert tracker.calls == (("a", "f", CallProgress.STREAMING),)
    events = tracker.feed(WireEnd())
    assert outcomes(events) == [("ready", "a", {"q": "test"})]
    assert tracker.calls == (("a", "f", CallProgress.READY),)


def test_a_call_the_provider_never_closed_is_cut_off_even_if_it_parses() -> None:
    events = run(
        [
            call(id="a", index=0, name="f", arguments='{"path": "/tmp"}', expects_end=True),
            call(id="b", index=1, name="f", arguments='{"path": "/var"}', expects_end=True),
            WireToolEnd(id=None, index=1),
            WireStop(reason="max_tokens"),
        ]
    )
    assert outcomes(events) == [
        ("rejected", "a", RejectReason.CUT_OFF),
        ("ready", "b", {"path": "/var"}),
    ]


def test_empty_arguments() -> None:
    # A zero-argument tool: "" is {} ... unless the output limit hit before any argument.
    assert outcomes(run([call(id="a", index=0, name="f", arguments=""), STOP_TOOLS])) == [
        ("ready", "a", {})
    ]
    cut = run([call(id="a", index=0, name="f", arguments=""), WireStop(reason="length")])
    assert outcomes(cut) == [("rejected", "a", RejectReason.CUT_OFF)]
    closed = run(
        [
            call(id="a", index=0, name="f", arguments="", expects_end=True),
            WireToolEnd(id=None, index=0),
            WireStop(reason="max_tokens"),
        ]
    )
    assert outcomes(closed) == [("ready", "a", {})]


def test_empty_arguments_after_an_end_marker_with_no_stop_reason_are_cut_off() -> None:
    # Issue 21: a DeepSeek stream cut right after a call's name, then [DONE] with no
    # finish_reason, ran glob({}); the arguments had simply not come. An explicit "{}"
    # is still a call with no arguments, and a call whose block was closed is too.
    events = run(
        [
            call(id="a", index=0, name="glob", arguments=""),
            call(id="b", index=1, name="list_todos", arguments="{}"),
            call(id="c", index=2, name="f", arguments="", expects_end=True),
            WireToolEnd(id=None, index=2),
            WireEnd(),
        ],
        end=False,
    )
    assert outcomes(events) == [
        ("rejected", "a", RejectReason.CUT_OFF),
        ("ready", "b", {}),
        ("ready", "c", {}),
    ]
    rejected = next(e for e in events if isinstance(e, ToolCallRejected))
    assert rejected.raw == ""
    assert "before any argument" in rejected.detail
    assert done(events).stop_reason is StopReason.MISSING


@pytest.mark.parametrize("origin", ["a", "call_1", "toolu_01_2", "x_", "callv2"])
def test_split_call_ids_never_end_in_an_underscore_and_digits(origin: str) -> None:
    # Claude Code reads `<id>_<digits>` as an entry of its batch tool: the second call's
    # result was lost ("[Tool result missing due to internal error]", issue 21).
    events = run(
        [
            call(id=origin, index=0, name="w", arguments='{"c": 1}{"c": 2}{"c": 3}'),
            call(id=f"{origin}v2", index=1, name="w", arguments='{"c": 4}'),
            STOP_TOOLS,
        ]
    )
    ids = [e.call_id for e in events if isinstance(e, ToolCallReady)]
    assert len(ids) == len(set(ids)) == 4
    split = [e.call_id for e in events if isinstance(e, ToolCallReady) and e.origin_id == origin]
    assert split[0] == origin
    for call_id in split[1:]:
        assert call_id.startswith(origin)
        assert not re.search(r"_\d+$", call_id)
        assert re.fullmatch(r"[A-Za-z0-9]+", call_id[len(origin) :])


def test_unrepairable_and_not_an_object() -> None:
    events = run(
        [
            call(id="a", index=0, name="f", arguments='{"s": 60*60}'),
            call(id="b", index=1, name="f", arguments='"just a string"'),
            STOP_TOOLS,
        ]
    )
    assert outcomes(events) == [
        ("rejected", "a", RejectReason.UNREPAIRABLE),
        ("rejected", "b", RejectReason.INVALID),
    ]
    assert "line 1 column 9" in next(e for e in events if isinstance(e, ToolCallRejected)).detail


def test_a_mid_stream_error_ends_the_stream_and_rejects_everything() -> None:
    tracker = ToolCallTracker()
    events = tracker.feed(call(id="a", index=0, name="f", arguments="{}"))
    events += tracker.feed(WireError(message="Overloaded", error_type="overloaded_error"))
    assert [type(e).__name__ for e in events] == [
        "ToolCallStarted",
        "ToolCallDelta",
        "StreamFailed",
        "ToolCallRejected",
        "Done",
    ]
    assert outcomes(events) == [("rejected", "a", RejectReason.STREAM_INCOMPLETE)]
    assert done(events).stop_reason is StopReason.ERROR
    # After the end, deltas are ignored and counted; finish and abort add nothing.
    assert tracker.feed(WireEnd()) == []
    assert tracker.ignored_after_end == 1
    assert tracker.finish() == []
    assert tracker.abort() == []
    assert tracker.fail(WireError(message="again")) == []


def test_abort_rejects_everything_as_aborted() -> None:
    tracker = ToolCallTracker()
    tracker.feed(call(id="a", index=0, name="f", arguments="{}"))
    tracker.feed(STOP_TOOLS)
    events = tracker.abort()
    assert outcomes(events) == [("rejected", "a", RejectReason.ABORTED)]
    assert done(events).stop_reason is StopReason.ABORTED
    assert tracker.calls == (("a", "f", CallProgress.REJECTED),)


def test_tool_calls_stop_reason_without_a_call_is_reported() -> None:
    events = run([WireText(text="I will call it."), STOP_TOOLS])
    assert done(events).tool_calls_missing
    assert done(events).notes == ("the stop reason says tool calls, but no tool call arrived",)
    assert not done(run([WireText(text="hi"), WireStop(reason="stop")])).tool_calls_missing


def test_spliced_message_start_abandons_the_first_message() -> None:
    events = run(
        [
            WireMessageStart(message_id="m1"),
            call(id="t1", index=0, name="f", arguments='{"v": "Spa', expects_end=True),
            WireMessageStart(message_id="m1"),  # a duplicate: ignored
            WireMessageStart(message_id="m2"),
            call(id="t2", index=0, name="f", arguments='{"v": 1}', expects_end=True),
            WireToolEnd(id=None, index=0),
            WireStop(reason="tool_use"),
            WireEnd(),
        ],
        provider=Provider.ANTHROPIC,
    )
    assert outcomes(events) == [
        ("rejected", "t1", RejectReason.STREAM_INCOMPLETE),
        ("ready", "t2", {"v": 1}),
    ]


# -- bounds --------------------------------------------------------------------------------


def test_too_many_calls_fails_the_stream() -> None:
    deltas = [
        call(id=f"c{i}", index=i, name="f", arguments="{}") for i in range(MAX_TOOL_CALLS + 1)
    ]
    events = run(deltas)
    failures = [e for e in events if isinstance(e, StreamFailed)]
    assert [f.code for f in failures] == ["too_many"]
    assert done(events).stop_reason is StopReason.ERROR


def test_arguments_past_max_size_are_unrepairable_and_not_kept() -> None:
    tracker = ToolCallTracker(max_size=10)
    tracker.feed(call(id="a", index=0, name="f", arguments='{"k": "'))
    tracker.feed(call(index=0, arguments="x" * 50))
    tracker.feed(call(id="b", index=1, arguments="y" * 50))  # pending (no name) too
    tracker.feed(call(index=1, name="g"))
    tracker.feed(STOP_TOOLS)
    events = tracker.feed(WireEnd())
    rejected = [e for e in events if isinstance(e, ToolCallRejected)]
    assert [e.reason for e in rejected] == [RejectReason.UNREPAIRABLE] * 2
    assert "max_size=10" in rejected[0].detail
    assert all(len(e.raw) <= 10 for e in rejected)


def test_text_past_max_text_chars_fails_the_stream() -> None:
    events = run([WireText(text="abc"), WireText(text="defg")], max_text_chars=5)
    assert [e.code for e in events if isinstance(e, StreamFailed)] == ["too_large"]


# -- Responses: final arguments ------------------------------------------------------------


def test_final_arguments_that_differ_replace_the_deltas_with_a_note() -> None:
    events = run(
        [
            call(id="c", index=0, name="s", arguments="", expects_end=True),
            call(id="c", index=0, arguments='"q": "x"}', expects_end=True),  # first piece lost
            WireToolArguments(id="c", index=0, arguments='{"q": "x"}'),
            WireToolEnd(id="c", index=0),
            WireStop(reason="completed"),
        ]
    )
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.arguments, e.raw) for e in ready] == [({"q": "x"}, '{"q": "x"}')]
    assert "the final ones were used" in ready[0].notes[0]


def test_final_arguments_equal_or_alone() -> None:
    events = run(
        [
            call(id="a", index=0, name="s", arguments='{"q": 1}', expects_end=True),
            WireToolArguments(id="a", index=0, arguments='{"q": 1}'),
            WireToolEnd(id="a", index=0),
            call(id="b", index=1, name="s", expects_end=True),
            WireToolArguments(id="b", index=1, arguments='{"q": 2}'),
            WireToolEnd(id="b", index=1),
            WireToolArguments(id="c", index=2, arguments='{"q": 3}'),  # no call: a new one
            WireStop(reason="completed"),
        ]
    )
    assert outcomes(events) == [
        ("ready", "a", {"q": 1}),
        ("ready", "b", {"q": 2}),
        ("rejected", "c", RejectReason.INVALID),  # it never got a name
    ]
    assert all(not e.notes for e in events if isinstance(e, ToolCallReady))


def test_custom_tool_input_is_free_text() -> None:
    events = run(
        [
            call(id="c", index=0, name="sql", kind="custom", expects_end=True),
            call(id="c", index=0, arguments="SELECT 1", kind="custom", expects_end=True),
            WireToolEnd(id="c", index=0),
            WireStop(reason="completed"),
        ],
        provider=Provider.RESPONSES,
    )
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [(e.kind, e.arguments) for e in ready] == [("custom", "SELECT 1")]
    assert done(events).messages == (
        {"type": "custom_tool_call", "call_id": "c", "name": "sql", "input": "SELECT 1"},
    )


# -- tools ---------------------------------------------------------------------------------

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {"type": "function", "name": "get_time", "parameters": {"type": "object"}},
    {"name": "search", "input_schema": {"type": "object"}},
]


def test_tool_schemas_reads_three_formats() -> None:
    schemas = tool_schemas(TOOLS)
    assert sorted(schemas) == ["get_time", "get_weather", "search"]
    assert schemas["get_weather"]["required"] == ["city"]
    with pytest.raises(ValueError, match="without a name"):
        tool_schemas([{"type": "function", "function": {}}])
    with pytest.raises(ValueError, match="mapping"):
        tool_schemas(["get_time"])  # type: ignore[list-item]


def test_unknown_tool_is_rejected_with_the_closest_names() -> None:
    events = run(
        [call(id="a", index=0, name="get_wether", arguments="{}"), STOP_TOOLS], tools=TOOLS
    )
    rejected = [e for e in events if isinstance(e, ToolCallRejected)]
    assert [(e.reason, e.suggestions) for e in rejected] == [
        (RejectReason.UNKNOWN_TOOL, ("get_weather",))
    ]
    far = run([call(id="a", index=0, name="zzz", arguments="{}"), STOP_TOOLS], tools=TOOLS)
    detail = next(e for e in far if isinstance(e, ToolCallRejected)).detail
    assert "Available tools: get_time, get_weather, search." in detail


def test_unknown_tools_can_pass_with_syntax_repairs_and_no_schema_rules() -> None:
    deltas = [
        call(id="a", index=0, name="mcp__echo__echo", arguments='{"text": "hi", "n": null,}'),
        call(id="b", index=1, name="get_weather", arguments='{"city": "Oslo", "days": "3"}'),
        call(id="c", index=2, name="mcp__echo__echo", arguments='{"text": "a long'),
        WireStop(reason="length"),
    ]
    events = run(deltas, tools=TOOLS, reject_unknown_tools=False)
    assert outcomes(events) == [
        ("ready", "a", {"text": "hi", "n": None}),  # no schema: the null stays
        ("ready", "b", {"city": "Oslo", "days": 3}),  # a known tool keeps its rules
        ("rejected", "c", RejectReason.CUT_OFF),  # cut off is cut off, known or not
    ]
    unknown = next(e for e in events if isinstance(e, ToolCallReady))
    assert [r.kind.value for r in unknown.repairs] == ["trailing_comma"]
    assert unknown.schema_repairs == ()
    broken = [call(id="a", index=0, name="zzz", arguments='{"a": 1]'), STOP_TOOLS]
    assert outcomes(run(broken, tools=TOOLS, reject_unknown_tools=False)) == [
        ("rejected", "a", RejectReason.UNREPAIRABLE)
    ]
    # The default is unchanged: rejected.
    assert outcomes(run([*deltas[:1], STOP_TOOLS], tools=TOOLS)) == [
        ("rejected", "a", RejectReason.UNKNOWN_TOOL)
    ]


def test_schema_repair_on_ready_calls() -> None:
    events = run(
        [
            call(id="a", index=0, name="get_weather", arguments='{"city": "Oslo", "days": "3"}'),
            call(id="b", index=1, name="get_weather", arguments='{"days": 3}'),
            STOP_TOOLS,
        ],
        tools=TOOLS,
    )
    assert outcomes(events) == [
        ("ready", "a", {"city": "Oslo", "days": 3}),
        ("rejected", "b", RejectReason.INVALID),
    ]
    ready = next(e for e in events if isinstance(e, ToolCallReady))
    assert [n.location for n in ready.schema_repairs] == ["$.days"]
    rejected = next(e for e in events if isinstance(e, ToolCallRejected))
    assert rejected.detail.startswith('Invalid input for tool "get_weather"')


# -- the assistant message -----------------------------------------------------------------


def test_chat_message_keeps_reasoning_and_uses_empty_content() -> None:
    events = run(
        [WireReasoning(text=""), call(id="a", index=0, name="f", arguments="{}"), STOP_TOOLS],
        provider=Provider.OPENAI,
    )
    assert done(events).messages == (
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    )
    plain = run([WireText(text="hi"), WireStop(reason="stop")], provider=Provider.OPENAI)
    assert done(plain).messages == ({"role": "assistant", "content": "hi"},)


def test_anthropic_message_blocks_in_order() -> None:
    events = run(
        [
            WireReasoning(text="think", block=0),
            WireSignature(signature="sig", block=0),
            WireRedactedThinking(data="xyz", block=1),
            WireText(text="Hello", block=2),
            call(id="t", index=3, name="f", arguments='{"a": 1}', expects_end=True),
            WireToolEnd(id=None, index=3),
            WireStop(reason="tool_use"),
            WireUsage(usage={"input_tokens": 3, "output_tokens": 1}),
            WireUsage(usage={"output_tokens": 9}, merge=True),
        ],
        provider=Provider.ANTHROPIC,
    )
    assert done(events).messages == (
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "think", "signature": "sig"},
                {"type": "redacted_thinking", "data": "xyz"},
                {"type": "text", "text": "Hello"},
                {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}},
            ],
        },
    )
    assert done(events).usage == {"input_tokens": 3, "output_tokens": 9}


def test_responses_items_replace_streamed_text() -> None:
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Hi"}],
    }
    events = run(
        [
            WireText(text="Hi", block=0),
            WireItem(item=item, block=0),
            WireText(text="cut", block=1),
            WireStop(reason="completed"),
        ],
        provider=Provider.RESPONSES,
    )
    assert done(events).messages == (
        item,
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "cut"}],
        },
    )
    assert done(events).messages[0] is not item  # a copy


def test_ollama_message_keeps_object_arguments() -> None:
    events = run(
        [
            WireReasoning(text="t"),
            call(id="c", index=0, name="f", arguments='{"x":1}', from_object=True),
            WireStop(reason="stop"),
        ],
        provider=Provider.OLLAMA,
    )
    assert done(events).messages == (
        {
            "role": "assistant",
            "content": "",
            "thinking": "t",
            "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}],
        },
    )
    ready = next(e for e in events if isinstance(e, ToolCallReady))
    assert ready.notes == ("arguments arrived as an object and were serialized to JSON text",)


# -- stop reasons --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stop", StopReason.STOP),
        ("end_turn", StopReason.STOP),
        ("STOP", StopReason.STOP),
        (" end ", StopReason.STOP),
        ("stop_sequence", StopReason.STOP),
        ("completed", StopReason.STOP),
        ("COMPLETE", StopReason.STOP),
        ("tool_calls", StopReason.TOOL_CALLS),
        ("tool_use", StopReason.TOOL_CALLS),
        ("TOOL_CALL", StopReason.TOOL_CALLS),
        ("function_call", StopReason.TOOL_CALLS),
        ("length", StopReason.LENGTH),
        ("max_tokens", StopReason.LENGTH),
        ("MAX_TOKENS", StopReason.LENGTH),
        ("max_output_tokens", StopReason.LENGTH),
        ("incomplete:max_output_tokens", StopReason.LENGTH),
        ("content_filter", StopReason.CONTENT_FILTER),
        ("refusal", StopReason.CONTENT_FILTER),
        ("SAFETY", StopReason.CONTENT_FILTER),
        ("incomplete:content_filter", StopReason.CONTENT_FILTER),
        ("insufficient_system_resource", StopReason.INCOMPLETE),
        ("model_context_window_exceeded", StopReason.INCOMPLETE),
        ("pause_turn", StopReason.PAUSED),
        ("compaction", StopReason.PAUSED),
        ("guardrail_intervened", StopReason.CONTENT_FILTER),
        ("content_filtered", StopReason.CONTENT_FILTER),
        ("incomplete:", StopReason.INCOMPLETE),
        ("incomplete:stop", StopReason.INCOMPLETE),
        ("error", StopReason.ERROR),
        ("whatever", StopReason.INCOMPLETE),
        ("", StopReason.MISSING),
        (None, StopReason.MISSING),
    ],
)
def test_normalize_stop_reason(raw: str | None, expected: StopReason) -> None:
    assert normalize_stop_reason(raw) is expected
    assert expected.clean == (
        expected in (StopReason.STOP, StopReason.TOOL_CALLS, StopReason.LENGTH)
    )


AMBIGUOUS = '{"path": "notes.md", "content": "cd C:\\Users\\new\\tmp"}'
SETTLED = '{"path": "C:\\Users\\new\\tmp.txt", "content": "a\\nb"}'


def test_ambiguous_escapes_are_ready_by_default_and_refused_on_request() -> None:
    # Issue 21: `\n` and `\t` beside `\U` were written as a newline and a tab. The
    # library reports the guess; a harness (the proxy) that will not write it refuses.
    deltas = [call(id="a", index=0, name="write", arguments=AMBIGUOUS), STOP_TOOLS]
    ready = [e for e in run(deltas) if isinstance(e, ToolCallReady)]
    assert ready[0].arguments["content"] == "cd C:\\Users\n" + "ew\tmp"
    assert RepairKind.AMBIGUOUS_ESCAPES in [r.kind for r in ready[0].repairs]
    events = run(deltas, refuse_ambiguous_escapes=True)
    assert outcomes(events) == [("rejected", "a", RejectReason.AMBIGUOUS_ESCAPES)]
    rejected = next(e for e in events if isinstance(e, ToolCallRejected))
    assert rejected.raw == AMBIGUOUS
    assert "1 string of the arguments holds" in rejected.detail
    content = tool_message(rejected)["content"]
    assert "ambiguous_escapes" in content
    assert "C:\\\\Users" in content


def test_a_path_read_literally_is_settled_and_runs_when_refusing() -> None:
    events = run(
        [call(id="a", index=0, name="write", arguments=SETTLED), STOP_TOOLS],
        refuse_ambiguous_escapes=True,
    )
    assert outcomes(events) == [
        ("ready", "a", {"path": "C:\\Users\\new\\tmp.txt", "content": "a\nb"})
    ]
