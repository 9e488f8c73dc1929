"""A guarded call proposes and claims in one request, and reports its result in the background: what the agent's
critical path sends (counted by a handler of the client's own urllib opener), the receipt and the audit trail of
such a call, a call that waits for people, report failures, flush and close, and replays."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any, Iterator

import pytest

from conftest import FAST_RETRY, USER, Person, Requests, conv_id
from proxy import Proxy
from tollgate import MemoryReplayStore, RetryPolicy, Tollgate, TollgateError, current_run, verify_receipt


@pytest.fixture
def proxy(url: str) -> Iterator[Proxy]:
    p = Proxy(url)
    yield p
    p.stop()


#: The audit trail of an automatic call that ran and was reported.
LIFE = ["ToolCallProposed", "ToolCallAutoApproved", "ToolCallExecuted", "ToolCallCompleted"]


def _events(admin: Tollgate, tool_call_id: str) -> list[str]:
    return [e["type"] for e in admin.request("GET", "/v1/audit/events", query={"toolCallId": tool_call_id})["events"]]


def test_an_automatic_call_runs_after_one_request_with_a_receipt_and_its_report_follows(counted: Tollgate, requests: Requests,
                                                                                       admin: Tollgate, url: str) -> None:
    conv = counted.conversation(conv_id("one-request"), user=USER)
    before = len(requests.sent)
    runs: list[tuple[list[tuple[str, str]], Any]] = []

    @conv.guard("get_source")
    def get_source(id: str) -> dict[str, Any]:
        runs.append((requests.paths(before), current_run()))
        return {"id": id, "text": "the handbook"}

    assert get_source(id="src_1") == {"id": "src_1", "text": "the handbook"}
    [(sent, run)] = runs
    # One request on the agent's critical path: the proposal, which asked for the claim and got it.
    assert sent == [("POST", f"/v1/conversations/{conv.id}/tool-calls")]
    assert requests.sent[before][2]["claim"] is True
    call_id = run.tool_call["id"]
    assert (run.tool_call["status"], run.arguments, run.edited) == ("executed", {"id": "src_1"}, False)

    used = MemoryReplayStore()
    claims = verify_receipt(run.receipt, jwks_url=f"{url}/.well-known/jwks.json", tenant="default", tool_name="get_source",
                            arguments={"id": "src_1"}, tool_call_id=call_id, replay_store=used)
    assert (claims["tcid"], claims["approvedBy"]) == (call_id, "policy")

    assert counted.flush()
    assert requests.paths(before) == [("POST", f"/v1/conversations/{conv.id}/tool-calls"),
                                      ("POST", f"/v1/tool-calls/{call_id}/result")]
    assert _events(admin, call_id) == LIFE
    assert counted.get_tool_call(call_id)["result"]["output"] == {"id": "src_1", "text": "the handbook"}


def test_a_call_that_waits_for_a_person_is_claimed_once_approved(counted: Tollgate, requests: Requests, ann: Person,
                                                                 started: list[threading.Thread]) -> None:
    conv = counted.conversation(conv_id("claim-later"), user=USER)
    before = len(requests.sent)
    runs: list[tuple[list[tuple[str, str]], Any]] = []

    @conv.guard("delete_source")
    def delete_source(id: str) -> str:
        runs.append((requests.paths(before), current_run()))
        return f"deleted {id}"

    started.append(ann.decide_in_background(conv.id, lambda p, c: p.client.approve(c["id"], arguments={"id": "src_3"})))
    assert delete_source(id="src_2") == "deleted src_3"
    [(sent, run)] = runs
    assert sent[0] == ("POST", f"/v1/conversations/{conv.id}/tool-calls")
    assert sent[-1] == ("POST", f"/v1/tool-calls/{run.tool_call['id']}/execution")  # claimed on its own, once
    assert {path for _, path in sent[1:-1]} == {f"/v1/tool-calls/{run.tool_call['id']}"}  # waiting in between
    assert (run.edited, run.arguments, run.tool_call["status"]) == (True, {"id": "src_3"}, "executed")

    # Plain proposals run nothing: they never ask for a claim.
    before = len(requests.sent)
    assert conv.request_approval("get_source", {"id": "src_1"}).status == "approved"
    conv.propose("get_source", {"id": "src_2"})
    proposals = [body for _, _, body in requests.sent[before:] if body and "toolCalls" in body]
    assert [sorted(k for k in body if k != "results") for body in proposals] == [["toolCalls"], ["toolCalls"]]
    assert [c["status"] for c in conv.refresh()["toolCalls"]][1:] == ["approved", "approved"]


def test_a_proposal_with_claim_true_hands_its_claim_to_handle_claim_once(counted: Tollgate, requests: Requests) -> None:
    conv = counted.conversation(conv_id("manual-claim"), user=USER)
    handle = conv.propose("get_source", {"id": "src_1"}, id="call_manual", claim=True)
    assert handle.status == "executed"
    before = len(requests.sent)
    claim = handle.claim()
    assert requests.sent[before:] == []  # the proposal's claim: no request
    assert (claim["arguments"], claim["toolCall"]["id"], bool(claim["receipt"])) == ({"id": "src_1"}, handle.id, True)
    assert handle.report("succeeded", output={"text": "the handbook"})["status"] == "completed"
    with pytest.raises(TollgateError) as again:
        handle.claim()  # used once: the next claim is the server's to refuse
    assert (again.value.code, again.value.problem["toolCallStatus"]) == ("already_executed", "completed")


def test_a_report_that_fails_in_the_background_goes_to_the_hook_and_the_call_never_runs_again(proxy: Proxy,
                                                                                              agent_token: str) -> None:
    failures: list[tuple[str, str, str]] = []
    proxy.refuse("/result", 100)
    agent = Tollgate(proxy.url, agent_token, retry=RetryPolicy(max_attempts=2, initial_delay=0.01),
                     on_report_error=lambda e, call: failures.append(
                         (getattr(e, "code", ""), call["status"], threading.current_thread().name)))
    conv = agent.conversation(conv_id("report-fails"), user=USER)
    runs: list[str] = []

    @conv.guard("get_source")
    def get_source(id: str) -> str:
        runs.append(id)
        return id

    assert get_source(id="src_1", tollgate_id="call_lost_report") == "src_1"
    assert agent.flush()
    [(code, status, thread)] = failures
    assert (code, status) == ("http_503", "executed")
    assert thread.startswith("tollgate-report")  # in a report worker, not in the agent's thread
    assert proxy.refused == 2  # the report's own retries

    # The call stays executed with no result, and the server would hand its claim out again to a replay: the client
    # remembers that it ran the call here, and leaves that claim to the server, which refuses it.
    with pytest.raises(TollgateError) as replayed:
        get_source(id="src_1", tollgate_id="call_lost_report")
    assert (replayed.value.code, replayed.value.problem["toolCallStatus"]) == ("already_executed", "executed")
    assert runs == ["src_1"]


def test_flush_waits_for_the_reports_in_flight(proxy: Proxy, agent_token: str) -> None:
    held = proxy.hold("/result")
    agent = Tollgate(proxy.url, agent_token, retry=FAST_RETRY)
    conv = agent.conversation(conv_id("flush"), user=USER)

    @conv.guard("get_source")
    def get_source(id: str) -> str:
        return id

    assert get_source(id="src_1") == "src_1"  # returned while its report is held
    assert held.held.wait(30)
    [call] = conv.refresh()["toolCalls"]
    assert call["status"] == "executed"
    assert agent.flush(timeout=0.2) is False  # still in flight
    held.hold.set()  # type: ignore[union-attr]
    assert agent.flush() is True
    assert agent.get_tool_call(call["id"])["status"] == "completed"


def test_the_next_proposal_of_the_conversation_waits_for_its_report_in_flight(proxy: Proxy, agent_token: str, admin: Tollgate,
                                                                             started: list[threading.Thread]) -> None:
    # Sent together, the server would take both at once and do the one that lost the race again.
    held = proxy.hold("/result")
    agent = Tollgate(proxy.url, agent_token, retry=FAST_RETRY)
    conv = agent.conversation(conv_id("in-order"), user=USER)
    get_source = conv.guard("get_source")(lambda id: id)
    assert get_source(id="src_1") == "src_1"
    assert held.held.wait(30)

    proposed = proxy.watch("/tool-calls")
    results: list[str] = []
    started.append(threading.Thread(target=lambda: results.append(get_source(id="src_2")), daemon=True))
    started[-1].start()
    assert not proposed.wait(1.0)  # held back while the report is
    held.hold.set()  # type: ignore[union-attr]
    started[-1].join(30)
    assert results == ["src_2"]
    assert agent.flush()
    query = {"conversationId": conv.id, "type": "ToolCallProposed,ToolCallCompleted"}
    events = admin.request("GET", "/v1/audit/events", query=query)["events"]
    assert [e["type"] for e in events] == ["ToolCallProposed", "ToolCallCompleted", "ToolCallProposed", "ToolCallCompleted"]


def test_a_proposal_whose_answer_was_lost_is_sent_again_and_answered_its_claim_runs_once(proxy: Proxy, agent_token: str,
                                                                                         admin: Tollgate) -> None:
    agent = Tollgate(proxy.url, agent_token, retry=FAST_RETRY)
    conv = agent.conversation(conv_id("lost-answer"), user=USER)
    proxy.lose_answer("/tool-calls")
    runs: list[str] = []

    @conv.guard("get_source")
    def get_source(id: str) -> str:
        runs.append(id)
        return id

    # The first proposal claimed the call and its answer never came back. The retry is the same request (the same
    # claim key): the server answers it the claim it made, once, and the call runs once.
    assert get_source(id="src_1") == "src_1"
    assert proxy.lost == 1
    assert runs == ["src_1"]
    agent.flush()
    [call] = conv.refresh()["toolCalls"]
    assert _events(admin, call["id"]) == LIFE


def test_report_await_sends_the_report_before_the_guard_returns(counted: Tollgate, requests: Requests, url: str,
                                                                agent_token: str) -> None:
    conv = counted.conversation(conv_id("await"), user=USER)

    @conv.guard("get_source", report="await")
    def get_source(id: str) -> str:
        return id

    before = len(requests.sent)
    assert get_source(id="src_1") == "src_1"
    [call] = conv.refresh()["toolCalls"]
    assert call["status"] == "completed"
    assert requests.paths(before)[:2] == [("POST", f"/v1/conversations/{conv.id}/tool-calls"),
                                          ("POST", f"/v1/tool-calls/{call['id']}/result")]

    awaiting = Tollgate(url, agent_token, retry=FAST_RETRY, report="await")
    conv = awaiting.conversation(conv_id("await-client"), user=USER)
    assert conv.guard("get_source")(lambda id: id)(id="src_2") == "src_2"
    assert conv.refresh()["toolCalls"][0]["status"] == "completed"
    with pytest.raises(ValueError, match="report must be"):
        Tollgate(url, agent_token, report="later")  # type: ignore[arg-type]


def test_leaving_the_clients_with_block_flushes_its_reports(proxy: Proxy, agent_token: str, url: str) -> None:
    proxy.refuse("/result", 1, retry_after="1")  # the report waits a second before it lands
    with Tollgate(proxy.url, agent_token, retry=FAST_RETRY) as agent:
        conv = agent.conversation(conv_id("close"), user=USER)
        assert conv.guard("get_source")(lambda id: id)(id="src_1") == "src_1"
    assert proxy.refused == 1
    [call] = Tollgate(url, agent_token).get_conversation(conv.id)["toolCalls"]
    assert call["status"] == "completed"


def test_an_async_guard_runs_after_one_request_and_its_report_outlives_the_event_loop(counted: Tollgate,
                                                                                      requests: Requests) -> None:
    sent: list[list[tuple[str, str]]] = []

    async def main(name: str, flush: bool) -> tuple[str, str]:
        conv = await counted.aconversation(conv_id(name), user=USER)
        before = len(requests.sent)

        @conv.guard("get_source")
        async def get_source(id: str) -> str:
            sent.append(requests.paths(before))
            return id

        assert await get_source(id="src_1") == "src_1"
        if flush:
            assert await counted.aflush()
        return conv.id, (await asyncio.to_thread(conv.refresh))["toolCalls"][0]["status"]

    conv_a, status = asyncio.run(main("async-one", flush=True))
    assert status == "completed"
    # Not a task of the loop: asyncio.run cancels those left at its end, and this report is sent all the same.
    conv_b, _ = asyncio.run(main("async-after", flush=False))
    assert counted.flush()
    assert counted.get_conversation(conv_b)["toolCalls"][0]["status"] == "completed"
    assert sent == [[("POST", f"/v1/conversations/{c}/tool-calls")] for c in (conv_a, conv_b)]


EXITS = """
import os, sys
from tollgate import Tollgate
# An agent process that guards one call and ends at once: normally, or killed before anything else runs.
url, token, conv_id, how = sys.argv[1:5]
conv = Tollgate(url, token).conversation(conv_id)
print(conv.guard("get_source")(lambda id: id)(id="src_1"), flush=True)
if how == "dies":
    os._exit(0)
"""


def test_a_process_that_exits_sends_its_reports_first_and_one_that_dies_leaves_the_call_executed(proxy: Proxy, agent_token: str,
                                                                                                   admin: Tollgate) -> None:
    statuses = {}
    for how in ("exits", "dies"):
        proxy.refuse("/result", 1, retry_after="1")  # the report is still on its way when the process ends
        cid = conv_id(how)
        done = subprocess.run([sys.executable, "-c", EXITS, proxy.url, agent_token, cid, how], capture_output=True, text=True,
                              timeout=60)
        assert (done.returncode, done.stdout) == (0, "src_1\n"), done.stderr
        [call] = admin.get_conversation(cid)["toolCalls"]
        statuses[how] = call["status"]
    assert statuses == {"exits": "completed", "dies": "executed"}
