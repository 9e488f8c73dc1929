"""The approval loop through `guard` and `request_approval`: what the policy lets through, what waits for a person,
edits, refusals, denials, expiry, halts and idempotent proposals."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from conftest import USER, Person, conv_id
from tollgate import ApprovalTimeout, Tollgate, TollgateError, ToolCallRejected, current_run


def test_a_read_only_call_is_approved_by_the_policy_and_runs_at_once(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("read"), user=USER, title="Look up an order")
    runs: list[dict[str, Any]] = []

    @conv.guard("lookup_order", annotations={"isReadOnly": True})
    def lookup_order(order: str, verbose: bool = False) -> dict[str, Any]:
        runs.append({"order": order, "verbose": verbose})
        return {"order": order, "state": "shipped"}

    assert lookup_order("o-17", verbose=True) == {"order": "o-17", "state": "shipped"}
    assert runs == [{"order": "o-17", "verbose": True}]
    agent.flush()  # the result is reported in the background
    [call] = conv.refresh()["toolCalls"]
    assert call["status"] == "completed"
    assert call["arguments"] == {"order": "o-17", "verbose": True}
    assert call["decision"]["by"]["via"] == "policy"
    assert call["policy"]["reason"] == "Tool flags (annotations): isReadOnly → automatic"
    assert call["result"] == {"outcome": "succeeded", "output": {"order": "o-17", "state": "shipped"}, "at": call["result"]["at"]}


def test_a_destructive_call_waits_for_a_person_deciding_from_another_thread(agent: Tollgate, ann: Person, started: list[threading.Thread]) -> None:
    conv = agent.conversation(conv_id("wait"), user=USER)
    order: list[str] = []

    @conv.guard("delete_source", display=lambda a: {"title": f"Delete {a['id']}"}, reason="the user asked to delete it")
    def delete_source(id: str) -> str:
        order.append(f"ran {id}")
        return f"deleted {id}"

    def approve(person: Person, call: dict[str, Any]) -> None:
        assert call["display"] == {"title": "Delete src_2"}
        assert call["reason"] == "the user asked to delete it"
        order.append("approved")
        person.client.approve(call["id"], reason="confirmed with the owner")

    started.append(ann.decide_in_background(conv.id, approve))
    assert delete_source(id="src_2") == "deleted src_2"
    assert order == ["approved", "ran src_2"]
    agent.flush()
    [call] = conv.refresh()["toolCalls"]
    assert call["status"] == "completed"
    assert call["decision"]["by"] == {"id": "ann", "name": "Ann", "via": "web"}
    assert call["decision"]["reason"] == "confirmed with the owner"


APPROVE_WITH_EDIT = """
import json, os, sys, urllib.request
# Another process, another person's token: the web inbox's REST call with edited arguments.
url, token, call_id = sys.argv[1:4]
req = urllib.request.Request(f"{url}/v1/tool-calls/{call_id}/decision", method="POST",
    data=json.dumps({"decision": "approve", "arguments": {"id": "src_3", "dryRun": True}}).encode(),
    headers={"authorization": f"Bearer {token}", "content-type": "application/json", "x-tollgate-channel": "web"})
