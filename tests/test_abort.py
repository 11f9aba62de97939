"""The abort fence: numbered phases, handlers that run once each (never at registration),
concurrently and within a timeout, and abort() meaning the same as cancelling the
consumer of aiter_events. Every async test runs on asyncio and trio."""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from streamrepair import (
    DEFAULT_ABORT_TIMEOUT,
    AbortCause,
    AbortFence,
    AbortFenceError,
    AbortReport,
    CallProgress,
    Conversation,
    FencePhase,
    FencePhaseState,
    HandlerStatus,
    ReasoningPolicy,
    RejectReason,
    RunState,
    StopReason,
    StreamEvent,
    ToolCallReady,
    ToolCallStream,
    aiter_events,
    check_history,
    iter_events,
    run_tool_calls,
)

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parent.parent
KEEP = ReasoningPolicy.KEEP_FOR_TOOL_CALLS


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def call_chunks(index: int, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    head = {"index": index, "id": call_id, "function": {"name": name, "arguments": ""}}
    return [
        chunk({"tool_calls": [head]}),
        chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}),
    ]


class StallingSource:
    """An async chunk source that yields its chunks, then waits until it is closed."""

    def __init__(self, chunks: list[dict[str, Any]]) -> None:
        self.chunks = list(chunks)
        self.stalled = anyio.Event()
        self.closed = 0

    def __aiter__(self) -> StallingSource:
        return self

    async def __anext__(self) -> dict[str, Any]:
        if self.chunks:
            await anyio.lowlevel.checkpoint()
            return self.chunks.pop(0)
        self.stalled.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        self.closed += 1


PARTIAL = [
    chunk({"role": "assistant", "reasoning_content": "Both."}),
    *call_chunks(0, "call_a", "get_weather", '{"city": "Hangzhou"}'),
    *call_chunks(1, "call_b", "get_weather", '{"city": "Suz'),
]


# -- phases and the fence ------------------------------------------------------------------


async def test_phases_are_numbered_and_the_fence_covers_every_phase_up_to_it() -> None:
    fence = AbortFence()
    assert fence.fence is None
    assert fence.active is None
    assert fence.phases_started == 0
    async with fence.phase() as first:
        assert first.number == 1
        assert fence.active is first
    assert first.state is FencePhaseState.FINISHED
    assert not first.aborted
    async with fence.phase() as second:
        async with fence.phase() as third:  # nested: a tool run inside the turn
            assert fence.active is third
            report = await fence.abort()
            assert third.state is FencePhaseState.ABORTED
            await anyio.sleep_forever()  # cancelled here
        assert report.phases == (2, 3)
        assert report.fence == 3
        await anyio.sleep_forever()
    assert fence.fence == 3
    assert (first.aborted, second.aborted, third.aborted) == (True, True, True)
    assert first.state is FencePhaseState.FINISHED  # it had ended; it still counts as aborted
    assert second.state is third.state is FencePhaseState.ABORTED
    assert second.report is third.report is report
    assert fence.is_aborted(1)
    assert fence.is_aborted(third)
    assert not fence.is_aborted(4)
    async with fence.phase() as fourth:  # the next turn starts clean
        assert fourth.number == 4
        assert not fourth.aborted
        await anyio.sleep(0)
    assert fourth.state is FencePhaseState.FINISHED
    assert not fourth.aborted


async def test_a_late_result_of_an_aborted_phase_is_recognised() -> None:
    fence = AbortFence()
    results: list[tuple[int, str]] = []
    finish_tool = anyio.Event()

    async def tool(phase_number: int) -> None:  # runs outside the phase's scope
        await finish_tool.wait()
        if not fence.is_aborted(phase_number):
            results.append((phase_number, "kept"))

    async with anyio.create_task_group() as group:
        async with fence.phase() as phase:
            group.start_soon(tool, phase.number)
            await fence.abort()
        async with fence.phase() as later:
            group.start_soon(tool, later.number)
        finish_tool.set()
    assert results == [(2, "kept")]


async def test_abort_with_no_active_phase_does_nothing() -> None:
    fence = AbortFence()
    report = await fence.abort()
    assert report == AbortReport(fence=None, phases=(), cause=AbortCause.REQUESTED)
    assert not report.aborted
    async with fence.phase():
        pass
    assert (await fence.abort()).phases == ()
    assert fence.fence is None


