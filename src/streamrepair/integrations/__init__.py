"""Harness integrations: hooks, plugins and helpers that put the repair rules in front of
the tools of Claude Code, DeepSeek Harness, OpenCode and Hermes.

* :func:`inspect_call` (in :mod:`.calls`) is the one decision every adapter makes:
  pass, rewrite with repaired arguments, or reject with feedback.
* :func:`claude_code_hook` / :func:`deepseek_harness_hook` answer a command hook's
  payload (``streamrepair hook claude-code|deepseek-harness``);
  :func:`request_tool_schemas` reads the MCP tool schemas Claude Code sent back from its
  session transcript.
* :class:`OpenCodeHelper` is the long-lived process behind the OpenCode plugin
  (``streamrepair serve opencode``; the plugin file comes from :func:`plugin_source`).
* :class:`HermesPlugin` is the Hermes Agent plugin (``tool_request`` middleware and
  hooks, registered by :func:`.hermes_plugin.register`); :class:`HermesRepairs` carries
  repairs from dispatch to the tool result in a harness shaped like Hermes.
* :mod:`.install` writes the settings entries and the plugin file
  (``streamrepair install``).

The names are imported on first use: a hook process loads only its own adapter.
"""

from __future__ import annotations

import typing as _typing

from .._lazy import attach

if _typing.TYPE_CHECKING:
    from .builtin_schemas import (
        CLAUDE_CODE_ALIASES,
        CLAUDE_CODE_SCHEMAS,
        OPENCODE_ALIASES,
        OPENCODE_SCHEMAS,
        OPENCODE_SCHEMAS_VERSION,
    )
    from .calls import (
        CallVerdict,
        Decision,
        inspect_call,
        load_schema_files,
        load_schemas,
        resolve_model,
    )
    from .claude_code import (
        claude_code_hook,
    )
    from .deepseek_harness import (
        deepseek_harness_hook,
    )
    from .hermes import (
        HermesRepairs,
    )
    from .hermes_plugin import (
        HermesPlugin,
    )
    from .hooks import (
        Bridge,
        HookAnswer,
        HookSettings,
        Permission,
        parse_payload,
    )
    from .mcp import (
        list_mcp_tools,
    )
    from .opencode import (
        OpenCodeHelper,
        plugin_source,
    )
    from .transcript import (
        request_tool_schemas,
    )

_EXPORTS: dict[str, str] = {
    "Bridge": "hooks",
    "CLAUDE_CODE_ALIASES": "builtin_schemas",
    "CLAUDE_CODE_SCHEMAS": "builtin_schemas",
    "CallVerdict": "calls",
    "Decision": "calls",
    "HermesPlugin": "hermes_plugin",
    "HermesRepairs": "hermes",
    "HookAnswer": "hooks",
    "HookSettings": "hooks",
    "OPENCODE_ALIASES": "builtin_schemas",
    "OPENCODE_SCHEMAS": "builtin_schemas",
    "OPENCODE_SCHEMAS_VERSION": "builtin_schemas",
    "OpenCodeHelper": "opencode",
    "Permission": "hooks",
    "claude_code_hook": "claude_code",
    "deepseek_harness_hook": "deepseek_harness",
    "inspect_call": "calls",
    "list_mcp_tools": "mcp",
    "load_schema_files": "calls",
    "load_schemas": "calls",
    "parse_payload": "hooks",
    "plugin_source": "opencode",
    "request_tool_schemas": "transcript",
    "resolve_model": "calls",
}

__all__ = [
    "CLAUDE_CODE_ALIASES",
    "CLAUDE_CODE_SCHEMAS",
    "OPENCODE_ALIASES",
    "OPENCODE_SCHEMAS",
    "OPENCODE_SCHEMAS_VERSION",
    "Bridge",
    "CallVerdict",
    "Decision",
    "HermesPlugin",
    "HermesRepairs",
    "HookAnswer",
    "HookSettings",
    "OpenCodeHelper",
    "Permission",
    "claude_code_hook",
    "deepseek_harness_hook",
    "inspect_call",
    "list_mcp_tools",
    "load_schema_files",
    "load_schemas",
    "parse_payload",
    "plugin_source",
    "request_tool_schemas",
    "resolve_model",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, __all__)
