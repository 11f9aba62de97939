"""The abort fence: numbered phases that the user can interrupt, on asyncio and trio.

Theory of operation
-------------------
closer-code's ``AbortFenceManager`` (seed ``000``) numbers each phase of a conversation
(a user turn: its requests, streams and tool runs). Aborting sets a *fence* at the
active phase: every phase whose number is at most the fence counts as aborted, any later
phase does not, so a late result from an old phase is recognised and a new turn starts
clean. Abort handlers (close a connection, kill a process, save state) run once each,
concurrently, within a timeout; one that fails or hangs cannot hold up the abort.

Here a phase is an anyio cancel scope (``async with fence.phase() as phase:``), so
aborting is cancellation and works the same on asyncio and trio:

* :meth:`AbortFence.abort` sets the fence, cancels the scope of every live phase up to
  it and runs their handlers. The phase's ``async with`` block ends quietly and
  ``phase.aborted`` is true. An :func:`~streamrepair.aiter_events` consumer inside it is
  cancelled, so the stream's calls not yet judged end ``aborted`` (none is ready);
  :func:`run_tool_calls` answers its calls ``interrupted`` or ``not_started``.
* A cancellation that comes from outside (the task is cancelled, an enclosing scope
  times out, Ctrl+C through ``anyio.open_signal_receiver``) reaching the phase is the
  same abort: the fence moves to that phase, its handlers run (shielded, within the
  timeout), and the cancellation goes on propagating.

Unlike the seed, registering a handler never runs it (``registerAbortHandler('network',
() => controller.abort())`` aborted the request at registration). Handlers belong to the
phase that was active when they were registered; a phase that ends normally drops its
handlers unrun.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import anyio
import anyio.lowlevel

from ..errors import AbortFenceError
from ..events import ToolCallReady
from .conversation import Conversation
from .replies import RunState

__all__ = [
    "DEFAULT_ABORT_TIMEOUT",
    "AbortCause",
    "AbortFence",
    "AbortHandler",
    "AbortReport",
    "FencePhase",
    "FencePhaseState",
    "HandlerOutcome",
    "HandlerStatus",
    "ToolRunner",
    "run_tool_calls",
]

#: Seconds the abort handlers get, together (closer-code's ``abortTimeout = 5000``).
DEFAULT_ABORT_TIMEOUT: Final = 5.0

#: A handler: called with no argument; if it returns an awaitable, that is awaited.
AbortHandler = Callable[[], object]
#: Runs one ready call and returns the tool's result text: ``async def runner(call) ->
#: str``, or a plain ``def runner(call) -> str`` (run in a worker thread). See
#: :func:`run_tool_calls`.
ToolRunner = Callable[[ToolCallReady], "Awaitable[str] | str"]


class FencePhaseState(enum.Enum):
    """Where a phase is."""

    #: Its ``async with`` block is running and it has not been aborted.
    ACTIVE = "active"
    #: Its block ended without an abort.
    FINISHED = "finished"
    #: An abort reached it (by :meth:`AbortFence.abort` or by cancellation).
    ABORTED = "aborted"


class AbortCause(enum.Enum):
    """What started an abort."""

    #: :meth:`AbortFence.abort` was called.
    REQUESTED = "requested"
    #: The phase's task was cancelled from outside the phase.
    CANCELLED = "cancelled"


class HandlerStatus(enum.Enum):
    """How an abort handler ended."""

    COMPLETED = "completed"
    #: It raised an exception (recorded in :attr:`HandlerOutcome.error`).
    FAILED = "failed"
    #: It was still running when the timeout ran out, and was cancelled.
    TIMED_OUT = "timed_out"


@dataclass(frozen=True, slots=True, kw_only=True)
class HandlerOutcome:
    """One handler's run: the ``phase`` it was registered on, its ``key``, how it ended
    and, if it raised, ``error`` (``"ExceptionType: message"``)."""

    phase: int
    key: str
    status: HandlerStatus
    error: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AbortReport:
    """What one abort did: the ``fence`` after it, the ``phases`` it ended (empty when
    no phase was active: nothing happened), its ``cause`` and each handler's outcome."""

    fence: int | None
    phases: tuple[int, ...]
    cause: AbortCause
    handlers: tuple[HandlerOutcome, ...] = ()

    @property
    def aborted(self) -> bool:
        """True when the abort ended at least one phase."""
        return bool(self.phases)


