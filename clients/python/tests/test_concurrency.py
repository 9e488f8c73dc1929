"""What processes, threads and tasks do to a guarded call: a forked child sends its own reports, a proposal waits
for a report in flight only within the caller's timeout, two threads on one handle run it once, and an async
guard cancelled while its claim is made reports that claim failed instead of leaving the call executed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from typing import Any, Iterator

import pytest

from conftest import FAST_RETRY, USER, Person, Requests, conv_id
from proxy import Proxy
from tollgate import Tollgate, TollgateError
from tollgate.conversation import GAVE_UP


@pytest.fixture
def proxy(url: str) -> Iterator[Proxy]:
    p = Proxy(url)
    yield p
    p.stop()


FORKS = """
import os, signal, sys
from tollgate import Tollgate
# A parent guards a call (its report pool now has a thread), then forks, as Celery's prefork pool or gunicorn
# --preload do; the child guards a call of the same conversation and ends normally.
url, token, conv_id, when = sys.argv[1:5]
agent = Tollgate(url, token)
get_source = agent.conversation(conv_id).guard("get_source")(lambda id: id)
print(get_source(id="src_1"), flush=True)
if when == "idle":
    agent.flush()  # else the parent's report is still in flight when it forks
pid = os.fork()
if pid == 0:
    signal.alarm(30)  # a child stuck waiting for the parent's report dies instead of hanging the test
    print(get_source(id="src_2"), flush=True)
    sys.exit(0)
_, status = os.waitpid(pid, 0)
agent.flush()
print(os.waitstatus_to_exitcode(status), flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
def test_a_forked_child_sends_its_own_reports_and_never_waits_for_the_parents(proxy: Proxy, agent_token: str,
                                                                              admin: Tollgate) -> None:
    statuses = {}
    for when in ("idle", "in-flight"):
        proxy.refuse("/result", 1, retry_after="1")  # the parent's report is on its way for a second
        cid = conv_id(f"fork-{when}")
        done = subprocess.run([sys.executable, "-c", FORKS, proxy.url, agent_token, cid, when], capture_output=True,
                              text=True, timeout=90)
        assert (done.returncode, done.stdout) == (0, "src_1\nsrc_2\n0\n"), done.stderr
        statuses[when] = sorted((c["arguments"]["id"], c["status"]) for c in admin.get_conversation(cid)["toolCalls"])
    both = [("src_1", "completed"), ("src_2", "completed")]
    assert statuses == {"idle": both, "in-flight": both}


def test_a_proposal_waits_for_the_report_in_flight_only_within_the_callers_timeout(proxy: Proxy, agent_token: str) -> None:
    held = proxy.hold("/result")
    agent = Tollgate(proxy.url, agent_token, retry=FAST_RETRY)
    conv = agent.conversation(conv_id("report-timeout"), user=USER)
    get_source = conv.guard("get_source", timeout=0.5)(lambda id: id)
    try:
        assert get_source(id="src_1") == "src_1"
        assert held.held.wait(30)  # its report is held: it stays in flight
        results: list[Any] = []
        second = threading.Thread(target=lambda: results.append(get_source(id="src_2")), daemon=True)
        second.start()
        second.join(30)  # a hang guard: without the bound it waits as long as the report is held
        assert results == ["src_2"]
    finally:
        held.hold.set()  # type: ignore[union-attr]
    assert agent.flush()
    assert [c["status"] for c in conv.refresh()["toolCalls"]] == ["completed", "completed"]


def test_two_threads_running_one_handle_run_it_once_and_the_other_is_refused(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("one-handle"), user=USER)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for i in range(20):
            handle = conv.propose("get_source", {"id": f"src_{i}"}, claim=True)
            start = threading.Barrier(2)
            runs: list[str] = []
            refused: list[str] = []

            def run() -> None:
                start.wait()
                try:
                    handle.run(lambda args, _ctx: runs.append(args["id"]), report="await")
                except TollgateError as e:
                    refused.append(e.code)

            threads = [threading.Thread(target=run, daemon=True) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            assert (runs, refused) == ([f"src_{i}"], ["already_executed"])
    finally:
        sys.setswitchinterval(switch)
    assert {c["status"] for c in conv.refresh()["toolCalls"]} == {"completed"}


def test_an_async_guard_cancelled_while_its_proposal_claims_reports_the_claim_failed(proxy: Proxy, agent_token: str,
                                                                                    admin: Tollgate) -> None:
    held = proxy.hold("/tool-calls")
    agent = Tollgate(proxy.url, agent_token, retry=FAST_RETRY)
    conv = agent.conversation(conv_id("cancelled"), user=USER)
    runs: list[str] = []

    @conv.guard("get_source")
    async def get_source(id: str) -> str:
        runs.append(id)
        return id

    async def main() -> None:
        task = asyncio.create_task(get_source(id="src_1"))
        assert await asyncio.to_thread(held.held.wait, 30)  # the proposal is on its way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        held.hold.set()  # type: ignore[union-attr]  # now it lands and claims the call, for a caller that is gone

    asyncio.run(main())  # waits for the proposal's thread, which hands the claim's report to the report workers
    assert agent.flush()
    [call] = admin.get_conversation(conv.id)["toolCalls"]
    assert runs == []
    assert (call["status"], call["result"]["outcome"], call["result"]["error"]) == ("completed", "failed", GAVE_UP)


def test_an_async_guard_cancelled_while_its_call_waits_for_a_person_claims_nothing(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("cancelled-wait"), user=USER)
    runs: list[str] = []

    @conv.guard("delete_source")
    async def delete_source(id: str) -> str:
        runs.append(id)
        return id

    async def main() -> str:
        task = asyncio.create_task(delete_source(id="src_1"))
        [call] = await asyncio.to_thread(ann.pending_in, conv.id)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Approved after its caller is gone: the thread still waiting sees the decision, and claims nothing.
        await asyncio.to_thread(ann.client.approve, call["id"])
        return str(call["id"])

    tool_call_id = asyncio.run(main())  # waits for that thread
    assert agent.flush()
    assert runs == []
    assert agent.get_tool_call(tool_call_id)["status"] == "approved"



def test_an_async_guard_cancelled_while_blocked_by_an_earlier_call_proposes_nothing(counted: Tollgate, requests: Requests,
                                                                                    ann: Person) -> None:
    conv = counted.conversation(conv_id("cancelled-blocked"), user=USER)
    earlier = conv.propose("delete_source", {"id": "src_0"})  # pending: it blocks the conversation's next step
    runs: list[str] = []

    @conv.guard("get_source")
    async def get_source(id: str) -> str:
        runs.append(id)
        return id

    def waiting_behind_it() -> None:
        """Until the guard's thread, refused as blocked, long-polls the earlier call."""
        while ("GET", f"/v1/tool-calls/{earlier.id}") not in requests.paths():
            time.sleep(0.01)

    async def main() -> None:
        task = asyncio.create_task(get_source(id="src_1"))
        await asyncio.to_thread(waiting_behind_it)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Decided after its caller is gone: the thread waiting behind it proposes nothing.
        await asyncio.to_thread(ann.client.reject, earlier.id, reason="not now")

    asyncio.run(main())  # waits for that thread
    assert runs == []
    assert [c["toolName"] for c in conv.refresh()["toolCalls"]] == ["delete_source"]
