"""Input schemas of the built-in tools of Claude Code and OpenCode.

The hooks receive a tool's name and arguments but not its schema, and the schema-gated
rules (``drop_null``, ``parse_json_string``, ``wrap_bare_string``...) need one. These
tables give it for the harnesses' own tools; tools not listed here (MCP tools, plugins)
get only the rules that need no schema, unless a schema comes from the harness at run
time or from ``--schemas``.

**Claude Code**'s are deliberately loose. Claude Code checks a built-in tool's input
against its own schema before any hook runs (measured with 2.1.332), so these only need
the **type** of every documented parameter for the rules that apply after that check,
and must never be stricter than Claude Code's (a stricter one would deny calls Claude
Code accepts): only the parameters a tool cannot run without are required, no ``enum``,
extra properties allowed. Sources: Claude Code's hooks reference, "PreToolUse input"
tables (https://code.claude.com/docs/en/hooks#pretooluse-input), plus the tools it does
not tabulate, as Claude Code sends them. tests/e2e checks them against the tool list
the real Claude Code sends.

**OpenCode**'s are exact: OpenCode runs a plugin's ``tool.execute.before`` on the
arguments as the model sent them and validates only afterwards, against the same schemas
it sent the model, so the plugin can use exactly those. They were taken from the
``tools`` of a request OpenCode :data:`OPENCODE_SCHEMAS_VERSION` sent (descriptions
dropped; tests/e2e compares them with what the pinned OpenCode sends). At run time the
plugin asks OpenCode for its current schemas (``client.tool.list``) and uses those first.

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
    "OPENCODE_SCHEMAS_VERSION",
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

# OpenCode's integers carry JavaScript's safe-integer bounds (and counts a lower bound of 0).
_MAX_SAFE: Final = 9007199254740991
_COUNT: Final = {"minimum": 0, "type": "integer", "maximum": _MAX_SAFE}
_LINE: Final = {"minimum": 1, "type": "integer", "maximum": _MAX_SAFE}
_LSP_OPERATIONS: Final = [
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
]

#: The OpenCode version :data:`OPENCODE_SCHEMAS` was taken from.
OPENCODE_SCHEMAS_VERSION: Final = "1.18.33"

#: OpenCode's built-in tools, by the ``input.tool`` its plugin hooks receive: the JSON
#: Schemas OpenCode :data:`OPENCODE_SCHEMAS_VERSION` sends to the model, without their
#: descriptions. The plugin prefers the ones the running OpenCode reports.
OPENCODE_SCHEMAS: Final[Mapping[str, Mapping[str, Any]]] = {
    "bash": _object(
        {
            "command": _S,
            "timeout": {
                "minimum": -_MAX_SAFE,
                "exclusiveMinimum": 0,
                "type": "integer",
                "maximum": _MAX_SAFE,
            },
            "workdir": _S,
        },
        "command",
    ),
    "edit": _object(
        {"filePath": _S, "oldString": _S, "newString": _S, "replaceAll": _B},
        "filePath",
        "oldString",
        "newString",
    ),
    "glob": _object({"pattern": _S, "path": _S}, "pattern"),
    "grep": _object({"pattern": _S, "path": _S, "include": _S}, "pattern"),
    "read": _object({"filePath": _S, "offset": _COUNT, "limit": _COUNT}, "filePath"),
    "skill": _object({"name": _S}, "name"),
    "task": _object(
        {
            "description": _S,
            "prompt": _S,
            "subagent_type": _S,
            "task_id": _S,
            "command": _S,
        },
        "description",
        "prompt",
        "subagent_type",
    ),
    "todowrite": _object(
        {
            "todos": {
                "type": "array",
                "items": _object(
                    {"content": _S, "status": _S, "priority": _S}, "content", "status", "priority"
                ),
            }
        },
        "todos",
    ),
    "webfetch": _object(
        {
            "url": _S,
            "format": {
                "type": "string",
                "enum": ["text", "markdown", "html"],
                "default": "markdown",
            },
            "timeout": _N,
        },
        "url",
    ),
    "write": _object({"content": _S, "filePath": _S}, "content", "filePath"),
    "apply_patch": _object({"patchText": _S}, "patchText"),
    "websearch": _object(
        {
            "query": _S,
            "numResults": _N,
            "livecrawl": {"type": "string", "enum": ["fallback", "preferred"]},
            "type": {"type": "string", "enum": ["auto", "fast", "deep"]},
            "contextMaxCharacters": _N,
        },
        "query",
    ),
    "lsp": _object(
        {
            "operation": {"type": "string", "enum": _LSP_OPERATIONS},
            "filePath": _S,
            "line": _LINE,
            "character": _LINE,
            "query": _S,
        },
        "operation",
        "filePath",
        "line",
        "character",
    ),
    "plan_exit": _object({}),
    "question": _object(
        {
            "questions": {
                "type": "array",
                "items": _object(
                    {
                        "question": _S,
                        "header": _S,
                        "options": {
                            "type": "array",
                            "items": _object(
                                {"label": _S, "description": _S}, "label", "description"
                            ),
                        },
                        "multiple": _B,
                    },
                    "question",
                    "header",
                    "options",
                ),
            }
        },
        "questions",
    ),
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
}
