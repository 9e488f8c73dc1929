"""A LangGraph agent whose destructive tool, delete_source, runs only once a person approves it in Tollgate.

The graph pauses on an interrupt (checkpointed by InMemorySaver) while the call is pending, and resume_when_decided
resumes it when the decision arrives. Offline: the model is a scripted stand-in that asks for delete_source and
then repeats what the tool answered. With a real model, e.g. ``init_chat_model("openai:gpt-4.1").bind_tools(tools)``,
invoked on ``state["messages"]`` in the agent node.

    npm start                                                               # Tollgate, in another terminal
    pip install './clients/python[langgraph]'
    TOLLGATE_TOKEN=$(npx tollgate token --sub support-bot --role agent) python examples/python/langgraph_agent.py
    # then approve, edit or reject the call in the web inbox at http://127.0.0.1:8080/ (or: npx tollgate approve tc_…)
"""

from __future__ import annotations

import os
import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from tollgate import Conversation, Tollgate
from tollgate.langgraph import resume_when_decided, with_approval

#: The knowledge base the tool deletes from (a stand-in for your API).
SOURCES = {"src_1": "Pricing FAQ", "src_2": "Old pricing FAQ", "src_3": "Archive"}


@tool
def delete_source(id: str) -> dict[str, Any]:
    """Delete a source from the knowledge base."""
    return {"deleted": id, "existed": SOURCES.pop(id, None) is not None}


def scripted_model(messages: list[Any]) -> AIMessage:
    """The model: first asks to delete src_2, then says what the tool answered."""
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(f"The tool said: {messages[-1].content}")
    return AIMessage("", tool_calls=[{"name": "delete_source", "args": {"id": "src_2"}, "id": "call_1", "type": "tool_call"}])


def main(url: str, token: str, thread_id: str | None = None) -> str:
    tollgate = Tollgate(url, token)

    def conversation(_args: dict[str, Any], config: RunnableConfig) -> Conversation:
        # One Tollgate conversation per LangGraph thread: taking it up again by its id is idempotent.
        return tollgate.conversation(config["configurable"]["thread_id"], user={"id": "ann", "roles": ["admin"]},
                                     title="Tidy the knowledge base (LangGraph, Python)")

    tools = [with_approval(delete_source, conversation=conversation, annotations={"destructive": True},
                           display=lambda a: {"title": f"Delete source {a['id']}", "summary": "This cannot be undone."},
                           reason="The user asked to remove the outdated FAQ")]

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [scripted_model(state["messages"])]}

    workflow = StateGraph(MessagesState)
    workflow.add_node("agent", agent)
    workflow.add_node("tools", ToolNode(tools))
    workflow.add_edge(START, "agent")
    workflow.add_conditional_edges("agent", tools_condition)
    workflow.add_edge("tools", "agent")
    graph = workflow.compile(checkpointer=InMemorySaver())  # any checkpointer: a durable one survives restarts

    config: RunnableConfig = {"configurable": {"thread_id": thread_id or f"langgraph-python-{int(time.time())}"}}
    result = graph.invoke({"messages": [HumanMessage("Delete the old pricing FAQ (src_2).")]}, config)
    for paused in result.get("__interrupt__", []):
        # One interrupt per model turn: it lists every gated call of that turn still pending.
        for call in paused.value["tool_calls"]:
            print(f"Paused: {call['tool_name']} {call['arguments']} waits as {call['tool_call_id']} "
                  f"in conversation {paused.value['conversation_id']} (open the web inbox)…", flush=True)
    result = resume_when_decided(graph, config, tollgate) or result
    text = str(result["messages"][-1].content)
    print(text)
    return text


if __name__ == "__main__":
    main(os.environ.get("TOLLGATE_URL", "http://127.0.0.1:8080"), os.environ["TOLLGATE_TOKEN"])
