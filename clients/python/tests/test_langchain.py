"""LangChain 1: a real ``create_agent`` with LangChain's fake chat model and ``TollgateMiddleware``. The model asks
for a tool, Tollgate's policy or a person decides, and the model's next turn reads the ToolMessage it was given."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from conftest import USER, Person, conv_id
from tollgate import Conversation, RetryPolicy, Tollgate, TollgateError
from tollgate.langchain import TollgateMiddleware, is_tollgate_interrupt, resume_when_decided


class ScriptedModel(FakeMessagesListChatModel):
    """LangChain's fake chat model, which ``create_agent`` binds tools to: the tools change nothing in its script.
    It keeps what it was given on each turn."""

    seen: list[list[BaseMessage]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _model(*calls: dict[str, Any]) -> ScriptedModel:
    """Asks for `calls` in its first answer, then says "done"."""
    return ScriptedModel(responses=[AIMessage(content="", tool_calls=list(calls)), AIMessage(content="done")], seen=[])


def _call(call_id: str, name: str = "delete_source", args: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "args": {"id": "src_2"} if args is None else args, "id": call_id, "type": "tool_call"}


def _tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


class Tools:
    """The agent's tools; each run is recorded."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []
        runs = self.runs

        @tool
        def delete_source(id: str) -> str:
            """Delete a knowledge-base source by id."""
            runs.append({"id": id})
            return f"deleted {id}"

        @tool("delete_source")
        async def adelete_source(id: str) -> str:
            """Delete a knowledge-base source by id."""
            await asyncio.sleep(0)
            runs.append({"id": id})
            return f"deleted {id}"

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            runs.append({"weather": city})
            return f"sunny in {city}"

        @tool
        def get_time() -> str:
            """The time."""
            runs.append({"time": True})
            return "12:00"

        @tool
        def send_email(to: str, body: str) -> str:
            """Send an email."""
            runs.append({"to": to})
            return "sent"

        @tool
        def shell(cmd: str) -> str:
            """Run a command."""
            runs.append({"cmd": cmd})
            return "ok"

        self.delete_source, self.adelete_source, self.get_weather, self.get_time = delete_source, adelete_source, get_weather, get_time
        self.send_email, self.shell = send_email, shell


def _ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def test_a_call_the_policy_approves_runs_at_once_and_is_reported_an_ungated_tool_runs_without_tollgate(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("lc-auto"), user=USER)
    t = Tools()
    model = _model(_call("call_lc_1", "get_weather", {"city": "Oslo"}), _call("call_lc_2", "get_time", {}))
    a = create_agent(model, [t.get_weather, t.get_time], middleware=[TollgateMiddleware(conversation=conv, tools=["get_weather"])])

    result = a.invoke(_ask("weather in Oslo?"))

    assert sorted(map(str, t.runs)) == sorted(map(str, [{"weather": "Oslo"}, {"time": True}]))
    assert [m.content for m in _tool_messages(result)] == ["sunny in Oslo", "12:00"]
    assert result["messages"][-1].content == "done"
    agent.flush()  # the result report goes in the background
    assert [(c["externalId"], c["status"], c["result"]["output"]) for c in conv.refresh()["toolCalls"]] == [
        ("call_lc_1", "completed", "sunny in Oslo")]


def test_a_call_the_policy_denies_is_answered_with_the_refusal_and_never_runs(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("lc-deny"), user=USER)
    t = Tools()
    a = create_agent(_model(_call("call_lc_3", "shell", {"cmd": "rm -rf /srv"})), [t.shell],
                     middleware=[TollgateMiddleware(conversation=conv)])

    result = a.invoke(_ask("clean up"))

    assert t.runs == []
    [refusal] = _tool_messages(result)
    assert refusal.content.startswith("shell was denied by the policy: ")
    assert (refusal.status, refusal.tool_call_id) == ("error", "call_lc_3")


