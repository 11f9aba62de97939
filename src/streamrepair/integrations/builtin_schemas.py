"""Input schemas of the built-in tools of Claude Code and OpenCode.

The hooks receive a tool's name and arguments but not its schema, and the schema-gated
rules (``drop_null``, ``parse_json_string``, ``wrap_bare_string``...) need one. These
tables give it for the harnesses' own tools; tools not listed here (MCP tools, plugins)
get only the rules that need no schema, unless the user passes schemas with
``--schemas``.

The schemas are deliberately loose, because a schema stricter than the harness makes the
hook deny calls the harness would accept: they declare the **type** of every documented
parameter (that is what the repairs need), require only the parameters a tool cannot run
without, list no ``enum`` (an unknown value is the harness's to reject) and never forbid
extra properties (a newer harness version may add parameters).

Sources: Claude Code's hooks reference, "PreToolUse input" tables
(https://code.claude.com/docs/en/hooks#pretooluse-input), plus the tools it does not
tabulate (MultiEdit, LS, TodoWrite, NotebookEdit, BashOutput) as Claude Code sends them;
OpenCode's tool definitions (``packages/opencode/src/tool/*.ts`` in anomalyco/opencode,
zod ``Parameters`` objects: ``read``, ``edit``, ``bash``, ...).

Aliases map an expected key to names models trained on the *other* harness use
(``file_path`` vs ``filePath``); ``rename_alias`` renames one only where the expected key
is missing and required (CommandCode's ``renameAliasedField``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "CLAUDE_CODE_ALIASES",
    "CLAUDE_CODE_SCHEMAS",
    "OPENCODE_ALIASES",
    "OPENCODE_SCHEMAS",
]

_S: Final = {"type": "string"}
_N: Final = {"type": "number"}
_B: Final = {"type": "boolean"}
_STRINGS: Final = {"type": "array", "items": {"type": "string"}}


def _object(properties: Mapping[str, Any], *required: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


_CC_EDIT: Final = _object(
    {"old_string": _S, "new_string": _S, "replace_all": _B}, "old_string", "new_string"
)
_CC_TODO: Final = _object(
    {"content": _S, "status": _S, "activeForm": _S, "id": _S, "priority": _S},
    "content",
    "status",
)
_CC_AGENT: Final = _object(
    {"description": _S, "prompt": _S, "subagent_type": _S, "model": _S, "run_in_background": _B},
    "prompt",
)

#: Claude Code's built-in tools, by the ``tool_name`` its hooks receive.
CLAUDE_CODE_SCHEMAS: Final[Mapping[str, Mapping[str, Any]]] = {
    "Bash": _object(
        {
            "command": _S,
            "description": _S,
            "timeout": _N,
            "run_in_background": _B,
            "dangerouslyDisableSandbox": _B,
        },
        "command",
    ),
    "BashOutput": _object({"bash_id": _S, "filter": _S}, "bash_id"),
    "KillShell": _object({"shell_id": _S}, "shell_id"),
    "Read": _object({"file_path": _S, "offset": _N, "limit": _N, "pages": _S}, "file_path"),
    "Write": _object({"file_path": _S, "content": _S}, "file_path", "content"),
    "Edit": _object(
        {"file_path": _S, "old_string": _S, "new_string": _S, "replace_all": _B},
        "file_path",
        "old_string",
        "new_string",
    ),
    "MultiEdit": _object(
        {"file_path": _S, "edits": {"type": "array", "items": _CC_EDIT}}, "file_path", "edits"
    ),
    "NotebookEdit": _object(
        {
            "notebook_path": _S,
            "cell_id": _S,
            "new_source": _S,
            "cell_type": _S,
            "edit_mode": _S,
        },
        "notebook_path",
        "new_source",
    ),
    "Glob": _object({"pattern": _S, "path": _S}, "pattern"),
    "Grep": _object(
        {
            "pattern": _S,
            "path": _S,
            "glob": _S,
            "type": _S,
            "output_mode": _S,
            "-i": _B,
            "-n": _B,
            "-A": _N,
            "-B": _N,
            "-C": _N,
            "head_limit": _N,
            "offset": _N,
            "multiline": _B,
        },
        "pattern",
    ),
    "LS": _object({"path": _S, "ignore": _STRINGS}, "path"),
    "TodoWrite": _object({"todos": {"type": "array", "items": _CC_TODO}}, "todos"),
    "WebFetch": _object({"url": _S, "prompt": _S}, "url", "prompt"),
    "WebSearch": _object(
        {"query": _S, "allowed_domains": _STRINGS, "blocked_domains": _STRINGS}, "query"
    ),
    "Agent": _CC_AGENT,
    "Task": _CC_AGENT,
    "ExitPlanMode": _object({"plan": _S}),
}

_CC_PATH_ALIASES: Final = {
    "file_path": ("filePath", "filepath", "path"),
    "old_string": ("oldString",),
    "new_string": ("newString",),
    "replace_all": ("replaceAll",),
}

#: Per tool: expected key -> keys models may send instead.
CLAUDE_CODE_ALIASES: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = {
    "Read": {"file_path": _CC_PATH_ALIASES["file_path"]},
    "Write": {"file_path": _CC_PATH_ALIASES["file_path"]},
    "Edit": _CC_PATH_ALIASES,
    "MultiEdit": {"file_path": _CC_PATH_ALIASES["file_path"]},
    "NotebookEdit": {"notebook_path": ("notebookPath", "path")},
}

_OC_EDIT: Final = _object(
    {"filePath": _S, "oldString": _S, "newString": _S, "replaceAll": _B},
    "oldString",
    "newString",
)

#: OpenCode's built-in tools, by the ``input.tool`` its plugin hooks receive.
OPENCODE_SCHEMAS: Final[Mapping[str, Mapping[str, Any]]] = {
    "read": _object({"filePath": _S, "offset": _N, "limit": _N}, "filePath"),
    "write": _object({"content": _S, "filePath": _S}, "content", "filePath"),
    "edit": _object(
        {"filePath": _S, "oldString": _S, "newString": _S, "replaceAll": _B},
        "filePath",
        "oldString",
        "newString",
    ),
    "multiedit": _object(
        {"filePath": _S, "edits": {"type": "array", "items": _OC_EDIT}}, "filePath", "edits"
    ),
    "bash": _object(
        {"command": _S, "timeout": _N, "workdir": _S, "description": _S},
        "command",
    ),
    "glob": _object({"pattern": _S, "path": _S}, "pattern"),
    "grep": _object({"pattern": _S, "path": _S, "include": _S}, "pattern"),
    "list": _object({"path": _S, "ignore": _STRINGS}),
    "patch": _object({"patchText": _S}, "patchText"),
    "apply_patch": _object({"patchText": _S}, "patchText"),
    "todowrite": _object(
        {
            "todos": {
                "type": "array",
                "items": _object(
                    {"content": _S, "status": _S, "priority": _S, "id": _S},
                    "content",
                    "status",
                ),
            }
        },
        "todos",
    ),
    "todoread": _object({}),
    "webfetch": _object({"url": _S, "format": _S, "timeout": _N}, "url"),
    "websearch": _object({"query": _S, "numResults": _N}, "query"),
    "task": _object({"description": _S, "prompt": _S, "subagent_type": _S}, "prompt"),
}

_OC_PATH_ALIASES: Final = {
    "filePath": ("file_path", "filepath", "path"),
    "oldString": ("old_string",),
    "newString": ("new_string",),
    "replaceAll": ("replace_all",),
}

#: Per tool: expected key -> keys models may send instead.
OPENCODE_ALIASES: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = {
    "read": {"filePath": _OC_PATH_ALIASES["filePath"]},
    "write": {"filePath": _OC_PATH_ALIASES["filePath"]},
    "edit": _OC_PATH_ALIASES,
    "multiedit": {"filePath": _OC_PATH_ALIASES["filePath"]},
}