class FencePhase:
    """One numbered phase (see :meth:`AbortFence.phase`).

    ``number`` counts from 1 per fence; :attr:`state` says where it is; :attr:`aborted`
    is true once a fence at or past it is set (also after it ended); :attr:`report` is
    the :class:`AbortReport` of the abort that ended it.
    """

    __slots__ = ("_fence", "_handlers", "_scope", "number", "report", "state")

    def __init__(self, fence: AbortFence, number: int) -> None:
        self.number = number
        self.state = FencePhaseState.ACTIVE
        self.report: AbortReport | None = None
        self._fence = fence
        self._scope = anyio.CancelScope()
        self._handlers: dict[str, AbortHandler] = {}

    def __repr__(self) -> str:
        return f"<FencePhase {self.number} {self.state.value}>"

    @property
    def aborted(self) -> bool:
        """True when this phase counts as aborted (its number is within the fence)."""
        return self._fence.is_aborted(self.number)

    def on_abort(self, key: str, handler: AbortHandler) -> None:
        """Register ``handler`` to run if this phase is aborted; it is not called now.

        A second handler with the same key replaces the first. Raises
        :class:`AbortFenceError` unless the phase is active.
        """
        if not isinstance(key, str):
            raise TypeError("the handler key must be a str")
        if not callable(handler):
            raise TypeError("an abort handler must be callable")
        if self.state is not FencePhaseState.ACTIVE:
            raise AbortFenceError(f"phase {self.number} is {self.state.value}")
        self._handlers[key] = handler

    def remove_abort_handler(self, key: str) -> None:
        """Forget a handler (no error if there is none under ``key``)."""
        self._handlers.pop(key, None)


def _is_cancellation(exc: BaseException) -> bool:
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return True
    group = getattr(exc, "exceptions", None)
    return (
        isinstance(group, tuple)
        and bool(group)
        and all(isinstance(e, BaseException) and _is_cancellation(e) for e in group)
    )


