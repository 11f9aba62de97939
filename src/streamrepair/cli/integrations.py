"""``streamrepair hook | serve | install | stats``: the harness integrations' drivers.

These are thin: they read input within bounds, call the sans-IO adapters in
:mod:`streamrepair.integrations`, print, and write telemetry. A hook must never break the
session, so ``hook`` parses its own options leniently (a bad option is reported on stderr
and ignored; argparse's exit status 2 would mean "block the tool call" to Claude Code),
answers within :data:`HOOK_DEADLINE_SECONDS`, and exits 0 whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, Final, NoReturn

from ..errors import InstallError
from ..integrations.calls import load_schemas
from ..integrations.claude_code import claude_code_hook
from ..integrations.deepseek_harness import deepseek_harness_hook
from ..integrations.hooks import (
    MAX_PAYLOAD_BYTES,
    Bridge,
    HookAnswer,
    HookSettings,
    Permission,
    parse_payload,
    pass_through,
)
from ..integrations.install import (
    InstallPlan,
    claude_code_settings_path,
    dsh_bridge_snippet,
    helper_command,
    hook_command,
    opencode_plugin_dir,
    plan_hook_settings,
    plan_opencode_plugin,
)
from ..integrations.opencode import OpenCodeHelper
from ..integrations.report import render_html, render_text
from ..schema.profiles import profile_names, select_profiles
from ..telemetry.log import TelemetryLog
from ..telemetry.otel import metrics_from_env
from ..telemetry.record import ARGUMENTS_ENV, flag_from_env, telemetry_path_from_env
from ..telemetry.stats import LogReader, StatsBuilder

__all__ = [
    "DEADLINE_ENV",
    "HOOK_DEADLINE_SECONDS",
    "MAX_REQUEST_BYTES",
    "register",
    "serve_lines",
]

#: Seconds a hook may take before it answers "proceed" regardless.
HOOK_DEADLINE_SECONDS: Final = 10.0
#: Environment variable overriding :data:`HOOK_DEADLINE_SECONDS` (0.1 to 60).
DEADLINE_ENV: Final = "STREAMREPAIR_HOOK_DEADLINE"
#: Longest request line the OpenCode helper reads.
MAX_REQUEST_BYTES: Final = MAX_PAYLOAD_BYTES + 2**20
_HOOKS: Final[Mapping[str, Callable[[Any, HookSettings], HookAnswer]]] = {
    "claude-code": claude_code_hook,
    "deepseek-harness": deepseek_harness_hook,
}


class _OptionError(Exception):
    pass


class _LenientParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _OptionError(message)


def _settings_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schemas",
        metavar="FILE",
        help="JSON file of tool schemas (tool list, or name -> schema); also $STREAMREPAIR_SCHEMAS",
    )
    parser.add_argument(
        "--no-builtin-schemas",
        action="store_true",
        help="ignore the built-in schemas of the harness's tools",
    )
    parser.add_argument(
        "--profiles",
        metavar="SPEC",
        help=(
            "per-model profiles: off (default), auto, or names "
            f"({', '.join(profile_names())}); also $STREAMREPAIR_PROFILES"
        ),
    )
    parser.add_argument(
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


def _hook_parser() -> argparse.ArgumentParser:
    parser = _LenientParser(prog="streamrepair hook HARNESS", add_help=False)
    _settings_options(parser)
    parser.add_argument(
        "--permission",
        metavar="{auto,allow,ask}",
        help="Claude Code: permission decision for repaired input (default auto)",
    )
    parser.add_argument(
        "--bridge",
        metavar="{auto,claude-code,codex}",
        help="DeepSeek Harness: the bridge running the hook (default auto)",
    )
    parser.add_argument("-h", "--help", action="store_true")
    return parser


def register(subparsers: Any) -> None:
    """Add the ``hook``, ``serve``, ``install`` and ``stats`` subcommands."""
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

    serve = subparsers.add_parser(
        "serve",
        help="run the long-lived helper the OpenCode plugin talks to (JSON lines on stdio)",
    )
    serve.add_argument("harness", choices=["opencode"])
    _settings_options(serve)
    serve.set_defaults(handler=_run_serve)

    install = subparsers.add_parser(
        "install",
        help="register the hooks or the plugin of a harness (idempotent; shows the diff)",
    )
    install.add_argument("harness", choices=["claude-code", "deepseek-harness", "opencode"])
    scope = install.add_mutually_exclusive_group()
    scope.add_argument(
        "--user",
        dest="scope",
        action="store_const",
        const="user",
        help="for every project (default)",
    )
    scope.add_argument(
        "--project",
        dest="scope",
        action="store_const",
        const="project",
        help="for the project in --project-dir only",
    )
    install.add_argument(
        "--project-dir",
        metavar="DIR",
        default=".",
        help="the project (default: the current directory)",
    )
    install.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    install.add_argument(
        "--force", action="store_true", help="replace a plugin file that is not streamrepair's"
    )
    install.set_defaults(handler=_run_install, scope="user")

    stats = subparsers.add_parser("stats", help="summarize a telemetry log per model and per rule")
    stats.add_argument("file", nargs="?", metavar="FILE", help="the log (default: the hooks' log)")
    stats.add_argument("--html", metavar="OUT", help="also write a one-page HTML report to OUT")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")
    stats.set_defaults(handler=_run_stats)


# ------------------------------------------------------------------------ settings


def _settings(
    options: argparse.Namespace, environ: Mapping[str, str], warn: Callable[[str], None]
) -> HookSettings:
    schemas: dict[str, Any] = {}
    schema_file = getattr(options, "schemas", None) or environ.get("STREAMREPAIR_SCHEMAS", "")
    if schema_file:
        try:
            schemas = dict(load_schemas(schema_file))
        except (OSError, ValueError) as exc:
            warn(f"streamrepair: schemas not loaded ({exc}); using the built-in ones")
    profiles = getattr(options, "profiles", None) or environ.get("STREAMREPAIR_PROFILES") or None
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
    return HookSettings(
        schemas=schemas,
        builtin_schemas=not getattr(options, "no_builtin_schemas", False),
        profiles=profiles,
        model=getattr(options, "model", None),
        permission=permission_value,
        bridge=bridge_value,
        environ=dict(environ),
    )


def _telemetry(
    options: argparse.Namespace, environ: Mapping[str, str], harness: str
) -> TelemetryLog:
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
    environ = dict(os.environ)
    warnings: list[str] = []
    adapter = _HOOKS.get(args.harness)
    try:
        options, unknown = _hook_parser().parse_known_args(args.options)
        if unknown:
            warnings.append(f"streamrepair: hook options ignored: {' '.join(unknown)}")
    except _OptionError as exc:  # e.g. an option without its value
        warnings.append(f"streamrepair: hook options ignored ({exc})")
        options = _hook_parser().parse_args([])
    if options.help:
        _hook_parser().print_help(sys.stderr)
        return 0
    if adapter is None:
        _emit(pass_through(f"unknown harness {args.harness!r} (claude-code, deepseek-harness)"))
        return 0
    settings = _settings(options, environ, warnings.append)
    log = _telemetry(options, environ, args.harness)
    done: list[HookAnswer] = []

    def work() -> None:
        try:
            data = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
            payload, problem = parse_payload(data)
            answer = pass_through(problem) if problem else adapter(payload, settings)
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


# ------------------------------------------------------------------------ serve


def _reply(out: IO[bytes], reply: Mapping[str, Any]) -> None:
    out.write((json.dumps(reply, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii"))
    out.flush()


def serve_lines(source: IO[bytes], out: IO[bytes], helper: OpenCodeHelper) -> int:
    """Answer JSON-line requests from ``source`` on ``out`` until end of input; requests
    with ``id: null`` (notifications) get no reply. Returns the number of requests."""
    count = 0
    while True:
        line = source.readline(MAX_REQUEST_BYTES + 1)
        if not line:
            return count
        if len(line) > MAX_REQUEST_BYTES and not line.endswith(b"\n"):
            while True:
                rest = source.readline(MAX_REQUEST_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
            _reply(out, {"id": None, "error": f"request longer than {MAX_REQUEST_BYTES} bytes"})
            continue
        if not line.strip():
            continue
        count += 1
        try:
            request = json.loads(line)
        except (ValueError, RecursionError):
            _reply(out, {"id": None, "error": "request is not JSON"})
            continue
        reply = helper.handle(request)
        if not (isinstance(request, dict) and request.get("id") is None and "error" not in reply):
            _reply(out, reply)


def _run_serve(args: argparse.Namespace) -> int:
    environ = dict(os.environ)
    settings = _settings(args, environ, lambda line: print(line, file=sys.stderr))
    helper = OpenCodeHelper(settings, telemetry=_telemetry(args, environ, "opencode"))
    try:
        serve_lines(sys.stdin.buffer, sys.stdout.buffer, helper)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    return 0


# ------------------------------------------------------------------------ install


def _show(plan: InstallPlan, dry_run: bool) -> None:
    if not plan.changed:
        print(f"{plan.path}: already up to date")
        return
    sys.stdout.write(plan.diff())
    if dry_run:
        print(f"{plan.path}: not written (--dry-run)")
    else:
        plan.apply()
        print(f"{plan.path}: written")


def _run_install(args: argparse.Namespace) -> int:
    home = Path.home()
    project = Path(args.project_dir).resolve()
    try:
        if args.harness == "claude-code":
            path = claude_code_settings_path(args.scope, home=home, project=project)
            plan = plan_hook_settings(
                path, command=hook_command("claude-code"), harness="claude-code"
            )
            _show(plan, args.dry_run)
        elif args.harness == "deepseek-harness":
            base = home / ".dsh" if args.scope == "user" else project / ".dsh"
            path = base / "streamrepair" / "hooks.json"
            plan = plan_hook_settings(
                path, command=hook_command("deepseek-harness"), harness="deepseek-harness"
            )
            _show(plan, args.dry_run)
            print(f"\nAdd this row to {base / 'cordis.patch.yml'} (then restart dsh):\n")
            print(dsh_bridge_snippet(path), end="")
        else:
            directory = opencode_plugin_dir(
                args.scope, home=home, project=project, environ=os.environ
            )
            plan = plan_opencode_plugin(directory, command=helper_command(), force=args.force)
            _show(plan, args.dry_run)
    except (InstallError, OSError) as exc:
        print(f"streamrepair install: {exc}", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------------ stats


def _run_stats(args: argparse.Namespace) -> int:
    path = Path(args.file) if args.file else telemetry_path_from_env()
    if path is None:
        print(
            "streamrepair stats: telemetry is off ($STREAMREPAIR_TELEMETRY); name a FILE",
            file=sys.stderr,
        )
        return 2
    reader = LogReader()
    builder = StatsBuilder()
    try:
        for record in reader.read_file(path):
            builder.add(record)
    except OSError as exc:
        print(f"streamrepair stats: cannot read {path}: {exc}", file=sys.stderr)
        return 1
    summary = builder.summary(skipped_lines=reader.skipped)
    if args.json:
        data = {
            "calls": summary.calls,
            "first": summary.first,
            "last": summary.last,
            "skipped_lines": summary.skipped_lines,
            "models": [
                {
                    "model": m.model,
                    "calls": m.calls,
                    "outcomes": dict(m.outcomes),
                    "rules": dict(m.rules),
                    "tools": dict(m.tools),
                    "reasons": dict(m.reasons),
                    "repaired_results": m.repaired_results,
                    "repaired_failures": m.repaired_failures,
                }
                for m in summary.models
            ],
        }
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(render_text(summary))
    if args.html:
        try:
            Path(args.html).write_text(render_html(summary), encoding="utf-8")
        except OSError as exc:
            print(f"streamrepair stats: cannot write {args.html}: {exc}", file=sys.stderr)
            return 1
    return 0
