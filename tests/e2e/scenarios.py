"""The broken turns of issue 21, written once for Claude Code, Codex and OpenCode.

Each :class:`Scenario` is a first reply that goes wrong in one way, then the *scripted
second attempt* (the correct calls doing what the first meant), then ``done``. What the
scenario intends is :attr:`Scenario.intended`: the project's new files afterwards,
relative path -> exact content. Run one with :func:`harnessloop.run_loop`::

    run = run_loop(harness, SCENARIOS["cut_length"].script(harness), root=tmp_path)
    run.went_on                 # the harness asked again after the broken reply
    run.results(1)              # what the model read about the broken call
    run.written() == SCENARIOS["cut_length"].intended

A *write* is each harness's own way to create a file, its arguments JSON text with the
path first (so a cut falls in the content):

* Claude Code: ``Write`` ``{"file_path": <absolute>, "content": ...}``;
* OpenCode: ``write`` ``{"filePath": <absolute>, "content": ...}``;
* Codex (no ``apply_patch`` for a model it has no metadata for): ``exec_command``
  ``{"cmd": "cat > <relative> <<'EOF'\\n...EOF"}``: a quoted here-document, so the content
  is written byte for byte and a bracket-closing client that ran a cut-off one would
  write the truncated content (bash runs a here-document that ends at end of file).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harnessloop import Harness, LoopRun
from scripted import CHUNK, Call, Ending, Reply

__all__ = [
    "CONTENT",
    "SCENARIOS",
    "WINDOWS_TEXT",
    "Scenario",
    "chain",
    "cut",
    "write_call",
    "write_text",
]

CONTENT: Final = "line one\nline two\nline three\n"
#: What a model means when it writes ``"C:\\Users\\new\\tmp"`` without escaping: the
#: raw text holds ``\\U`` (invalid in JSON), ``\\n`` and ``\\t`` (valid, and wrong here).
WINDOWS_TEXT: Final = "C:\\Users\\new\\tmp"
_MARK: Final = "\u0000RAW\u0000"

#: Each harness's write tool and its keys.
WRITE_TOOL: Final = {
    Harness.CLAUDE_CODE: ("Write", "file_path"),
    Harness.OPENCODE: ("write", "filePath"),
    Harness.CODEX: ("exec_command", "cmd"),
}


def write_text(
    harness: Harness, project: Path, path: str, content: str, *, key: str | None = None
) -> str:
    """The argument text of ``harness``'s write of ``content`` to ``path`` (relative to
    ``project``); ``key`` replaces the path key (Claude Code, OpenCode) or the command
    key (Codex). ``content`` may hold :data:`_MARK`-wrapped raw text (see
    :func:`_with_raw`)."""
    path_key = WRITE_TOOL[harness][1]
    if harness is Harness.CODEX:
        command = f"cat > {path} <<'EOF'\n{content}EOF"
        return json.dumps({key or path_key: command}, ensure_ascii=False)
    return json.dumps(
        {key or path_key: str(project / path), "content": content}, ensure_ascii=False
    )


def _with_raw(text: str, raw: str) -> str:
    """``text`` (JSON) with the JSON string of the mark replaced by ``raw`` unescaped."""
    return text.replace(json.dumps(_MARK)[1:-1], raw)


def write_call(harness: Harness, project: Path, path: str, content: str, id: str = "") -> Call:
    """A correct write of ``content`` to ``path``."""
    return Call(WRITE_TOOL[harness][0], write_text(harness, project, path, content), id)


def cut(text: str, inside: str = "line two") -> str:
    """``text`` cut in the middle of a string: four characters into ``inside``."""
    return text[: text.index(inside) + 4]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A broken first reply, the scripted second attempt, then ``done``."""

    name: str
    title: str
    broken: Callable[[Harness, Path], Reply]
    intended: Mapping[str, str]

    def second_attempt(self, harness: Harness, project: Path) -> Reply:
        """The correct calls that do what the broken reply meant."""
        calls = tuple(
            write_call(harness, project, path, content, id=f"call_fix{n}")
            if harness is not Harness.CLAUDE_CODE
            else write_call(harness, project, path, content, id=f"toolu_fix{n}")
            for n, (path, content) in enumerate(self.intended.items())
        )
        return Reply(calls=calls)

    def wrong_writes(self, run: LoopRun) -> dict[str, str]:
        """Files the run ever held (when a request arrived, or at the end) that are not
        what the scenario intends: truncated or wrongly decoded content, or files it
        never meant. Empty when nothing was written wrong."""
        wrong: dict[str, str] = {}
        for after in [*range(1, len(run.main)), None]:
            for path, text in run.written(after).items():
                if self.intended.get(path) != text:
                    wrong.setdefault(path, text)
        return wrong

    def done(self, run: LoopRun) -> bool:
        """The intended files are in the project at the end, exactly, and nothing else
        was ever written."""
        return run.written() == dict(self.intended) and not self.wrong_writes(run)

    def script(self, harness: Harness) -> Callable[[Path], Sequence[Reply]]:
        return lambda project: [
            self.broken(harness, project),
            self.second_attempt(harness, project),
        ]


def _cut_write(ending: Ending) -> Callable[[Harness, Path], Reply]:
    def broken(harness: Harness, project: Path) -> Reply:
        text = cut(write_text(harness, project, "out.txt", CONTENT))
        return Reply(calls=(Call(WRITE_TOOL[harness][0], text, _id(harness)),), ending=ending)

    return broken