class AbortFence:
    """Numbered phases, a fence, and abort handlers (see the module docstring).

    ``handler_timeout`` bounds, in seconds, how long the handlers of one abort may run
    together; those still running then are cancelled and reported ``timed_out``.
    """

    def __init__(self, *, handler_timeout: float = DEFAULT_ABORT_TIMEOUT) -> None:
        if (
            isinstance(handler_timeout, bool)
            or not isinstance(handler_timeout, int | float)
            or not math.isfinite(handler_timeout)
            or handler_timeout <= 0
        ):
            raise ValueError("handler_timeout must be a positive number of seconds")
        self.handler_timeout = float(handler_timeout)
        self._count = 0
        self._fence: int | None = None
        self._live: list[FencePhase] = []

    @property
    def fence(self) -> int | None:
        """The highest aborted phase number, or None before the first abort."""
        return self._fence

    @property
    def phases_started(self) -> int:
        """How many phases have begun (the last phase's number)."""
        return self._count

    @property
    def active(self) -> FencePhase | None:
        """The most recent phase that is still active, if any."""
        for phase in reversed(self._live):
            if phase.state is FencePhaseState.ACTIVE:
                return phase
        return None

    def is_aborted(self, phase: int | FencePhase) -> bool:
        """True when the fence is at or past ``phase`` (a number or a :class:`FencePhase`)."""
        number = phase.number if isinstance(phase, FencePhase) else phase
        return self._fence is not None and number <= self._fence

    def register(self, key: str, handler: AbortHandler) -> None:
        """:meth:`FencePhase.on_abort` on the active phase (:class:`AbortFenceError` if none)."""
        phase = self.active
        if phase is None:
            raise AbortFenceError("no phase is active")
        phase.on_abort(key, handler)

    def unregister(self, key: str) -> None:
        """:meth:`FencePhase.remove_abort_handler` on the active phase, if any."""
        phase = self.active
        if phase is not None:
            phase.remove_abort_handler(key)

    @contextlib.asynccontextmanager
    async def phase(self) -> AsyncIterator[FencePhase]:
        """Begin the next numbered phase, as a cancel scope around the block.

        An :meth:`abort` ends the block quietly (``phase.aborted`` is then true); a
        cancellation from outside aborts the phase the same way and then propagates.
        An exception that is not a cancellation ends the phase without an abort.
        """
        self._count += 1
        phase = FencePhase(self, self._count)
        self._live.append(phase)
        try:
            with phase._scope:
                yield phase
        except BaseException as exc:
            if _is_cancellation(exc) and phase.state is FencePhaseState.ACTIVE:
                await self._abort_up_to(phase.number, AbortCause.CANCELLED)
            raise
        finally:
            self._live.remove(phase)
            if phase.state is FencePhaseState.ACTIVE:
                phase.state = FencePhaseState.FINISHED
            phase._handlers.clear()

    async def abort(self) -> AbortReport:
        """Abort the active phase (and every earlier one still live).

        Sets the fence to the active phase's number, cancels the scopes of the live
        phases up to it, then runs their handlers once each, concurrently, for at most
        ``handler_timeout`` seconds (shielded, so cancelling the caller does not cut
        them short). Returns once the handlers are done; the aborted blocks end at
        their next checkpoint. With no active phase nothing happens (the report's
        ``phases`` is empty). Never raises because of a handler.
        """
        phase = self.active
        if phase is None:
            return AbortReport(fence=self._fence, phases=(), cause=AbortCause.REQUESTED)
        return await self._abort_up_to(phase.number, AbortCause.REQUESTED)

    async def _abort_up_to(self, number: int, cause: AbortCause) -> AbortReport:
        self._fence = number if self._fence is None else max(self._fence, number)
        ended: list[FencePhase] = []
        jobs: list[tuple[int, str, AbortHandler]] = []
        for phase in self._live:
            if phase.state is FencePhaseState.ACTIVE and phase.number <= self._fence:
                phase.state = FencePhaseState.ABORTED
                phase._scope.cancel()
                ended.append(phase)
                # Taken before anything awaits: a second abort finds nothing to run.
                jobs.extend((phase.number, key, h) for key, h in phase._handlers.items())
                phase._handlers.clear()
        outcomes = await self._run_handlers(jobs)
        report = AbortReport(
            fence=self._fence,
            phases=tuple(p.number for p in ended),
            cause=cause,
            handlers=outcomes,
        )
        for phase in ended:
            phase.report = report
        return report

    async def _run_handlers(
        self, jobs: list[tuple[int, str, AbortHandler]]
    ) -> tuple[HandlerOutcome, ...]:
        results: list[HandlerOutcome | None] = [None] * len(jobs)

        async def run(slot: int) -> None:
            number, key, handler = jobs[slot]
            try:
                result = handler()
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:  # a failing handler must not stop the others
                error = f"{type(exc).__name__}: {exc}"
                results[slot] = HandlerOutcome(
                    phase=number, key=key, status=HandlerStatus.FAILED, error=error
                )
            else:
                results[slot] = HandlerOutcome(
                    phase=number, key=key, status=HandlerStatus.COMPLETED
                )

        if jobs:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self.handler_timeout):
                async with anyio.create_task_group() as group:
                    for slot in range(len(jobs)):
                        group.start_soon(run, slot)
        return tuple(
            result
            if result is not None
            else HandlerOutcome(phase=number, key=key, status=HandlerStatus.TIMED_OUT)
            for result, (number, key, _) in zip(results, jobs, strict=True)
        )


def _runs_on_the_loop(runner: object) -> bool:
    """True for an async function (or a partial of one, or an object whose ``__call__``
    is one): it is called on the event loop; anything else runs in a worker thread."""
    method = (
        None
        if inspect.isroutine(runner)
        else inspect.getattr_static(type(runner), "__call__", None)
    )
    return inspect.iscoroutinefunction(runner) or inspect.iscoroutinefunction(method)


def _check_runner(runner: object) -> None:
    """Raise :class:`TypeError` unless ``runner`` can be called with one call.

    A callable whose signature cannot be read (some builtins and extension types) is
    taken on trust."""
    if not callable(runner):
        raise TypeError(f"runner must be callable, not {type(runner).__name__}")
    try:
        signature = inspect.signature(runner)
    except (TypeError, ValueError):  # no readable signature
        return
    try:
        signature.bind(object())
    except TypeError as exc:
        raise TypeError(
            f"the runner must take one argument, the call (runner(call) -> str, call a "
            f"ToolCallReady with .name and .arguments); {_describe(runner)}{signature} "
            f"cannot be called so: {exc}"
        ) from None