print(json.load(urllib.request.urlopen(req))["status"])
"""


def test_arguments_an_approver_edits_in_another_process_are_the_ones_the_function_runs_with(agent: Tollgate, ann: Person, url: str) -> None:
    conv = agent.conversation(conv_id("edit"), user=USER)
    seen: list[Any] = []

    @conv.guard("delete_source")
    def delete_source(id: str, dryRun: bool = False) -> str:
        run = current_run()
        assert run is not None
        seen.append(({"id": id, "dryRun": dryRun}, run.edited, run.tool_call["status"], bool(run.receipt)))
        return "ok"

    handle = conv.propose("delete_source", {"id": "src_2"})
    assert handle.status == "pending"
    decided = subprocess.run([sys.executable, "-c", APPROVE_WITH_EDIT, url, ann.client.transport.token() or "", handle.id],
                             capture_output=True, text=True, timeout=60)
    assert decided.returncode == 0, decided.stderr
    assert decided.stdout.strip() == "approved"

    assert delete_source(id="src_2", tollgate_id=handle.tool_call["externalId"]) == "ok"
    assert seen == [({"id": "src_3", "dryRun": True}, True, "executed", True)]
    [call] = conv.refresh()["toolCalls"]
    assert call["arguments"] == {"id": "src_2"}  # kept as proposed; the edit is the decision's
    assert call["decision"]["editedArguments"] == {"id": "src_3", "dryRun": True}


def test_a_rejection_raises_ToolCallRejected_saying_who_and_why_and_nothing_runs(agent: Tollgate, bob: Person, started: list[threading.Thread]) -> None:
    conv = agent.conversation(conv_id("reject"), user=USER)
    runs: list[Any] = []

    @conv.guard("send_email")
    def send_email(to: str, body: str) -> None:
        runs.append(to)

    started.append(bob.decide_in_background(conv.id, lambda p, c: p.client.reject(c["id"], reason="that is the whole company")))
    with pytest.raises(ToolCallRejected) as caught:
        send_email(to="all@example.com", body="hello")
    e = caught.value
    assert str(e) == "send_email was rejected by Bob via web: that is the whole company"
    assert (e.status, e.reason, e.via) == ("rejected", "that is the whole company", "web")
    assert e.decided_by == {"id": "bob", "name": "Bob", "via": "web"}
    assert e.tool_call["status"] == "rejected"
    assert runs == []


def test_a_call_the_policy_denies_is_refused_at_once(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("deny"), user=USER)
    outcome = conv.request_approval("shell", {"cmd": "rm -rf /"})
    assert outcome.status == "denied"
    assert outcome.decision and outcome.decision["by"]["via"] == "policy"

    @conv.guard("shell")
    def shell(cmd: str) -> str:
        raise AssertionError("a denied call must never run")

    with pytest.raises(ToolCallRejected) as caught:
        shell(cmd="rm -rf /tmp/x")
    assert caught.value.status == "denied"
    assert str(caught.value) == "shell was denied by the policy: Denied by policy rule 1 (shell(cmd=rm *))"


def test_a_call_nobody_decides_expires_and_is_refused(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("expire"), user=USER)

    @conv.guard("flash")
    def flash() -> None:
        raise AssertionError("an expired call must never run")

    with pytest.raises(ToolCallRejected) as caught:
        flash()
    assert caught.value.status == "expired"
    assert str(caught.value) == "flash was expired (nobody decided in time)"
    assert conv.refresh()["toolCalls"][0]["status"] == "expired"


def test_a_halt_cancels_the_waiting_call_and_refuses_new_proposals_without_retrying(url: str, agent_token: str, admin: Tollgate, ann: Person, started: list[threading.Thread]) -> None:
    retries: list[Any] = []
    agent = Tollgate(url, agent_token, on_retry=retries.append)
    conv = agent.conversation(conv_id("halt"), user=USER)

    @conv.guard("delete_source")
    def delete_source(id: str) -> None:
        raise AssertionError("a cancelled call must never run")

    started.append(ann.decide_in_background(conv.id, lambda p, c: admin.halt("conversation", id=conv.id, reason="incident 42")))
    with pytest.raises(ToolCallRejected) as caught:
        delete_source(id="src_9")
    assert caught.value.status == "cancelled"
    assert caught.value.reason == "incident 42"
    assert str(caught.value) == "delete_source was cancelled by Ann via web: incident 42"

    with pytest.raises(TollgateError) as refused:
        conv.propose("get_source", {"id": "src_1"})
    assert (refused.value.status, refused.value.code, refused.value.problem["scope"]) == (503, "halted", "conversation")
    assert retries == []  # a halt is an answer, not an outage
    admin.resume("conversation", id=conv.id)
    assert conv.request_approval("get_source", {"id": "src_1"}).status == "approved"


def test_proposing_again_with_the_frameworks_tool_call_id_answers_the_same_call(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("idem"), user=USER)
    # An id the API would refuse is replaced by its SHA-256, the same every time.
    odd = "toolu 01/ÄB"
    read = conv.propose("get_source", {"id": "a"}, id=odd)
    assert read.tool_call["externalId"].startswith("x_")
    assert conv.propose("get_source", {"id": "a"}, id=odd).id == read.id

    first = conv.propose("delete_source", {"id": "src_2"}, id="call_model_1")
    again = conv.propose("delete_source", {"id": "src_2"}, id="call_model_1")  # while it blocks the conversation
    assert again.id == first.id
    assert first.tool_call["externalId"] == "call_model_1"

    with pytest.raises(TollgateError) as caught:
        conv.propose("delete_source", {"id": "src_other"}, id="call_model_1")
    assert (caught.value.status, caught.value.code) == (409, "idempotency_mismatch")
    assert [c["id"] for c in conv.refresh()["toolCalls"]] == [read.id, first.id]


def test_a_replayed_call_that_already_ran_is_not_run_again_and_raises_already_executed(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("replay"), user=USER)
    runs: list[str] = []

    @conv.guard("get_source")
    def get_source(id: str) -> dict[str, Any]:
        runs.append(id)
        return {"id": id, "text": "the handbook"}

    assert get_source(id="src_1", tollgate_id="call_replay_1") == {"id": "src_1", "text": "the handbook"}
    agent.flush()  # the result on record (test_claim.py replays a call whose report failed)
    # The same tool-call id again (a replayed thread): the same call, which already ran. As the TypeScript SDK does,
    # the claim is refused and the function does not run a second time.
    with pytest.raises(TollgateError) as caught:
        get_source(id="src_1", tollgate_id="call_replay_1")
    assert (caught.value.status, caught.value.code, caught.value.problem["toolCallStatus"]) == (409, "already_executed", "completed")
    assert runs == ["src_1"]

    # The recorded result is on the call the repeated proposal answers.
    handle = conv.propose("get_source", {"id": "src_1"}, id="call_replay_1")
    assert (handle.status, handle.tool_call["result"]["output"]) == ("completed", {"id": "src_1", "text": "the handbook"})
    assert handle.wait().approved
    with pytest.raises(TollgateError) as again:
        handle.run(lambda args, _ctx: runs.append("again"))
    assert again.value.code == "already_executed"
    assert runs == ["src_1"] and len(conv.refresh()["toolCalls"]) == 1


def test_a_new_step_waits_for_the_pending_one_or_raises_conversation_blocked(agent: Tollgate, ann: Person, started: list[threading.Thread]) -> None:
    conv = agent.conversation(conv_id("blocked"), user=USER)
    pending = conv.propose("delete_source", {"id": "src_4"})
    with pytest.raises(TollgateError) as caught:
        conv.propose("get_source", {"id": "x"}, on_blocked="raise")
    assert caught.value.code == "conversation_blocked"
    assert caught.value.problem["pendingToolCallIds"] == [pending.id]

    started.append(ann.decide_in_background(conv.id, lambda p, c: p.client.reject(c["id"], reason="no")))
    outcome = conv.request_approval("get_source", {"id": "x"})  # waits for the rejection, then proposes
    assert outcome.status == "approved"
    assert [c["status"] for c in conv.refresh()["toolCalls"]] == ["rejected", "approved"]


def test_waiting_gives_up_after_the_callers_timeout_and_the_call_can_be_taken_up_again(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("timeout"), user=USER)
    handle = conv.propose("delete_source", {"id": "src_5"})
    with pytest.raises(ApprovalTimeout) as caught:
        handle.wait(timeout=1)
    assert caught.value.tool_call_id == handle.id
    assert agent.get_tool_call(handle.id)["status"] == "pending"
    ann.client.approve(handle.id)
    assert handle.wait().status == "approved"


def test_a_guards_timeout_bounds_the_wait_behind_a_call_an_earlier_timeout_left_pending(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("timeout-blocked"), user=USER)
    runs: list[str] = []

    @conv.guard("delete_source", timeout=1)
    def delete_source(id: str) -> str:
        runs.append(id)
        return f"deleted {id}"

    with pytest.raises(ApprovalTimeout) as first:
        delete_source(id="src_7")
    [stale] = conv.refresh()["toolCalls"]
    assert (first.value.tool_call_id, stale["status"]) == (stale["id"], "pending")

    # The stale call still blocks the conversation: the next call waits for it, but no longer than the timeout.
    started = time.monotonic()
    with pytest.raises(ApprovalTimeout) as second:
        delete_source(id="src_8")
    assert time.monotonic() - started < 10
    assert (second.value.tool_call_id, second.value.timeout) == (stale["id"], 1)
    with pytest.raises(ApprovalTimeout) as third:
        conv.request_approval("get_source", {"id": "src_8"}, timeout=0.5)
    assert (third.value.tool_call_id, third.value.timeout) == (stale["id"], 0.5)
    assert [c["id"] for c in conv.refresh()["toolCalls"]] == [stale["id"]]  # neither was proposed

    ann.client.reject(stale["id"], reason="not that one")
    assert conv.request_approval("get_source", {"id": "src_8"}, timeout=5).status == "approved"
    assert runs == []


def test_an_exception_of_the_function_is_reported_failed_and_raised_again(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("fails"), user=USER)

    @conv.guard("get_source")
    def get_source(id: str) -> None:
        raise KeyError(f"no source {id}")

    with pytest.raises(KeyError):
        get_source(id="src_404")
    agent.flush()
    [call] = conv.refresh()["toolCalls"]
    assert call["status"] == "completed"
    assert call["result"]["outcome"] == "failed"
    assert call["result"]["error"] == "'no source src_404'"


def test_problems_carry_their_code_status_and_request_id(agent: Tollgate, agent_token: str, url: str) -> None:
    with pytest.raises(TollgateError) as caught:
        agent.get_tool_call("tc_does_not_exist")
    assert (caught.value.status, caught.value.code) == (404, "not_found")
    assert caught.value.request_id

    conv = agent.conversation(conv_id("forbidden"), user=USER)
    handle = conv.propose("delete_source", {"id": "src_6"})
    with pytest.raises(TollgateError) as forbidden:
        agent.approve(handle.id)  # an agent token never decides
    assert (forbidden.value.status, forbidden.value.code) == (403, "forbidden")

    with pytest.raises(TollgateError) as invalid:
        conv.propose("bad name!", {})
    assert invalid.value.code == "validation_failed"
    assert invalid.value.problem["errors"]


def test_me_tells_who_the_token_is(agent: Tollgate, admin: Tollgate) -> None:
    me = agent.me()
    assert (me["kind"], me["roles"], me["tenant"]) == ("agent", ["agent"], "default")
    assert admin.me()["kind"] == "person"
    assert "admin" in admin.me()["roles"]