async def test_an_error_in_a_phase_is_not_an_abort() -> None:
    fence = AbortFence()
    ran: list[str] = []
    phases: list[FencePhase] = []

    async def failing_turn() -> None:
        async with fence.phase() as phase:
            phases.append(phase)
            phase.on_abort("h", lambda: ran.append("h"))
            raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        await failing_turn()
    (phase,) = phases
    assert phase.state is FencePhaseState.FINISHED
    assert not phase.aborted
    assert fence.fence is None
    assert ran == []


# -- handlers ------------------------------------------------------------------------------


class Controller:  # like the seed's AbortController
    def __init__(self) -> None:
        self.aborted = 0

    def abort(self) -> None:
        self.aborted += 1


async def test_registering_a_handler_does_not_run_it_and_abort_runs_it_once() -> None:
    fence = AbortFence()
    controller = Controller()
    calls: list[str] = []

    async def save_state() -> None:
        calls.append("save")

    async with fence.phase() as phase:
        phase.on_abort("network", controller.abort)  # the seed aborted the request here
        fence.register("save-state", save_state)
        assert controller.aborted == 0
        assert calls == []
        first = await fence.abort()
        second = await fence.abort()  # Ctrl+C twice
    assert controller.aborted == 1
    assert calls == ["save"]
    assert [(h.phase, h.key, h.status) for h in first.handlers] == [
        (1, "network", HandlerStatus.COMPLETED),
        (1, "save-state", HandlerStatus.COMPLETED),
    ]
    assert second.phases == ()
    assert second.handlers == ()


async def test_a_phase_that_ends_normally_drops_its_handlers_unrun() -> None:
    fence = AbortFence()
    ran: list[str] = []
    async with fence.phase() as phase:
        phase.on_abort("a", lambda: ran.append("a"))
        phase.on_abort("b", lambda: ran.append("b"))
        phase.on_abort("b", lambda: ran.append("b2"))  # same key: replaced
        fence.unregister("a")
    async with fence.phase():
        report = await fence.abort()
    assert ran == []
    assert report.handlers == ()
    with pytest.raises(AbortFenceError):
        phase.on_abort("late", lambda: None)
    with pytest.raises(AbortFenceError):
        fence.register("none active", lambda: None)
    async with fence.phase() as third:
        third.on_abort("b", lambda: ran.append("b3"))
        third.remove_abort_handler("b")
        third.remove_abort_handler("missing")
        fence.unregister("missing")
        with pytest.raises(TypeError):
            third.on_abort("x", "not callable")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            third.on_abort(1, lambda: None)  # type: ignore[arg-type]
        await fence.abort()
    assert ran == []


async def test_handlers_run_concurrently() -> None:
    # Each waits for the other: run one after the other, they would time out.
    fence = AbortFence()
    first_ran, second_ran = anyio.Event(), anyio.Event()

    async def first() -> None:
        first_ran.set()
        await second_ran.wait()

    async def second() -> None:
        second_ran.set()
        await first_ran.wait()

    async with fence.phase() as phase:
        phase.on_abort("first", first)
        phase.on_abort("second", second)
        report = await fence.abort()
    assert [h.status for h in report.handlers] == [HandlerStatus.COMPLETED] * 2


async def test_a_failing_or_hanging_handler_cannot_block_the_abort() -> None:
    fence = AbortFence(handler_timeout=0.05)
    done: list[str] = []

    async def hangs() -> None:
        await anyio.sleep_forever()

    def fails() -> None:
        raise RuntimeError("boom")

    async def works() -> None:
        await anyio.sleep(0)
        done.append("works")

    async with fence.phase() as phase:
        phase.on_abort("hangs", hangs)
        phase.on_abort("fails", fails)
        phase.on_abort("works", works)
        phase.on_abort("coroutine", lambda: works())
        report = await fence.abort()
    assert [(h.key, h.status, h.error) for h in report.handlers] == [
        ("hangs", HandlerStatus.TIMED_OUT, ""),
        ("fails", HandlerStatus.FAILED, "RuntimeError: boom"),
        ("works", HandlerStatus.COMPLETED, ""),
        ("coroutine", HandlerStatus.COMPLETED, ""),
    ]
    assert done == ["works", "works"]
    assert phase.aborted


