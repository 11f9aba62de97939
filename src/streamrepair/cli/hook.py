"""``streamrepair hook HARNESS``: answer one harness hook payload (Claude Code, DeepSeek
Harness).

A hook runs once per tool call in a fresh process, so this module imports only what a
call needs: the harness's adapter, chosen by name when the command runs, and the schema
machinery only for a call that needs a repair (``schema/quick.py``). A hook must never
break the session: it parses its own options leniently (a bad option is reported on
stderr and ignored; argparse's exit status 2 would mean "block the tool call" to Claude
Code), answers within :data:`HOOK_DEADLINE_SECONDS`, and exits 0 whatever happens.

The settings options (``--schemas``, ``--profiles``, ``--model``, ``--telemetry``, ...)
are shared with ``streamrepair serve opencode`` (:mod:`.integrations`).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..integrations.calls import load_schema_files
from ..integrations.hooks import (
    MAX_PAYLOAD_BYTES,
    Bridge,
    HookAnswer,
    HookSettings,
    Permission,
    parse_payload,
    pass_through,
)
from ..telemetry.log import TelemetryLog
from ..telemetry.otel import metrics_from_env
from ..telemetry.record import ARGUMENTS_ENV, flag_from_env, telemetry_path_from_env

if TYPE_CHECKING:
    import argparse

__all__ = [
    "DEADLINE_ENV",
    "HOOK_DEADLINE_SECONDS",
    "parse_hook_options",
    "register",
    "run",
    "settings",
    "settings_options",
    "telemetry_log",
]

#: Seconds a hook may take before it answers "proceed" regardless.
HOOK_DEADLINE_SECONDS: Final = 10.0
#: Environment variable overriding :data:`HOOK_DEADLINE_SECONDS` (0.1 to 60).
DEADLINE_ENV: Final = "STREAMREPAIR_HOOK_DEADLINE"
# The adapter of each harness: (module, function), imported only when that hook runs.
_HOOKS: Final[Mapping[str, tuple[str, str]]] = {
    "claude-code": ("streamrepair.integrations.claude_code", "claude_code_hook"),
    "deepseek-harness": ("streamrepair.integrations.deepseek_harness", "deepseek_harness_hook"),
}


# The hook's options, read without argparse (a hook runs once per tool call, and a bad
# option must be reported and ignored, never stop the call): option -> attribute name,
# and whether it takes a value.
_VALUE_OPTIONS: Final = {
    "--schemas": "schemas",
    "--profiles": "profiles",
    "--model": "model",
    "--telemetry": "telemetry",
    "--permission": "permission",
    "--bridge": "bridge",
}
_FLAG_OPTIONS: Final = {
    "--no-builtin-schemas": "no_builtin_schemas",
    "--no-transcript-schemas": "no_transcript_schemas",
    "--log-arguments": "log_arguments",
    "-h": "help",
    "--help": "help",
}


def parse_hook_options(argv: list[str]) -> tuple[types.SimpleNamespace, list[str]]:
    """The hook's options (unset ones are None or False) and a warning per argument that
    was ignored: unknown, or an option missing its value."""
    options = types.SimpleNamespace(
        **dict.fromkeys(_VALUE_OPTIONS.values()), **dict.fromkeys(_FLAG_OPTIONS.values(), False)
    )
    ignored: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        name, has_value, inline = arg.partition("=")
        if name in _VALUE_OPTIONS:
            if has_value:
                setattr(options, _VALUE_OPTIONS[name], inline)
            elif rest and not rest[0].startswith("--"):
                setattr(options, _VALUE_OPTIONS[name], rest.pop(0))
            else:
                ignored.append(f"{name} (it needs a value)")
        elif arg in _FLAG_OPTIONS:
            setattr(options, _FLAG_OPTIONS[arg], True)
        else:
            ignored.append(arg)
    return options, ignored


def settings_options(
    parser: argparse.ArgumentParser,
    *,
    helper: argparse._ActionsContainer | None = None,
    schemas_help: str = "",
) -> None:
    """Add the settings options shared by ``hook`` and ``serve opencode``. ``helper``
    (an argument group of ``serve``) takes the options that only the hooks and the
    OpenCode helper read (built-in schemas, profiles, the model), so that ``--help``
    shows them apart from the proxy's; ``schemas_help`` is added to ``--schemas``'s help."""
    from ..schema.profiles import profile_names

    parser.add_argument(
        "--schemas",
        metavar="FILE",
        help=(
            "JSON file(s) of tool schemas, joined by ':' (a tool list, a request body, an MCP "
            "tools/list result, name -> schema, or `streamrepair schemas` output); also "
            f"$STREAMREPAIR_SCHEMAS{schemas_help}"
        ),
    )
    only = parser if helper is None else helper
    only.add_argument(
        "--no-builtin-schemas",
        action="store_true",
        help="ignore the built-in schemas of the harness's tools",
    )
    only.add_argument(
        "--profiles",
        metavar="SPEC",
        help=(
            "per-model profiles: off (default), auto, or names "
            f"({', '.join(profile_names())}); also $STREAMREPAIR_PROFILES"
        ),
    )
    only.add_argument(
        "--model",
        help=(
            "model name for telemetry and profiles (default: from the payload, "
            "$STREAMREPAIR_MODEL or $ANTHROPIC_MODEL)"
        ),
    )
    parser.add_argument(
        "--telemetry",
        metavar="FILE",
        help=(
            "telemetry log ('off' to disable; default $STREAMREPAIR_TELEMETRY or "
            "~/.local/state/streamrepair/telemetry.jsonl)"
        ),
    )
    parser.add_argument(
        "--log-arguments", action="store_true", help="also log argument contents (off by default)"
    )


def _hook_help() -> str:
    import argparse

    parser = argparse.ArgumentParser(prog="streamrepair hook HARNESS", add_help=False)
    settings_options(parser)
    parser.add_argument(
        "--permission",
        metavar="{auto,allow,ask}",
        help=(
            "Claude Code: permission decision sent with repaired input: auto (default: "
            "none, Claude Code's own rules decide), allow (skips the prompt), ask (forces "
            "one; a denial under claude -p); also $STREAMREPAIR_PERMISSION"
        ),
    )
    parser.add_argument(
        "--no-transcript-schemas",
        action="store_true",
        help=(
            "Claude Code: do not read MCP tool schemas from the session transcript "
            "(an undocumented record); also $STREAMREPAIR_TRANSCRIPT_SCHEMAS=0"
        ),
    )
    parser.add_argument(
        "--bridge",
        metavar="{auto,claude-code,codex}",
        help="DeepSeek Harness: the bridge running the hook (default auto)",
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this help")
    return parser.format_help()


def register(subparsers: Any) -> None:
    """Add the ``hook`` subcommand."""
    import argparse

    hook = subparsers.add_parser(
        "hook",
        help="answer a harness hook (Claude Code, DeepSeek Harness) with repaired arguments",
        description="Read one hook payload on stdin and answer on stdout (exit 0 always). "
        "HARNESS is claude-code or deepseek-harness; run 'streamrepair hook HARNESS --help' "
        "for its options.",
    )
    hook.add_argument("harness", nargs="?", default="", metavar="HARNESS")
    hook.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    hook.set_defaults(handler=_run_hook)


# ------------------------------------------------------------------------ settings


def settings(
    options: object, environ: Mapping[str, str], warn: Callable[[str], None]
) -> HookSettings:
    schemas: dict[str, Any] = {}
    schema_file = getattr(options, "schemas", None) or environ.get("STREAMREPAIR_SCHEMAS", "")
    if schema_file:
        try:
            schemas = load_schema_files(schema_file)
        except (OSError, ValueError) as exc:
            warn(f"streamrepair: schemas not loaded ({exc}); using the built-in ones")
    profiles = getattr(options, "profiles", None) or environ.get("STREAMREPAIR_PROFILES") or None
    if profiles is not None:
        from ..schema.profiles import select_profiles  # profiles are off by default

        try:
            select_profiles(profiles, "")
        except ValueError as exc:
            warn(f"streamrepair: {exc}; profiles off")
            profiles = None
    permission = getattr(options, "permission", None) or environ.get(
        "STREAMREPAIR_PERMISSION", "auto"
    )
    bridge = getattr(options, "bridge", None) or environ.get("STREAMREPAIR_BRIDGE", "auto")
    try:
        permission_value = Permission(permission)
    except ValueError:
        warn(f"streamrepair: unknown permission policy {permission!r}; using auto")
        permission_value = Permission.AUTO
    try:
        bridge_value = Bridge(bridge)
    except ValueError:
        warn(f"streamrepair: unknown bridge {bridge!r}; using auto")
        bridge_value = Bridge.AUTO
    transcript = not getattr(options, "no_transcript_schemas", False) and environ.get(
        "STREAMREPAIR_TRANSCRIPT_SCHEMAS", "1"
    ).strip().lower() not in ("0", "off", "false", "no")
    return HookSettings(
        schemas=schemas,
        builtin_schemas=not getattr(options, "no_builtin_schemas", False),
        transcript_schemas=transcript,
        profiles=profiles,
        model=getattr(options, "model", None),
        permission=permission_value,
        bridge=bridge_value,
        environ=dict(environ),
    )


def telemetry_log(options: object, environ: Mapping[str, str], harness: str) -> TelemetryLog:
    explicit = getattr(options, "telemetry", None)
    if explicit:
        path = (
            None
            if explicit.strip().lower() in ("off", "0", "none")
            else Path(explicit).expanduser()
        )
    else:
        path = telemetry_path_from_env(environ)
    return TelemetryLog(
        path,
        include_arguments=bool(getattr(options, "log_arguments", False))
        or flag_from_env(ARGUMENTS_ENV, environ),
        metrics=metrics_from_env(environ),
        harness=harness,
    )


# ------------------------------------------------------------------------ hook


def _deadline(environ: Mapping[str, str]) -> float:
    try:
        value = float(environ.get(DEADLINE_ENV, ""))
    except ValueError:
        return HOOK_DEADLINE_SECONDS
    return min(max(value, 0.1), 60.0)


def _emit(answer: HookAnswer) -> None:
    if answer.stdout:
        sys.stdout.write(answer.stdout + "\n")
    sys.stdout.flush()
    for line in answer.stderr:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _run_hook(args: argparse.Namespace) -> int:
    return run([args.harness, *args.options])


def run(argv: list[str]) -> int:
    """``streamrepair hook HARNESS [OPTIONS]`` without argparse: the command line calls
    this directly for ``hook``, so a hook never pays for building the whole parser."""
    harness, options_argv = (argv[0], argv[1:]) if argv else ("", [])
    environ = dict(os.environ)
    warnings: list[str] = []
    where = _HOOKS.get(harness)
    options, ignored = parse_hook_options(options_argv)
    if ignored:
        warnings.append(f"streamrepair: hook options ignored: {' '.join(ignored)}")
    if options.help:
        sys.stderr.write(_hook_help())
        return 0
    if where is None:
        _emit(pass_through(f"unknown harness {harness!r} (claude-code, deepseek-harness)"))
        return 0
    adapter: Callable[[Any, HookSettings], HookAnswer] = getattr(
        importlib.import_module(where[0]), where[1]
    )
    hook_settings = settings(options, environ, warnings.append)
    log = telemetry_log(options, environ, harness)
    done: list[HookAnswer] = []

    def work() -> None:
        try:
            data = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
            payload, problem = parse_payload(data)
            answer = pass_through(problem) if problem else adapter(payload, hook_settings)
            if answer.record is not None:
                log.write(answer.record)
        except Exception as exc:  # never break the session
            answer = pass_through(f"internal error ({type(exc).__name__}: {exc})")
        done.append(answer)

    worker = threading.Thread(target=work, name="streamrepair-hook", daemon=True)
    worker.start()
    worker.join(_deadline(environ))
    for line in warnings:
        sys.stderr.write(line + "\n")
    if not done:
        _emit(pass_through(f"no answer within {_deadline(environ):g} seconds"))
        os._exit(0)  # the worker may be blocked on stdin; do not wait for it
    _emit(done[0])
    return 0