def _id(harness: Harness, tag: str = "broken") -> str:
    return f"toolu_{tag}" if harness is Harness.CLAUDE_CODE else f"call_{tag}"


#: The renamed key per harness: Claude Code's ``file_path`` as ``filePath``, OpenCode's
#: ``filePath`` as ``file_path``, Codex's ``cmd`` as ``Cmd`` (each differs from the real
#: key only in case, ``_`` or ``-``).
RENAMED: Final = {
    Harness.CLAUDE_CODE: "filePath",
    Harness.OPENCODE: "file_path",
    Harness.CODEX: "Cmd",
}


def _renamed(harness: Harness, project: Path) -> Reply:
    text = write_text(harness, project, "out.txt", CONTENT, key=RENAMED[harness])
    return Reply.call(WRITE_TOOL[harness][0], text, id=_id(harness))


def _invalid_after_repairs(harness: Harness, project: Path) -> Reply:
    # a trailing comma (repairable) and the content (Codex: the command) missing
    if harness is Harness.CODEX:
        text = '{"workdir": ".",}'
    else:
        text = f'{{"{WRITE_TOOL[harness][1]}": {json.dumps(str(project / "out.txt"))},}}'
    return Reply.call(WRITE_TOOL[harness][0], text, id=_id(harness))


def _merged_at(boundary: bool) -> Callable[[Harness, Path], Reply]:
    """``{..}{..}`` in deltas of about :data:`scripted.CHUNK` characters; ``boundary``:
    one delta ends exactly where the first object does (else none does)."""

    def broken(harness: Harness, project: Path) -> Reply:
        first = write_text(harness, project, "a.txt", "alpha\n")
        text = first + write_text(harness, project, "b.txt", "beta\n")
        cuts = set(range(CHUNK, len(text), CHUNK)) - {len(first)}
        if boundary:
            cuts.add(len(first))
        call = Call(WRITE_TOOL[harness][0], text, _id(harness), tuple(sorted(cuts)))
        return Reply(calls=(call,))

    return broken


def _windows(harness: Harness, project: Path) -> Reply:
    text = _with_raw(write_text(harness, project, "win.txt", _MARK + "\n"), WINDOWS_TEXT)
    return Reply.call(WRITE_TOOL[harness][0], text, id=_id(harness))


SCENARIOS: Final[Mapping[str, Scenario]] = {
    s.name: s
    for s in (
        Scenario(
            "cut_length",
            "a write cut off mid-string, with the output limit as stop reason",
            _cut_write(Ending.LENGTH),
            {"out.txt": CONTENT},
        ),
        Scenario(
            "cut_normal",
            "the same cut-off write, the stream ending normally (tool_use / tool_calls /"
            " response.completed)",
            _cut_write(Ending.NORMAL),
            {"out.txt": CONTENT},
        ),
        Scenario(
            "renamed_key",
            "a write whose path key (Codex: command key) is spelled differently",
            _renamed,
            {"out.txt": CONTENT},
        ),
        Scenario(
            "invalid_after_repairs",
            "a trailing comma and a required key missing (the content; Codex: cmd)",
            _invalid_after_repairs,
            {"out.txt": CONTENT},
        ),
        Scenario(
            "merged_objects",
            "two writes' arguments in one call: {..}{..} (no delta ends between them)",
            _merged_at(boundary=False),
            {"a.txt": "alpha\n", "b.txt": "beta\n"},
        ),
        Scenario(
            "merged_at_boundary",
            "the same {..}{..}, one delta ending exactly after the first object",
            _merged_at(boundary=True),
            {"a.txt": "alpha\n", "b.txt": "beta\n"},
        ),
        Scenario(
            "dropped",
            "the connection dropped mid-write (reset, no last chunk)",
            _cut_write(Ending.DROP),
            {"out.txt": CONTENT},
        ),
        Scenario(
            "no_stop",
            "the stream ends cleanly mid-write, without message_stop / [DONE] / response.completed",
            _cut_write(Ending.NO_STOP),
            {"out.txt": CONTENT},
        ),
        Scenario(
            "error_event",
            "an error event after the 200, mid-write",
            _cut_write(Ending.ERROR_EVENT),
            {"out.txt": CONTENT},
        ),
        Scenario(
            "windows_path",
            'a write of "C:\\Users\\new\\tmp" with the backslashes unescaped',
            _windows,
            {"win.txt": WINDOWS_TEXT + "\n"},
        ),
    )
}


Step = Callable[[Harness, Path], Reply]


def chain(
    harness: Harness, steps: Sequence[Step], intended: Mapping[str, str]
) -> Callable[[Path], Sequence[Reply]]:
    """A script of ``steps``' replies one after the other (the harness answers each with
    its next request, or the chain stops there), then one reply writing every file of
    ``intended`` (the scripted second attempt for all of them), then ``done``. Each
    call gets a fresh id, ``<prefix>step<k>call<n>`` (never ``_<digits>``, which Claude
    Code reads as its own batch entries)."""
    prefix = "toolu_" if harness is Harness.CLAUDE_CODE else "call_"

    def build(project: Path) -> Sequence[Reply]:
        replies = []
        for k, step in enumerate(steps):
            reply = step(harness, project)
            calls = tuple(
                dataclasses.replace(call, id=f"{prefix}step{k}call{n}")
                for n, call in enumerate(reply.calls)
            )
            replies.append(dataclasses.replace(reply, calls=calls))
        fix = tuple(
            write_call(harness, project, path, content, f"{prefix}fix{n}")
            for n, (path, content) in enumerate(intended.items())
        )
        return [*replies, Reply(calls=fix)]

    return build