async def test_handlers_finish_even_if_the_caller_of_abort_is_cancelled() -> None:
    fence = AbortFence()
    finished: list[str] = []
    with anyio.CancelScope() as caller:

        async def slow_cleanup() -> None:
            caller.cancel()  # the caller of abort() is cancelled while handlers run
            await anyio.sleep(0)
            await anyio.sleep(0)
            finished.append("cleanup")

        async with fence.phase() as phase:
            phase.on_abort("cleanup", slow_cleanup)
            report = await fence.abort()
    assert finished == ["cleanup"]
    assert report.handlers[0].status is HandlerStatus.COMPLETED


@pytest.mark.parametrize("timeout", [0, -1, math.inf, math.nan, True, "5"])
def test_the_handler_timeout_is_validated(timeout: Any) -> None:
    with pytest.raises(ValueError, match="positive"):
        AbortFence(handler_timeout=timeout)
    assert AbortFence().handler_timeout == DEFAULT_ABORT_TIMEOUT == 5.0


# -- abort() and cancellation mean the same thing ------------------------------------------


class Run:
    """What one consumer run left behind."""

    def __init__(self) -> None:
        self.phase: FencePhase | None = None
        self.core = ToolCallStream()
        self.seen: list[StreamEvent] = []
        self.ran: list[int] = []  # phases whose abort handler ran


async def consume(fence: AbortFence, source: StallingSource, run: Run) -> None:
    async with fence.phase() as phase:
        run.phase = phase
        phase.on_abort("stop-ui", lambda: run.ran.append(phase.number))
        async with aiter_events(source, core=run.core) as events:
            async for event in events:
                run.seen.append(event)


async def stop_by_abort(fence: AbortFence, source: StallingSource, run: Run) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(consume, fence, source, run)
        await source.stalled.wait()
        await fence.abort()


async def stop_by_cancel_scope(fence: AbortFence, source: StallingSource, run: Run) -> None:
    with anyio.CancelScope() as outer:  # e.g. the UI's task group is torn down

        async def stop_when_stalled() -> None:
            await source.stalled.wait()
            outer.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(stop_when_stalled)
            await consume(fence, source, run)
            pytest.fail("the cancellation must go on propagating")
    assert outer.cancelled_caught


async def stop_by_task_cancel(fence: AbortFence, source: StallingSource, run: Run) -> None:
    task = asyncio.get_running_loop().create_task(consume(fence, source, run))
    await source.stalled.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize(
    ("stop", "cause"),
    [
        (stop_by_abort, AbortCause.REQUESTED),
        (stop_by_cancel_scope, AbortCause.CANCELLED),
        (stop_by_task_cancel, AbortCause.CANCELLED),
    ],
)
async def test_abort_and_cancelling_the_consumer_mean_the_same_thing(
    stop: Any, cause: AbortCause, anyio_backend: str
) -> None:
    if stop is stop_by_task_cancel and anyio_backend != "asyncio":
        pytest.skip("asyncio's own Task.cancel()")
    fence = AbortFence()
    source = StallingSource(PARTIAL)
    run = Run()
    await stop(fence, source, run)
    phase = run.phase
    assert phase is not None
    assert phase.report is not None
    assert phase.report.cause is cause
    assert phase.report.phases == (1,)
    assert fence.fence == 1
    assert phase.aborted
    assert phase.state is FencePhaseState.ABORTED
    assert fence.active is None
    assert run.ran == [1]  # the handler ran, once
    assert source.closed == 1  # the source was closed
    done = run.core.done
    assert done is not None
    assert done.stop_reason is StopReason.ABORTED
    assert [p for _, _, p in run.core.calls] == [CallProgress.REJECTED, CallProgress.REJECTED]
    assert not any(isinstance(e, ToolCallReady) for e in run.seen)  # not even the complete one
    assert "tool_calls" not in done.messages[0]
    # The history records the partial turn; both calls are answered as aborted.
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("weather?")
    batch = conversation.add_response(run.seen, core=run.core)
    assert [(c.call_id, c.reason) for c in batch.rejected] == [
        ("call_a", RejectReason.ABORTED),
        ("call_b", RejectReason.ABORTED),
    ]
    conversation.add_user("never mind")
    assert check_history(conversation.messages(), policy=KEEP) == ()
    async with fence.phase() as next_turn:
        assert not next_turn.aborted


