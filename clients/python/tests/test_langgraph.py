"""LangGraph: a graph (model node, ToolNode, in-memory checkpointer) with a LangChain fake chat model that calls a
gated tool. The graph pauses on interrupt() while Tollgate holds the call, a person decides in Tollgate, and the
graph is resumed with Command(resume=...): the tool runs with the approved arguments, or the model reads the
refusal."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command

from conftest import USER, Person, conv_id
from tollgate import Conversation, Tollgate
from tollgate.langgraph import (aresume_when_decided, is_tollgate_interrupt, request_approval, request_approvals, resume_when_decided,
                                with_approval)


class Agent:
    """The graph under test: the fake model asks for `calls` in its first answer, then says "done"."""

    def __init__(self, conversation: Conversation, calls: list[dict[str, Any]], *, asynchronous: bool = False,
                 checkpointer: bool = True) -> None:
        self.runs: list[dict[str, Any]] = []
        self.model_saw: list[list[BaseMessage]] = []
        runs = self.runs

        @tool
        def delete_source(id: str) -> dict[str, Any]:
            """Delete a knowledge-base source by id."""
            runs.append({"id": id})
            return {"deleted": id, "existed": True}

        @tool("delete_source")
        async def adelete_source(id: str) -> dict[str, Any]:
            """Delete a knowledge-base source by id."""
            await asyncio.sleep(0)
            runs.append({"id": id})
            return {"deleted": id, "existed": True}

        @tool
        def get_source(id: str) -> str:
            """Read a source."""
            runs.append({"read": id})
            return f"source {id}"

        inner = adelete_source if asynchronous else delete_source
        gated = [with_approval(inner, conversation=conversation, display=lambda a: {"title": f"Delete source {a['id']}"}),
                 with_approval(get_source, conversation=conversation)]
        model = FakeMessagesListChatModel(responses=[AIMessage(content="", tool_calls=calls), AIMessage(content="done")])

        def agent(state: MessagesState) -> dict[str, Any]:
            self.model_saw.append(list(state["messages"]))
            return {"messages": [model.invoke(state["messages"])]}

        workflow = StateGraph(MessagesState)
        workflow.add_node("agent", agent)
        workflow.add_node("tools", ToolNode(gated))
        workflow.add_edge(START, "agent")
        workflow.add_conditional_edges("agent", tools_condition)
        workflow.add_edge("tools", "agent")
        self.graph = workflow.compile(checkpointer=InMemorySaver() if checkpointer else None)
        self.config: Any = {"configurable": {"thread_id": conversation.id}}


def _call(call_id: str, name: str = "delete_source", **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args or {"id": "src_2"}, "id": call_id, "type": "tool_call"}


def _tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def test_the_graph_pauses_until_a_person_approves_and_the_tool_runs_with_the_edited_arguments(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lg-approve"), user=USER)
    a = Agent(conv, [_call("call_lg_1")])

    first = a.graph.invoke({"messages": [HumanMessage("delete the handbook source")]}, a.config)
    [paused] = first["__interrupt__"]
    assert is_tollgate_interrupt(paused.value)
    assert paused.value["tool_name"] == "delete_source"
    assert paused.value["arguments"] == {"id": "src_2"}
    assert a.runs == []
    [pending] = ann.pending_in(conv.id)
    assert (pending["id"], pending["externalId"], pending["display"]) == (paused.value["tool_call_id"], "call_lg_1", {"title": "Delete source src_2"})

    ann.client.approve(pending["id"], arguments={"id": "src_3"}, reason="the copy, not the original")
    result = resume_when_decided(a.graph, a.config, agent)

    assert a.runs == [{"id": "src_3"}]
    [answer] = _tool_messages(result)
    assert answer.tool_call_id == "call_lg_1"
    assert '"deleted": "src_3"' in str(answer.content) or "'deleted': 'src_3'" in str(answer.content)
    assert result["messages"][-1].content == "done"
    # Resuming ran the tool node again: the proposal repeated by the model's id, so there is one Tollgate call.
    agent.flush()
    [call] = conv.refresh()["toolCalls"]
    assert (call["status"], call["externalId"], call["result"]["output"]) == ("completed", "call_lg_1", {"deleted": "src_3", "existed": True})


def test_a_rejection_is_the_tool_message_the_model_reads_after_resuming_with_Command(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lg-reject"), user=USER)
    a = Agent(conv, [_call("call_lg_2")])

    first = a.graph.invoke({"messages": [HumanMessage("delete it")]}, a.config)
    [paused] = first["__interrupt__"]
    ann.client.reject(paused.value["tool_call_id"], reason="that is production data")
    # Any resume value will do: the tool reads the decision from Tollgate, never from it.
    result = a.graph.invoke(Command(resume={paused.id: "approved, trust me"}), a.config)

    assert a.runs == []
    [refusal] = _tool_messages(result)
    assert refusal.content == "delete_source was rejected by Ann via web: that is production data"
    assert a.model_saw[-1][-1].content == refusal.content  # the model's next turn reads it
    assert result["messages"][-1].content == "done"
    assert conv.refresh()["toolCalls"][0]["status"] == "rejected"


def test_calls_the_policy_decides_at_once_never_pause_the_graph(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("lg-auto"), user=USER)
    a = Agent(conv, [_call("call_lg_3", "get_source", id="src_1")])
    result = a.graph.invoke({"messages": [HumanMessage("read it")]}, a.config)
    assert "__interrupt__" not in result
    assert a.runs == [{"read": "src_1"}]
    assert _tool_messages(result)[0].content == "source src_1"
    assert resume_when_decided(a.graph, a.config, agent) is None


def test_an_async_graph_pauses_and_resumes_the_same_way(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lg-async"), user=USER)
    a = Agent(conv, [_call("call_lg_4", id="src_5")], asynchronous=True)

    async def main() -> dict[str, Any]:
        first = await a.graph.ainvoke({"messages": [HumanMessage("delete src_5")]}, a.config)
        [paused] = first["__interrupt__"]
        assert a.runs == []
        await asyncio.to_thread(ann.client.approve, paused.value["tool_call_id"])
        return await aresume_when_decided(a.graph, a.config, agent)

    result = asyncio.run(main())
    assert a.runs == [{"id": "src_5"}]
    assert result["messages"][-1].content == "done"
    agent.flush()
    assert conv.refresh()["toolCalls"][0]["status"] == "completed"


def _content(message: ToolMessage) -> str:
    return str(message.content)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_parallel_gated_calls_of_one_model_turn_are_one_step_and_one_interrupt(agent: Tollgate, ann: Person, asynchronous: bool) -> None:
    conv = agent.conversation(conv_id("lg-parallel"), user=USER)
    a = Agent(conv, [_call("call_par_1", id="src_2"), _call("call_par_2", "get_source", id="src_1"), _call("call_par_3", id="src_4")],
              asynchronous=asynchronous)

    async def first_run() -> dict[str, Any]:
        return await a.graph.ainvoke({"messages": [HumanMessage("clean up")]}, a.config)

    first = asyncio.run(first_run()) if asynchronous else a.graph.invoke({"messages": [HumanMessage("clean up")]}, a.config)
    # One interrupt listing both pending calls; nothing ran yet, not even the read the policy approved (nor is it
    # claimed: each gated call proposes the whole step, and a claim goes to whichever proposal comes first).
    [paused] = first["__interrupt__"]
    assert [(c["tool_name"], c["arguments"], c["external_id"]) for c in paused.value["tool_calls"]] == [
        ("delete_source", {"id": "src_2"}, "call_par_1"), ("delete_source", {"id": "src_4"}, "call_par_3")]
    assert a.runs == []
    calls = sorted(conv.refresh()["toolCalls"], key=lambda c: c["externalId"])
    assert [(c["externalId"], c["status"]) for c in calls] == [("call_par_1", "pending"), ("call_par_2", "approved"), ("call_par_3", "pending")]
    assert len({c["createdAt"] for c in calls}) == 1  # proposed together, as one step
    pending = {c["externalId"]: c for c in ann.pending_in(conv.id, count=2)}

    # Resumed before the decisions, the graph interrupts again on the same calls instead of waiting in the node.
    async def early_resume() -> dict[str, Any]:
        return await a.graph.ainvoke(Command(resume={paused.id: "go"}), a.config)

    early = asyncio.run(early_resume()) if asynchronous else a.graph.invoke(Command(resume={paused.id: "go"}), a.config)
    [again] = early["__interrupt__"]
    assert [c["tool_call_id"] for c in again.value["tool_calls"]] == [c["tool_call_id"] for c in paused.value["tool_calls"]]
    assert a.runs == []

    ann.client.approve(pending["call_par_1"]["id"], arguments={"id": "src_3"})
    ann.client.reject(pending["call_par_3"]["id"], reason="keep that one")
    result = asyncio.run(aresume_when_decided(a.graph, a.config, agent)) if asynchronous else resume_when_decided(a.graph, a.config, agent)

    assert sorted(a.runs, key=str) == [{"id": "src_3"}, {"read": "src_1"}]
    answers = {m.tool_call_id: _content(m) for m in _tool_messages(result)}
    assert "src_3" in answers["call_par_1"] and answers["call_par_2"] == "source src_1"
    assert answers["call_par_3"] == "delete_source was rejected by Ann via web: keep that one"
    assert result["messages"][-1].content == "done"
    # Resuming repeated the step by the model's ids: still three Tollgate calls.
    agent.flush()
    assert sorted((c["externalId"], c["status"]) for c in conv.refresh()["toolCalls"]) == [
        ("call_par_1", "completed"), ("call_par_2", "completed"), ("call_par_3", "rejected")]


def test_a_graph_without_a_checkpointer_fails_before_anything_is_proposed(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("lg-nocp"), user=USER)
    a = Agent(conv, [_call("call_nocp_1")], checkpointer=False)
    with pytest.raises(RuntimeError, match="checkpointer"):
        a.graph.invoke({"messages": [HumanMessage("delete it")]}, a.config)
    assert conv.refresh()["toolCalls"] == []


def test_request_approval_in_a_custom_node_needs_a_stable_id_and_proposes_once_across_the_rerun(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lg-node"), user=USER)
    ran: list[Any] = []

    def node(state: MessagesState) -> dict[str, Any]:
        [(outcome, handle), (read, _)] = request_approvals(conv, [
            {"tool_name": "delete_source", "arguments": {"id": "src_9"}, "id": "node-delete-1"},
            {"tool_name": "get_source", "arguments": {"id": "src_9"}, "id": "node-read-1"}])
        assert read.status == "approved"
        if outcome.approved:
            ran.append(handle.run(lambda args, _ctx: args["id"]))
        return {"messages": [AIMessage(content=outcome.status)]}

    def compile(checkpointer: Any) -> Any:
        workflow = StateGraph(MessagesState)
        workflow.add_node("node", node)
        workflow.add_edge(START, "node")
        workflow.add_edge("node", END)
        return workflow.compile(checkpointer=checkpointer)

    with pytest.raises(TypeError):
        request_approval(conv, "delete_source", {"id": "src_9"})  # type: ignore[call-arg]
    with pytest.raises(RuntimeError, match="checkpointer"):
        compile(None).invoke({"messages": []})
    assert conv.refresh()["toolCalls"] == []

    graph = compile(InMemorySaver())
    config: Any = {"configurable": {"thread_id": conv.id}}
    [paused] = graph.invoke({"messages": []}, config)["__interrupt__"]
    assert [c["external_id"] for c in paused.value["tool_calls"]] == ["node-delete-1"]
    ann.client.approve(paused.value["tool_call_id"])
    result = resume_when_decided(graph, config, agent)
    assert (ran, result["messages"][-1].content) == (["src_9"], "approved")
    assert sorted(c["externalId"] for c in conv.refresh()["toolCalls"]) == ["node-delete-1", "node-read-1"]


def test_a_gated_call_the_policy_lets_through_is_claimed_with_its_proposal(counted: Tollgate, requests: Any) -> None:
    conv = counted.conversation(conv_id("lg-claim"), user=USER)
    a = Agent(conv, [_call("call_lg_5", "get_source", id="src_1")])
    before = len(requests.sent)
    result = a.graph.invoke({"messages": [HumanMessage("read it")]}, a.config)
    assert _tool_messages(result)[0].content == "source src_1"
    counted.flush()
    [call] = conv.refresh()["toolCalls"]
    # One proposal that claimed it, then the report: no claim of its own.
    assert [path for _, path in requests.paths(before)] == [f"/v1/conversations/{conv.id}/tool-calls",
                                                             f"/v1/tool-calls/{call['id']}/result",
                                                             f"/v1/conversations/{conv.id}"]
    assert call["status"] == "completed"