def _describe(runner: object) -> str:
    name = getattr(runner, "__qualname__", None) or getattr(runner, "__name__", None)
    return str(name) if isinstance(name, str) else type(runner).__name__


async def run_tool_calls(
    conversation: Conversation,
    runner: ToolRunner,
    *,
    max_concurrent: int | None = None,
) -> None:
    """Run every pending ready call of ``conversation`` concurrently and answer each.

    ``runner`` runs one call (a :class:`~streamrepair.ToolCallReady`: ``name``,
    ``arguments``) and returns the tool's result as ``str``. Either

    * ``async def runner(call) -> str``: awaited on the event loop; or
    * a plain function ``def runner(call) -> str`` (a lambda, ``functools.partial``...):
      run in a worker thread (``anyio.to_thread.run_sync``), so a tool that blocks
      (``subprocess.run``, file I/O) does not block the loop. If it returns an awaitable,
      that is awaited on the loop.

    Each call is marked running (:meth:`Conversation.start`) just before ``runner`` is
    called with it, then answered with the text it returns (``completed``) or with
    ``"<ExceptionType>: <message>"`` if it raises (``failed``; the other calls go on).
    When cancelled (an abort), calls that had started are answered ``interrupted``, the
    others ``not_started``, and the cancellation propagates; a plain function already
    running in its thread cannot be stopped: it is abandoned (it runs to its end in the
    background, its result unused) and answered ``interrupted``. ``max_concurrent``
    bounds how many run at once (default: all).

    A programming error is never recorded as a tool failure. A ``runner`` that is not
    callable, or whose signature cannot take one positional argument (``lambda: ...``,
    ``def run_tool(name, arguments)``), raises :class:`TypeError` before anything runs
    (nothing is started or answered). A result that is not a ``str`` raises
    :class:`TypeError` after every call of the batch is answered: that call is answered
    :attr:`RunState.UNKNOWN` (it ran, its result did not reach the model, its effects may
    have happened), the others run to their end, so the history stays sendable.
    """
    _check_runner(runner)
    if max_concurrent is not None and (
        isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int)
    ):
        raise TypeError("max_concurrent must be an int or None")
    if max_concurrent is not None and max_concurrent < 1:
        raise ValueError("max_concurrent must be at least 1")
    calls = conversation.pending
    limiter = anyio.CapacityLimiter(max_concurrent or max(len(calls), 1))
    on_loop = _runs_on_the_loop(runner)
    errors: list[TypeError] = []

    async def run(call: ToolCallReady) -> None:
        async with limiter:
            await anyio.lowlevel.checkpoint_if_cancelled()
            conversation.start(call.call_id)
            try:
                output: object
                if on_loop:
                    output = runner(call)
                else:
                    # Boxed: trio refuses a thread function whose result is awaitable.
                    (output,) = await anyio.to_thread.run_sync(
                        lambda: (runner(call),), abandon_on_cancel=True
                    )
                if inspect.isawaitable(output):
                    output = await output
            except Exception as exc:  # a cancellation is answered below, by cancel_pending
                text = f"{type(exc).__name__}: {exc}"
                conversation.answer(call.call_id, text, status=RunState.FAILED)
                return
            # Answered before leaving the limiter: its exit may be a checkpoint.
            if isinstance(output, str):
                conversation.answer(call.call_id, output)
                return
            # The harness's mistake, not the tool's: the tool ran, its result is lost.
            what = type(output).__name__
            conversation.answer(
                call.call_id,
                f"(the tool's result could not be read: the harness returned {what}, not text)",
                status=RunState.UNKNOWN,
            )
            errors.append(
                TypeError(
                    f"the runner returned {what} for call {call.call_id!r} ({call.name}); "
                    "a runner returns the tool's result as a str (the call was answered "
                    "'unknown': it ran, its result was lost)"
                )
            )

    try:
        async with anyio.create_task_group() as group:
            for call in calls:
                group.start_soon(run, call)
    except BaseException:  # an abort (or a bug): leave no call without an answer
        conversation.cancel_pending()
        raise
    if errors:
        raise errors[0]