# -- running the calls ---------------------------------------------------------------------


def ready_conversation(*names: str) -> Conversation:
    core = ToolCallStream()
    chunks = [chunk({"role": "assistant", "reasoning_content": "Go."})]
    for i, name in enumerate(names):
        chunks += call_chunks(i, f"call_{i}", name, "{}")
    chunks.append(chunk({}, "tool_calls"))
    events = [e for c in chunks for e in core.feed(c)] + core.finish()
    conversation = Conversation("deepseek-v4-flash")
    conversation.add_user("go")
    conversation.add_response(events)
    return conversation


async def test_run_tool_calls_runs_parallel_calls_and_answers_each() -> None:
    conversation = ready_conversation("ok", "boom", "ok")
    both_running = [anyio.Event(), anyio.Event()]

    async def runner(call: ToolCallReady) -> str:
        if call.name == "boom":
            raise OSError("disk full")
        index = int(call.call_id[-1]) // 2
        both_running[index].set()
        await both_running[1 - index].wait()  # the two "ok" calls run at the same time
        return f"done {call.call_id}"

    await run_tool_calls(conversation, runner)
    assert conversation.pending == ()
    tools = [m["content"] for m in conversation.messages() if m["role"] == "tool"]
    assert tools[0] == "done call_0"
    assert tools[1].startswith("[streamrepair: boom failed; status: failed]")
    assert tools[1].endswith("\nOSError: disk full")
    assert tools[2] == "done call_2"


def tool_answers(conversation: Conversation) -> list[str]:
    return [m["content"] for m in conversation.messages() if m["role"] == "tool"]


async def test_a_plain_function_is_a_runner() -> None:
    # The example: a lambda returning text used to be answered `failed` with
    # "object str can't be used in 'await' expression".
    conversation = ready_conversation("a", "b")
    await run_tool_calls(conversation, lambda call: f"x {call.call_id}")
    assert tool_answers(conversation) == ["x call_0", "x call_1"]
    assert check_history(conversation.messages(), policy=KEEP) == ()


async def test_plain_functions_run_in_worker_threads_and_do_not_block_the_loop() -> None:
    conversation = ready_conversation("slow", "slow")
    loop_thread = threading.get_ident()
    barrier = threading.Barrier(2, timeout=10)  # both must be running at once
    threads: list[int] = []
    ticks = 0

    def runner(call: ToolCallReady) -> str:
        threads.append(threading.get_ident())
        barrier.wait()  # blocks its thread, as subprocess.run would
        time.sleep(0.2)
        return call.call_id

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.005)

    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        await run_tool_calls(conversation, runner)
        group.cancel_scope.cancel()
    assert tool_answers(conversation) == ["call_0", "call_1"]
    assert loop_thread not in threads
    assert len(set(threads)) == 2
    assert ticks > 3  # the loop went on while the tools blocked


async def test_a_plain_function_returning_an_awaitable_has_it_awaited() -> None:
    conversation = ready_conversation("a")

    async def work(call: ToolCallReady) -> str:
        await anyio.sleep(0)
        return "awaited"

    await run_tool_calls(conversation, lambda call: work(call))
    assert tool_answers(conversation) == ["awaited"]


async def test_async_callables_of_every_shape_run_on_the_loop() -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []

    class Tools:
        async def __call__(self, call: ToolCallReady) -> str:
            seen.append(threading.get_ident())
            return "object"

    async def named(call: ToolCallReady, *, prefix: str) -> str:
        seen.append(threading.get_ident())
        return prefix

    for runner, text in (
        (Tools(), "object"),
        (functools.partial(named, prefix="partial"), "partial"),
    ):
        conversation = ready_conversation("a")
        await run_tool_calls(conversation, runner)
        assert tool_answers(conversation) == [text]
    assert seen == [loop_thread, loop_thread]


async def test_a_runner_that_is_not_callable_is_refused_up_front() -> None:
    conversation = ready_conversation("a")
    with pytest.raises(TypeError, match="runner must be callable"):
        await run_tool_calls(conversation, "not a function")  # type: ignore[arg-type]
    assert [c.call_id for c in conversation.pending] == ["call_0"]  # nothing started
    assert conversation.status("call_0") is RunState.PENDING