def test_the_call_waits_while_a_person_decides_and_runs_with_the_arguments_they_edited(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lc-edit"), user=USER)
    t = Tools()
    model = _model(_call("call_lc_4"))
    a = create_agent(model, [t.delete_source], middleware=[
        TollgateMiddleware(conversation=lambda request: conv, display=lambda args: {"title": f"Delete source {args['id']}"})])

    def decide(person: Person, call: dict[str, Any]) -> None:
        assert (call["externalId"], call["display"]) == ("call_lc_4", {"title": "Delete source src_2"})
        assert t.runs == []
        person.client.approve(call["id"], arguments={"id": "src_3"})

    deciding = ann.decide_in_background(conv.id, decide)
    result = a.invoke(_ask("delete the old FAQ"))
    deciding.join()

    assert t.runs == [{"id": "src_3"}]
    assert [m.content for m in _tool_messages(result)] == ["deleted src_3"]
    assert [m.content for m in model.seen[-1] if isinstance(m, ToolMessage)] == ["deleted src_3"]
    agent.flush()
    [call] = conv.refresh()["toolCalls"]
    assert (call["status"], call["decision"]["editedArguments"], call["result"]["output"]) == ("completed", {"id": "src_3"}, "deleted src_3")


def test_a_rejection_tells_the_model_who_rejected_how_and_why_and_the_tool_does_not_run(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lc-reject"), user=USER)
    t = Tools()
    a = create_agent(_model(_call("call_lc_5")), [t.delete_source], middleware=[TollgateMiddleware(conversation=conv)])

    deciding = ann.decide_in_background(conv.id, lambda p, c: p.client.reject(c["id"], reason="that is production data"))
    result = a.invoke(_ask("delete it"))
    deciding.join()

    assert t.runs == []
    [refusal] = _tool_messages(result)
    assert (refusal.content, refusal.status) == ("delete_source was rejected by Ann via web: that is production data", "error")


def test_respond_a_person_answers_in_the_tools_place_the_model_reads_it_and_tollgate_records_who(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lc-respond"), user=USER)
    t = Tools()
    answer = "No need to email Bob: the invoice was paid on 3 March."
    a = create_agent(_model(_call("call_lc_6", "send_email", {"to": "bob@example.com", "body": "Is the invoice paid?"})), [t.send_email],
                     middleware=[TollgateMiddleware(
                         conversation=conv,
                         # The person's words are the tool's answer, with who gave it.
                         on_refusal=lambda e: f"{e.decided_by['name']} answered: {e.reason}" if e.status == "rejected" else str(e))])

    deciding = ann.decide_in_background(conv.id, lambda p, c: p.client.reject(c["id"], reason=answer))
    result = a.invoke(_ask("ask Bob whether the invoice is paid"))
    deciding.join()

    assert t.runs == []
    assert [m.content for m in _tool_messages(result)] == [f"Ann answered: {answer}"]
    [call] = conv.refresh()["toolCalls"]
    assert (call["status"], call["decision"]["by"]["id"], call["decision"]["by"]["via"], call["decision"]["reason"]) == (
        "rejected", "ann", "web", answer)


def test_interrupt_pauses_the_graph_while_pending_and_resumed_it_runs_the_edited_arguments_once(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lc-interrupt"), user=USER)
    t = Tools()
    a = create_agent(_model(_call("call_lc_7")), [t.delete_source], middleware=[TollgateMiddleware(conversation=conv, interrupt=True)],
                     checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": conv.id}}

    first = a.invoke(_ask("delete it"), config)
    [paused] = first["__interrupt__"]
    assert is_tollgate_interrupt(paused.value)
    assert (paused.value["tool_name"], paused.value["arguments"]) == ("delete_source", {"id": "src_2"})
    assert t.runs == []

    ann.client.approve(paused.value["tool_call_id"], arguments={"id": "src_3"})
    result = resume_when_decided(a, config, agent)

    assert t.runs == [{"id": "src_3"}]
    assert [m.content for m in _tool_messages(result)] == ["deleted src_3"]
    assert result["messages"][-1].content == "done"
    agent.flush()
    # The tool node ran again on resume and proposed again, by the model's id: still one Tollgate call.
    assert [(c["externalId"], c["status"]) for c in conv.refresh()["toolCalls"]] == [("call_lc_7", "completed")]


def test_interrupt_refuses_a_tool_call_without_an_id_each_resume_would_propose_it_anew(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("lc-no-id"), user=USER)
    t = Tools()
    a = create_agent(_model({**_call(""), "id": None}), [t.delete_source], middleware=[TollgateMiddleware(conversation=conv, interrupt=True)],
                     checkpointer=InMemorySaver())

    with pytest.raises(ValueError, match="the tool call delete_source has no id"):
        a.invoke(_ask("delete it"), {"configurable": {"thread_id": conv.id}})

    assert t.runs == []
    assert conv.refresh()["toolCalls"] == []


def test_an_async_agent_waits_for_the_person_and_runs_the_edited_arguments(agent: Tollgate, ann: Person) -> None:
    conv = agent.conversation(conv_id("lc-async"), user=USER)
    t = Tools()
    a = create_agent(_model(_call("call_lc_8")), [t.adelete_source], middleware=[TollgateMiddleware(conversation=conv)])

    deciding = ann.decide_in_background(conv.id, lambda p, c: p.client.approve(c["id"], arguments={"id": "src_4"}))
    result = asyncio.run(a.ainvoke(_ask("delete it")))
    deciding.join()

    assert t.runs == [{"id": "src_4"}]
    assert [m.content for m in _tool_messages(result)] == ["deleted src_4"]


def test_unreachable_tollgate_fails_closed_the_run_fails_and_the_tool_never_runs(agent: Tollgate, agent_token: str) -> None:
    conv = agent.conversation(conv_id("lc-down"), user=USER)
    # The same conversation, through a client whose server is gone (nobody listens on port 9 of loopback).
    gone = Tollgate("http://127.0.0.1:9", agent_token, retry=RetryPolicy(max_attempts=2, initial_delay=0.01))
    t = Tools()
    a = create_agent(_model(_call("call_lc_9")), [t.delete_source],
                     middleware=[TollgateMiddleware(conversation=Conversation(gone, conv.view))])

    with pytest.raises(TollgateError) as caught:
        a.invoke(_ask("delete it"))

    assert caught.value.code == "network_error"
    assert t.runs == []
    assert conv.refresh()["toolCalls"] == []
