"""``streamrepair serve opencode | install | stats``: the harness integrations' drivers.

These are thin: they read input within bounds, call the sans-IO adapters in
:mod:`streamrepair.integrations`, print, and write telemetry. ``streamrepair hook`` lives
in :mod:`.hook`, apart, so that a hook process imports only what one call needs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Final

from ..errors import InstallError
from ..integrations.hooks import MAX_PAYLOAD_BYTES
from ..integrations.install import (
    HERMES_ENABLE_COMMAND,
    InstallPlan,
    claude_code_settings_path,
    dsh_bridge_snippet,
    helper_command,
    hermes_plugin_dir,
    hook_command,
    opencode_plugin_dir,
    plan_hermes_plugin,
    plan_hook_settings,
    plan_opencode_plugin,
)
from ..integrations.opencode import OpenCodeHelper
from ..integrations.report import render_html, render_text
from ..telemetry.record import telemetry_path_from_env
from ..telemetry.stats import LogReader, StatsBuilder
from .hook import settings, settings_options, telemetry_log

__all__ = ["MAX_REQUEST_BYTES", "register", "serve_lines"]

#: Longest request line the OpenCode helper reads.
MAX_REQUEST_BYTES: Final = MAX_PAYLOAD_BYTES + 2**20


def register(subparsers: Any) -> None:
    """Add the ``serve``, ``install`` and ``stats`` subcommands."""
    serve = subparsers.add_parser(
        "serve",
        help="run the repairing proxy (serve --upstream URL) or the OpenCode plugin's helper "
        "(serve opencode)",
        description="Two long-lived services. 'streamrepair serve --upstream URL' runs the "
        "repairing proxy: point any harness at it (OPENAI_BASE_URL=http://127.0.0.1:8787/v1, "
        "ANTHROPIC_BASE_URL=http://127.0.0.1:8787) and tool-call arguments are repaired in "
        "the stream (needs the serve extra; see docs/proxy.md). 'streamrepair serve "
        "opencode' runs the helper the OpenCode plugin talks to (JSON lines on stdio).",
    )
    serve.add_argument(
        "harness",
        nargs="?",
        choices=["opencode"],
        help="opencode: the OpenCode plugin's helper (omit it with --upstream)",
    )
    helper = serve.add_argument_group(
        "OpenCode helper only (streamrepair serve opencode; refused with --upstream)"
    )
    settings_options(
        serve,
        helper=helper,
        schemas_help=(
            ". The proxy (--upstream) uses them for tools a request does not list (Claude "
            "Code's deferred MCP tools): their calls get the schema rules too; a file that "
            "cannot be read stops it at start"
        ),
    )
    from .proxy import add_proxy_options  # light: no serve-extra imports

    add_proxy_options(serve)
    serve.set_defaults(handler=_run_serve)

    install = subparsers.add_parser(
        "install",
        help="register the hooks or the plugin of a harness (idempotent; shows the diff)",
        description="Register streamrepair with a harness. claude-code: PreToolUse and "
        "PostToolUse hook entries in Claude Code's settings.json; deepseek-harness: the same "
        "hooks in .dsh/streamrepair/hooks.json, and the row to add to .dsh/cordis.patch.yml "
        "(printed); opencode: the plugin file in OpenCode's plugins directory (it starts "
        "'streamrepair serve opencode'); hermes: the plugin directory, then 'hermes plugins "
        "enable streamrepair'. Only streamrepair's own entries and files are written, "
        "everything else is kept; each change is shown as a diff, and a second run changes "
        "nothing. --user (the default) installs for every project, --project for the one in "
        "--project-dir.",
        epilog="exit status: 0 installed (or already up to date), 1 a file could not be read "
        "or written safely (nothing is overwritten) or 'hermes plugins enable' failed, 2 "
        "usage error.",
    )
    install.add_argument(
        "harness", choices=["claude-code", "deepseek-harness", "opencode", "hermes"]
    )
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
    install.add_argument(
        "--schemas",
        metavar="FILE",
        help=(
            "claude-code, deepseek-harness: the hook reads these tool schemas (see "
            "`streamrepair schemas`); the path is made absolute"
        ),
    )
    install.add_argument(
        "--no-enable",
        dest="enable",
        action="store_false",
        help="hermes: write the plugin but do not run `hermes plugins enable streamrepair`",
    )
    install.set_defaults(handler=_run_install, scope="user")

    stats = subparsers.add_parser(
        "stats",
        help="summarize a telemetry log per model and per rule",
        description="Summarize the repair telemetry log: per model, how many tool calls "
        "were clean, repaired, guided or rejected, which rules fired, and for which tools. "
        "The hooks and plugins that 'streamrepair install' registers append one line per "
        "tool call to the log named by $STREAMREPAIR_TELEMETRY, by default "
        "~/.local/state/streamrepair/telemetry.jsonl; argument contents are never in it "
        "unless asked for. See docs/telemetry.md.",
        epilog="exit status: 0 summarized, 1 the log cannot be read (none yet, or not "
        "readable) or the report cannot be written, 2 usage error, or telemetry is off "
        "($STREAMREPAIR_TELEMETRY=off) and no FILE is named.",
    )
    stats.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="the log, read with its rotated files FILE.1, FILE.2, ... (default: the hooks' log)",
    )
    stats.add_argument("--html", metavar="OUT", help="also write a one-page HTML report to OUT")
    stats.add_argument("--json", action="store_true", help="print the summary as JSON")
    stats.set_defaults(handler=_run_stats)


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
    if args.harness is None:
        if not args.upstream:
            print(
                "streamrepair serve: give --upstream URL (the proxy) or 'opencode'",
                file=sys.stderr,
            )
            return 2
        from .proxy import run_proxy

        return run_proxy(args, telemetry_log(args, environ, "proxy"))
    if args.upstream:
        print("streamrepair serve: --upstream is for the proxy, not opencode", file=sys.stderr)
        return 2
    hook_settings = settings(args, environ, lambda line: print(line, file=sys.stderr))
    helper = OpenCodeHelper(hook_settings, telemetry=telemetry_log(args, environ, "opencode"))
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
    options: list[str] = []
    if args.schemas:
        if args.harness not in ("claude-code", "deepseek-harness"):
            print(
                f"streamrepair install: --schemas is for the hooks, not {args.harness}",
                file=sys.stderr,
            )
            return 2
        options = [
            "--schemas",
            os.pathsep.join(str(Path(p).resolve()) for p in args.schemas.split(os.pathsep) if p),
        ]
    try:
        if args.harness == "claude-code":
            path = claude_code_settings_path(args.scope, home=home, project=project)
            plan = plan_hook_settings(
                path, command=hook_command("claude-code", options=options), harness="claude-code"
            )
            _show(plan, args.dry_run)
        elif args.harness == "deepseek-harness":
            base = home / ".dsh" if args.scope == "user" else project / ".dsh"
            path = base / "streamrepair" / "hooks.json"
            plan = plan_hook_settings(
                path,
                command=hook_command("deepseek-harness", options=options),
                harness="deepseek-harness",
            )
            _show(plan, args.dry_run)
            print(f"\nAdd this row to {base / 'cordis.patch.yml'} (then restart dsh):\n")
            print(dsh_bridge_snippet(path), end="")
        elif args.harness == "hermes":
            directory = hermes_plugin_dir(
                args.scope, home=home, project=project, environ=os.environ
            )
            for plan in plan_hermes_plugin(directory, force=args.force):
                _show(plan, args.dry_run)
            return _enable_hermes(args.scope, project, dry_run=args.dry_run or not args.enable)
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


def _script_python(script: str) -> str | None:
    """The interpreter a console script runs with (its ``#!`` line), if it names one."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    return words[0] if words and os.path.isabs(words[0]) and "python" in words[0] else None


def _enable_hermes(scope: str, project: Path, *, dry_run: bool) -> int:
    """List the plugin in Hermes's ``plugins.enabled`` with Hermes's own command, and
    check that Hermes's Python can import streamrepair."""
    command = " ".join(HERMES_ENABLE_COMMAND)
    env = dict(os.environ)
    if scope == "project":
        env["HERMES_ENABLE_PROJECT_PLUGINS"] = "1"
        print("Hermes loads project plugins only with HERMES_ENABLE_PROJECT_PLUGINS=1.")
    hermes = shutil.which("hermes")
    if dry_run or hermes is None:
        why = "not run" if dry_run else "hermes is not on PATH here"
        print(f"Then enable it ({why}): {command}")
        return 0
    done = subprocess.run(
        [hermes, *HERMES_ENABLE_COMMAND[1:]],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=300,
        check=False,
    )
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        print(f"streamrepair install: `{command}` failed:\n{tail}", file=sys.stderr)
        return 1
    python = _script_python(hermes)
    if python is not None:
        check = subprocess.run(
            [python, "-c", "import streamrepair.integrations.hermes_plugin"],
            capture_output=True,
            env=env,
            timeout=120,
            check=False,
        )
        if check.returncode != 0:
            checkout = _checkout()
            print(
                f"warning: Hermes's Python ({python}) cannot import streamrepair, so the "
                f"plugin stays inactive: install it there from a checkout ({python} -m pip "
                f"install -e {checkout}, or pipx inject hermes-agent {checkout}, or uv tool "
                f"install hermes-agent --with {checkout})",
                file=sys.stderr,
            )
    return 0


def _checkout() -> str:
    """Where this streamrepair was installed from, for an install hint: its source
    checkout when it is an editable install, else a placeholder (it is on no package
    index yet)."""
    root = Path(__file__).resolve().parents[3]
    if (root / "pyproject.toml").is_file() and (root / "src" / "streamrepair").is_dir():
        return str(root)
    return "/path/to/streamrepair"


# ------------------------------------------------------------------------ stats


def _run_stats(args: argparse.Namespace) -> int:
    named = bool(args.file)
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
        for record in reader.read_log(path):
            builder.add(record)
    except FileNotFoundError:
        if named:
            why = "no such file"
        else:
            why = (
                "there is no telemetry log yet. The hooks and plugins that 'streamrepair "
                "install' registers write one line there per tool call they see; name a FILE "
                "to read another log"
            )
        print(f"streamrepair stats: cannot read {path}: {why}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"streamrepair stats: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
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