@pytest.mark.parametrize("sync", [False, True])
async def test_a_result_that_is_not_text_is_a_programming_error(sync: bool) -> None:
    # Not the tool's failure: the harness returned something else than text. It is
    # raised, never told to the model as "the tool failed"; the other calls finish and
    # the history stays sendable.
    conversation = ready_conversation("ok", "wrong", "ok")

    def plain(call: ToolCallReady) -> Any:
        return 42 if call.name == "wrong" else "fine"

    async def coroutine(call: ToolCallReady) -> Any:
        await anyio.sleep(0.01 if call.name == "ok" else 0)
        return plain(call)

    with pytest.raises(TypeError, match=r"returned int for call 'call_1' \(wrong\)"):
        await run_tool_calls(conversation, plain if sync else coroutine)
    assert conversation.pending == ()
    answers = tool_answers(conversation)
    assert answers[0] == "fine"
    assert answers[1] == (
        "[streamrepair: wrong ran but its result was lost; status: unknown]\n"
        "It ran, but its result could not be passed on, so what it did is not known: "
        "some of its effects may have happened. Check before repeating it.\n"
        "(the tool's result could not be read: the harness returned int, not text)"
    )
    assert answers[2] == "fine"
    # Neither a failure (it may have worked) nor an interruption (nobody stopped it).
    assert "failed" not in answers[1]
    assert "interrupt" not in answers[1]
    assert check_history(conversation.messages(), policy=KEEP) == ()


@pytest.mark.parametrize("provider", ["anthropic", "responses"])
async def test_a_lost_result_is_answered_unknown_in_every_protocol(provider: str) -> None:
    stream = {
        "anthropic": "fixtures/sse/anthropic-thinking-tool-use.sse",
        "responses": "fixtures/sse/responses-function-call.sse",
    }[provider]
    conversation = Conversation("m", provider=provider)
    conversation.add_user("go")
    conversation.add_response(iter_events(ROOT / stream))
    assert len(conversation.pending) == 1
    with pytest.raises(TypeError, match="returned NoneType"):
        await run_tool_calls(conversation, lambda call: None)
    assert conversation.pending == ()
    assert conversation.check() == ()
    answer = conversation.messages()[-1]
    if provider == "anthropic":
        (block,) = answer["content"]
        assert block["is_error"] is True
        assert "status: unknown" in block["content"]
    else:
        assert "status: unknown" in answer["output"]


async def runner_with_name_and_arguments(name: str, arguments: dict[str, Any]) -> str:
    return "never run"


class NoArguments:
    def __call__(self) -> str:
        return "never run"


@pytest.mark.parametrize(
    "runner",
    [
        lambda: "x",
        lambda name, arguments: "x",
        runner_with_name_and_arguments,
        functools.partial(runner_with_name_and_arguments, "bound name", {}),
        NoArguments(),
        lambda *, call: "x",
    ],
    ids=[
        "no-argument",
        "two-arguments",
        "name-and-arguments",
        "partial-all-bound",
        "object",
        "keyword-only",
    ],
)
async def test_a_runner_with_the_wrong_signature_is_refused_before_anything_runs(
    runner: Any,
) -> None:
    # The issue: such a runner used to answer every call "failed ... some of its effects
    # may have happened" with the TypeError text: a programming error told as a failure.
    conversation = ready_conversation("a", "b")
    before = conversation.history
    with pytest.raises(TypeError, match=r"the runner must take one argument, the call"):
        await run_tool_calls(conversation, runner)
    assert [c.call_id for c in conversation.pending] == ["call_0", "call_1"]
    assert conversation.status("call_0") is RunState.PENDING  # not started
    assert conversation.history == before  # nothing answered


@pytest.mark.parametrize(
    "runner",
    [
        lambda call, *rest: "x",
        lambda *calls: "x",
        lambda call, extra=1: "x",
        functools.partial(lambda prefix, call: prefix + "x", ""),
        str,  # a class: its constructor takes the call
    ],
    ids=["extra-varargs", "varargs-only", "default", "partial", "class"],
)
async def test_every_runner_that_takes_one_call_is_accepted(runner: Any) -> None:
    conversation = ready_conversation("a")
    await run_tool_calls(conversation, runner)
    assert conversation.pending == ()
    (answer,) = tool_answers(conversation)
    assert not answer.startswith("[streamrepair:")  # completed: the output as is


