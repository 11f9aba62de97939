"""Candidate forms for a call the proxy refuses, and the turn endings around a call.

Each :class:`Form` is a first reply; the second reply is a correct write of
:data:`scenarios.CONTENT` to ``out.txt`` (so a harness whose loop went on shows it by
doing it), then ``done``. Measured directly in each harness, they say which forms a
harness answers with an error tool result and goes on (issue 21: "the refused call goes
to the harness in a form that every harness answers with an error instead of running
it"), and which stop reasons it runs a complete call under.

* ``unknown_tool``: a tool the harness does not have, ``streamrepair_refused_call``,
  with valid JSON arguments holding the guidance;
* ``suffixed_tool``: the refused tool's name plus ``_refused``;
* ``upper_unknown``: ``STREAMREPAIR_REFUSED_CALL`` (OpenCode lowercases tool names
  before it looks them up);
* ``case_variant``: the write tool's name in another case, with correct arguments
  (does the harness run a name that only nearly matches?);
* ``sentence_args``: the real write tool with the guidance as its arguments (not JSON);
* ``stop_<reason>``: a complete, correct write ending with each stop reason the wire
  has (Anthropic ``tool_use``/``end_turn``/``max_tokens``/``stop_sequence``, Chat
  ``tool_calls``/``stop``/``length``/none, Responses ``completed``/``incomplete``), with
  no second write (it writes ``stop_<reason>.txt``): whether the harness runs it and
  asks again;
* ``claude_ids``: Claude Code only, two complete writes per reply with the ids ``X`` and
  ``X_2``, then ``Y`` and ``Y2``, then ``Z`` and ``B2_Z``;
* ``codex_default_retries_<ending>``: Codex only, with its default retries, a write cut
  off by a dropped connection, a clean end without ``response.completed``, an ``error``
  event, or ``response.incomplete``;
* ``error_upstream_error``: OpenCode only, a write cut off by the error chunk the proxy
  sends when its upstream breaks (``"type": "upstream_error"``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from harnessloop import Harness
from scenarios import CONTENT, WRITE_TOOL, cut, write_call, write_text
from scripted import Call, Ending, Reply

__all__ = ["CASE_VARIANT", "FORMS", "GUIDANCE", "PROXY_CHAT_ERROR", "STOPS", "Form", "guidance_for"]

GUIDANCE: Final = (
    "streamrepair: the call to {tool} was not run: its arguments were cut off at the "
    "output limit. Call {tool} again with complete arguments; send long content in "
    "smaller pieces."
)
REFUSED_NAME: Final = "streamrepair_refused_call"

#: The write tool's name in another case, per harness.
CASE_VARIANT: Final = {
    Harness.CLAUDE_CODE: "write",
    Harness.OPENCODE: "Write",
    Harness.CODEX: "Exec_command",
}

#: The stop reasons each wire has for a turn with a complete call:
#: (label, ending, stop, Responses item status).
STOPS: Final[Mapping[Harness, Sequence[tuple[str, Ending, str | None, str | None]]]] = {
    Harness.CLAUDE_CODE: (
        ("tool_use", Ending.NORMAL, "tool_use", None),
        ("end_turn", Ending.NORMAL, "end_turn", None),
        ("max_tokens", Ending.LENGTH, "max_tokens", None),
        ("stop_sequence", Ending.NORMAL, "stop_sequence", None),
    ),
    Harness.OPENCODE: (
        ("tool_calls", Ending.NORMAL, "tool_calls", None),
        ("stop", Ending.NORMAL, "stop", None),
        ("length", Ending.LENGTH, "length", None),
        ("none", Ending.NORMAL, "", None),
    ),
    Harness.CODEX: (
        ("completed", Ending.NORMAL, None, None),
        ("incomplete", Ending.LENGTH, None, "completed"),
        ("incomplete_item_incomplete", Ending.LENGTH, None, "incomplete"),
    ),
}


def guidance_for(harness: Harness) -> str:
    return GUIDANCE.format(tool=WRITE_TOOL[harness][0])


@dataclass(frozen=True, slots=True)
class Form:
    """A reply to measure: ``first``, then (``then_write``) a correct write of
    ``out.txt``, then done; or ``replies``, a whole script. ``codex``: options for
    :func:`cxharness.run_codex` (``stream_max_retries=None``: Codex's default)."""

    name: str
    first: Callable[[Harness, Path], Reply] | None = None
    then_write: bool = True
    replies: Callable[[Harness, Path], Sequence[Reply]] | None = None
    harnesses: frozenset[Harness] = frozenset(Harness)
    codex: Mapping[str, Any] = field(default_factory=dict)

    def script(self, harness: Harness) -> Callable[[Path], Sequence[Reply]]:
        def build(project: Path) -> Sequence[Reply]:
            if self.replies is not None:
                return self.replies(harness, project)
            assert self.first is not None
            out = [self.first(harness, project)]
            if self.then_write:
                fix = write_call(harness, project, "out.txt", CONTENT, _id("fix", harness))
                out.append(Reply(calls=(fix,)))
            return out

        return build


def _id(tag: str, harness: Harness | None = None) -> str:
    return f"toolu_{tag}" if harness is Harness.CLAUDE_CODE else f"call_{tag}"


def _guidance_args(harness: Harness) -> str:
    return json.dumps(
        {"tool": WRITE_TOOL[harness][0], "reason": "cut_off", "guidance": guidance_for(harness)}
    )


def _named(name: Callable[[Harness], str]) -> Callable[[Harness, Path], Reply]:
    def first(harness: Harness, project: Path) -> Reply:
        return Reply.call(name(harness), _guidance_args(harness), id=_id("refused", harness))

    return first


def _case_variant(harness: Harness, project: Path) -> Reply:
    text = write_text(harness, project, "case.txt", "case\n")
    return Reply.call(CASE_VARIANT[harness], text, id=_id("case", harness))


def _sentence(harness: Harness, project: Path) -> Reply:
    return Reply.call(WRITE_TOOL[harness][0], guidance_for(harness), id=_id("refused", harness))


def _stop(
    label: str, ending: Ending, stop: str | None, status: str | None
) -> Callable[[Harness, Path], Reply]:
    def first(harness: Harness, project: Path) -> Reply:
        path = f"stop_{label}.txt"
        call: Call = write_call(harness, project, path, CONTENT, _id(f"stop_{label}", harness))
        return Reply(calls=(call,), ending=ending, stop=stop, item_status=status)

    return first


def _claude_ids(harness: Harness, project: Path) -> Sequence[Reply]:
    """Two complete writes per reply, ids ``X``/``X_2``, then ``Y``/``Y2``, then
    ``Z``/``B2_Z``."""
    pairs = [("toolu_X", "toolu_X_2"), ("toolu_Y", "toolu_Y2"), ("toolu_Z", "B2_toolu_Z")]
    replies = []
    for n, (one, two) in enumerate(pairs):
        calls = (
            write_call(harness, project, f"{n}a.txt", f"{one}\n", one),
            write_call(harness, project, f"{n}b.txt", f"{two}\n", two),
        )
        replies.append(Reply(calls=calls))
    return replies


def _cut(
    ending: Ending, error: Mapping[str, Any] | None = None
) -> Callable[[Harness, Path], Reply]:
    def first(harness: Harness, project: Path) -> Reply:
        text = cut(write_text(harness, project, "out.txt", CONTENT))
        call = Call(WRITE_TOOL[harness][0], text, _id("cut", harness))
        return Reply(calls=(call,), ending=ending, error=error)

    return first


#: The error chunk the proxy (main, December) sends a Chat client when the upstream
#: connection breaks mid-stream.
PROXY_CHAT_ERROR: Final = {
    "message": "the upstream stream broke: ClientPayloadError",
    "type": "upstream_error",
    "code": "upstream",
}


def _forms() -> dict[str, Form]:
    forms = [
        Form("unknown_tool", _named(lambda h: REFUSED_NAME)),
        Form("suffixed_tool", _named(lambda h: WRITE_TOOL[h][0] + "_refused")),
        Form("upper_unknown", _named(lambda h: REFUSED_NAME.upper())),
        Form("case_variant", _case_variant),
        Form("sentence_args", _sentence),
        Form("claude_ids", replies=_claude_ids, harnesses=frozenset({Harness.CLAUDE_CODE})),
    ]
    for harness, stops in STOPS.items():
        for label, ending, stop, status in stops:
            forms.append(
                Form(
                    f"stop_{label}",
                    _stop(label, ending, stop, status),
                    then_write=False,
                    harnesses=frozenset({harness}),
                )
            )
    # Codex with its default retries (stream_max_retries and request_max_retries unset)
    for label, ending in (
        ("dropped", Ending.DROP),
        ("no_stop", Ending.NO_STOP),
        ("error_event", Ending.ERROR_EVENT),
        ("length", Ending.LENGTH),
    ):
        forms.append(
            Form(
                f"codex_default_retries_{label}",
                _cut(ending),
                harnesses=frozenset({Harness.CODEX}),
                codex={"stream_max_retries": None, "request_max_retries": None},
            )
        )
    # OpenCode retries an error chunk by its type and message: not this one
    forms.append(
        Form(
            "error_upstream_error",
            _cut(Ending.ERROR_EVENT, PROXY_CHAT_ERROR),
            harnesses=frozenset({Harness.OPENCODE}),
        )
    )
    return {form.name: form for form in forms}


FORMS: Final[Mapping[str, Form]] = _forms()
