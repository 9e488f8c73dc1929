"""The async guard and async twins: the event loop keeps running while a call waits for a person."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from conftest import USER, Person, conv_id
from tollgate import ApprovalTimeout, Tollgate, ToolCallRejected, current_run


def test_an_async_guarded_function_waits_without_blocking_the_loop_and_runs_once_approved(agent: Tollgate, ann: Person, started: list[threading.Thread]) -> None:
    async def main() -> tuple[str, list[str], list[Any]]:
        conv = await agent.aconversation(conv_id("async"), user=USER)
        order: list[str] = []
        receipts: list[Any] = []

        @conv.guard("delete_source")
        async def delete_source(id: str) -> str:
            run = current_run()
            receipts.append(run and run.tool_call["status"])
            await asyncio.sleep(0)
            order.append(f"ran {id}")
            return f"deleted {id}"

        def approve(person: Person, call: dict[str, Any]) -> None:
            order.append("approved")
            person.client.approve(call["id"], arguments={"id": "src_8"})

        ticking = True

        async def ticker() -> None:
            while ticking:
                order.append("tick") if "tick" not in order else None
                await asyncio.sleep(0.01)

        tick = asyncio.create_task(ticker())
        started.append(ann.decide_in_background(conv.id, approve))
        result = await delete_source(id="src_7")
        ticking = False
        await tick
        return result, order, receipts

    result, order, statuses = asyncio.run(main())
    assert result == "deleted src_8"
    # The loop ran other tasks while the call waited; the function ran only after the approval.
    assert order.index("tick") < order.index("ran src_8")
    assert order.index("approved") < order.index("ran src_8")
    assert statuses == ["executed"]


def test_an_async_guard_raises_the_refusal(agent: Tollgate, ann: Person, started: list[threading.Thread]) -> None:
    async def main() -> None:
        conv = await agent.aconversation(conv_id("async-reject"), user=USER)

        @conv.guard("delete_source")
        async def delete_source(id: str) -> None:
            raise AssertionError("a rejected call must never run")

        started.append(ann.decide_in_background(conv.id, lambda p, c: p.client.reject(c["id"], reason="not today")))
        await delete_source(id="src_1")

    with pytest.raises(ToolCallRejected, match="^delete_source was rejected by Ann via web: not today$"):
        asyncio.run(main())


def test_async_twins_of_request_approval(agent: Tollgate) -> None:
    async def main() -> list[str]:
        conv = await agent.aconversation(conv_id("async-twins"), user=USER)
        outcomes = await asyncio.gather(conv.arequest_approval("get_source", {"id": "a"}), agent.aconversation(conv_id("async-other"), user=USER))
        denied = await conv.arequest_approval("shell", {"cmd": "rm -rf /"})
        return [outcomes[0].status, denied.status]

    assert asyncio.run(main()) == ["approved", "denied"]


def test_an_async_guards_timeout_bounds_the_wait_behind_a_call_an_earlier_timeout_left_pending(agent: Tollgate) -> None:
    async def main() -> tuple[str, str, float, float]:
        conv = await agent.aconversation(conv_id("async-timeout"), user=USER)

        @conv.guard("delete_source", timeout=1)
        async def delete_source(id: str) -> None:
            raise AssertionError("an undecided call must never run")

        with pytest.raises(ApprovalTimeout) as first:
            await delete_source(id="src_1")
        started = time.monotonic()
        with pytest.raises(ApprovalTimeout) as second:
            await delete_source(id="src_2")  # blocked by the first, still pending: bounded all the same
        return first.value.tool_call_id, second.value.tool_call_id, second.value.timeout, time.monotonic() - started

    stale, blocking, timeout, took = asyncio.run(main())
    assert (blocking, timeout) == (stale, 1)
    assert took < 10