async def test_an_abort_leaves_a_blocking_tool_behind_and_answers_it_interrupted() -> None:
    conversation = ready_conversation("blocking")
    fence = AbortFence()
    started = threading.Event()
    release = threading.Event()
    finished: list[str] = []

    def runner(call: ToolCallReady) -> str:
        started.set()
        release.wait(10)
        finished.append(call.call_id)
        return "late result"

    async def press_stop() -> None:
        await anyio.to_thread.run_sync(started.wait, 10)
        await fence.abort()

    async with anyio.create_task_group() as group:
        group.start_soon(press_stop)
        async with fence.phase() as phase:
            await run_tool_calls(conversation, runner)
    assert phase.aborted
    assert finished == []  # the abort did not wait for the thread
    (answer,) = tool_answers(conversation)
    assert answer.startswith("[streamrepair: blocking was interrupted; status: interrupted]")
    release.set()
    await anyio.to_thread.run_sync(lambda: None)  # let the abandoned thread go on
    for _ in range(200):
        if finished:
            break
        await anyio.sleep(0.01)
    assert finished == ["call_0"]
    assert tool_answers(conversation) == [answer]  # its late result changed nothing


async def test_an_abort_while_calls_run_reports_each_call_with_its_state() -> None:
    conversation = ready_conversation("fast", "slow", "broken")
    fence = AbortFence()
    slow_started = anyio.Event()

    async def runner(call: ToolCallReady) -> str:
        if call.name == "broken":
            raise ValueError("bad")
        if call.name == "slow":
            slow_started.set()
            await anyio.sleep_forever()
        return "fast result"

    async def press_stop() -> None:
        await slow_started.wait()
        while conversation.status("call_0") is not RunState.COMPLETED or (
            conversation.status("call_2") is not RunState.FAILED
        ):
            await anyio.sleep(0)
        await fence.abort()

    async with anyio.create_task_group() as group:
        group.start_soon(press_stop)
        async with fence.phase() as phase:
            await run_tool_calls(conversation, runner)
    assert phase.aborted
    tools = [m["content"] for m in conversation.messages() if m["role"] == "tool"]
    assert tools[0] == "fast result"
    assert tools[1].startswith("[streamrepair: slow was interrupted; status: interrupted]")
    assert tools[2].startswith("[streamrepair: broken failed; status: failed]")


async def test_calls_that_had_not_started_are_not_started() -> None:
    conversation = ready_conversation("slow", "slow")
    fence = AbortFence()
    started = anyio.Event()

    async def runner(call: ToolCallReady) -> str:
        started.set()
        await anyio.sleep_forever()
        return ""

    async with anyio.create_task_group() as group:

        async def press_stop() -> None:
            await started.wait()
            await fence.abort()

        group.start_soon(press_stop)
        async with fence.phase():
            await run_tool_calls(conversation, runner, max_concurrent=1)
    statuses = sorted(
        m["content"].split("status: ")[1].split("]")[0]
        for m in conversation.messages()
        if m["role"] == "tool"
    )
    assert statuses == ["interrupted", "not_started"]  # whichever got the slot started


async def test_nothing_starts_in_a_phase_already_aborted() -> None:
    conversation = ready_conversation("a", "b")
    fence = AbortFence()
    started: list[str] = []

    async def runner(call: ToolCallReady) -> str:
        started.append(call.call_id)
        return "x"

    async with fence.phase():
        await fence.abort()
        await run_tool_calls(conversation, runner)
    assert started == []
    assert all(
        "status: not_started" in m["content"]
        for m in conversation.messages()
        if m["role"] == "tool"
    )


async def test_run_tool_calls_validates_its_bound() -> None:
    conversation = ready_conversation("a")

    async def runner(call: ToolCallReady) -> str:
        return "x"

    with pytest.raises(ValueError, match="at least 1"):
        await run_tool_calls(conversation, runner, max_concurrent=0)
    with pytest.raises(TypeError):
        await run_tool_calls(conversation, runner, max_concurrent=True)
    await run_tool_calls(conversation, runner)
    await run_tool_calls(conversation, runner)  # nothing pending: nothing to do
    assert [m["content"] for m in conversation.messages() if m["role"] == "tool"] == ["x"]
