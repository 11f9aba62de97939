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
    from .builtin_schemas import CLAUDE_CODE_ALIASES as CLAUDE_CODE_ALIASES
    from .builtin_schemas import CLAUDE_CODE_SCHEMAS as CLAUDE_CODE_SCHEMAS
    from .builtin_schemas import OPENCODE_ALIASES as OPENCODE_ALIASES
    from .builtin_schemas import OPENCODE_SCHEMAS as OPENCODE_SCHEMAS
    from .builtin_schemas import OPENCODE_SCHEMAS_VERSION as OPENCODE_SCHEMAS_VERSION
    from .calls import CallVerdict as CallVerdict
    from .calls import Decision as Decision
    from .calls import inspect_call as inspect_call
    from .calls import load_schema_files as load_schema_files
    from .calls import load_schemas as load_schemas
    from .calls import resolve_model as resolve_model
    from .claude_code import claude_code_hook as claude_code_hook
    from .deepseek_harness import deepseek_harness_hook as deepseek_harness_hook
    from .hermes import HermesRepairs as HermesRepairs
    from .hermes_plugin import HermesPlugin as HermesPlugin
    from .hooks import Bridge as Bridge
    from .hooks import HookAnswer as HookAnswer
    from .hooks import HookSettings as HookSettings
    from .hooks import Permission as Permission
    from .hooks import parse_payload as parse_payload
    from .mcp import list_mcp_tools as list_mcp_tools
    from .opencode import OpenCodeHelper as OpenCodeHelper
    from .opencode import plugin_source as plugin_source
    from .transcript import request_tool_schemas as request_tool_schemas

__all__, __getattr__, __dir__ = attach(__name__, __file__)
