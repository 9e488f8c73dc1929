"""LangGraph: gate a tool of a graph behind Tollgate with ``interrupt()``, so the graph pauses (checkpointed) while
people decide, and resumes when the decision arrives.

- ``with_approval(tool, conversation=...)``: the tool, for a ToolNode, proposing each call to Tollgate and
  interrupting the graph while it is pending; resumed, it runs with the approved (maybe edited) arguments, exactly
  once, or answers the refusal as the ToolMessage the model reads.
- ``request_approval(conversation, tool_name, arguments, id=...)``: the same step for your own nodes: propose,
  interrupt while pending, and answer the outcome and the call's handle (to claim, run and report).
- ``resume_when_decided(graph, config, tollgate)``: waits for the decisions the graph is interrupted on and resumes
  it, until it ends or stops on something else (``aresume_when_decided`` for async graphs).

On resume LangGraph runs the interrupted node again from its start, so the proposal is repeated: it is idempotent
by the model's tool-call id (the call's ``externalId``), and the decision is read from Tollgate, never from the
resume value (which cannot approve anything).
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any, Callable, Mapping, TypedDict, Union

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.types import Command, interrupt
from pydantic import PrivateAttr

from .client import Tollgate
from .conversation import ApprovalOutcome, Conversation, ToolCallHandle
from .errors import ToolCallRejected

__all__ = [
    "TollgateInterrupt",
    "aresume_when_decided",
    "arequest_approval",
    "is_tollgate_interrupt",
    "request_approval",
    "resume_when_decided",
    "with_approval",
]

JsonObject = dict[str, Any]


class TollgateInterrupt(TypedDict):
    """The value a Tollgate interrupt carries (``state.tasks[i].interrupts[j].value``): what the graph waits for."""

    kind: str  # always "tollgate-approval"
    #: Tollgate's id of the pending call (``tc_…``).
    tool_call_id: str
    conversation_id: str
    tool_name: str
    arguments: JsonObject


def is_tollgate_interrupt(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("kind") == "tollgate-approval"


def request_approval(conversation: Conversation, tool_name: str, arguments: Mapping[str, Any], *, id: str | None = None,
                     **details: Any) -> tuple[ApprovalOutcome, ToolCallHandle]:
    """Proposes the call (idempotently: give ``id``, the model's tool-call id) and, while it is pending, interrupts
    the graph. Must run inside a graph node (or a tool a ToolNode runs) with a checkpointer. Resumed, answers the
    outcome as Tollgate has it, and the handle to claim and run an approved call."""
    handle = conversation.propose(tool_name, arguments, id=id, **details)
    _pause_while_pending(conversation, handle)
    return handle.wait(), handle


async def arequest_approval(conversation: Conversation, tool_name: str, arguments: Mapping[str, Any], *,
                            id: str | None = None, **details: Any) -> tuple[ApprovalOutcome, ToolCallHandle]:
    """``request_approval`` for async nodes."""
    handle = await conversation.apropose(tool_name, arguments, id=id, **details)
    _pause_while_pending(conversation, handle)
    return await handle.await_(), handle


def _pause_while_pending(conversation: Conversation, handle: ToolCallHandle) -> None:
    if handle.status == "pending":
        value: TollgateInterrupt = {"kind": "tollgate-approval", "tool_call_id": handle.id, "conversation_id": conversation.id,
                                    "tool_name": str(handle.tool_call["toolName"]), "arguments": dict(handle.tool_call["arguments"])}
        interrupt(value)  # the first time this raises (the graph pauses); resumed, it returns and Tollgate is asked


ConversationSource = Union[Conversation, Callable[[JsonObject, RunnableConfig], Conversation]]
OfArgs = Union[Any, Callable[[JsonObject], Any]]

# The model's tool-call id of the call being run: BaseTool.run gets it, _run does not.
_tool_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("tollgate_lc_tool_call_id", default=None)


class _ApprovalTool(BaseTool):
    """The wrapped tool, with the same name, description and schema, gated by Tollgate."""

    _inner: BaseTool = PrivateAttr()
    _conversation: Any = PrivateAttr()
    _tool_name: str = PrivateAttr()
    _details: dict[str, Any] = PrivateAttr()
    _on_refusal: Callable[[ToolCallRejected], Any] | None = PrivateAttr()

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        token = _tool_call_id.set(kwargs.get("tool_call_id"))
        try:
            return super().run(tool_input, *args, **kwargs)
        finally:
            _tool_call_id.reset(token)

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        token = _tool_call_id.set(kwargs.get("tool_call_id"))
        try:
            return await super().arun(tool_input, *args, **kwargs)
        finally:
            _tool_call_id.reset(token)

    def _request(self, kwargs: JsonObject, config: RunnableConfig) -> tuple[Conversation, JsonObject, JsonObject]:
        source = self._conversation
        conversation = source if isinstance(source, Conversation) else source(kwargs, config)
        details: JsonObject = {"id": _tool_call_id.get() or None}
        for key in ("display", "reason"):
            value = self._details.get(key)
            picked = value(kwargs) if callable(value) else value
            if picked is not None:
                details[key] = picked
        if self._details.get("annotations"):
            details["annotations"] = dict(self._details["annotations"])
        return conversation, kwargs, details

    def _refusal(self, e: ToolCallRejected) -> Any:
        return self._on_refusal(e) if self._on_refusal else str(e)

    def _run(self, *args: Any, config: RunnableConfig, run_manager: Any = None, **kwargs: Any) -> Any:
        conversation, arguments, details = self._request(kwargs, config)
        try:
            outcome, handle = request_approval(conversation, self._tool_name, arguments, **details)
            if outcome.status != "approved":
                raise ToolCallRejected(outcome.status, outcome.tool_call)
            # The original tool with the arguments to run; its answer is this tool's content.
            return handle.run(lambda approved, _ctx: self._inner.invoke(approved, _child(config)))
        except ToolCallRejected as e:
            return self._refusal(e)

    async def _arun(self, *args: Any, config: RunnableConfig, run_manager: Any = None, **kwargs: Any) -> Any:
        conversation, arguments, details = self._request(kwargs, config)
        try:
            outcome, handle = await arequest_approval(conversation, self._tool_name, arguments, **details)
            if outcome.status != "approved":
                raise ToolCallRejected(outcome.status, outcome.tool_call)
            return await handle.arun(lambda approved, _ctx: self._inner.ainvoke(approved, _child(config)))
        except ToolCallRejected as e:
            return self._refusal(e)


def _child(config: RunnableConfig) -> RunnableConfig:
    # The inner tool runs as a plain call (not as the model's tool call): its output is our content.
    return {k: v for k, v in config.items() if k not in ("run_id", "run_name")}  # type: ignore[return-value]


def with_approval(tool: BaseTool, *, conversation: ConversationSource, tool_name: str | None = None,
                  display: OfArgs = None, reason: OfArgs = None, annotations: Mapping[str, bool] | None = None,
                  on_refusal: Callable[[ToolCallRejected], Any] | None = None) -> BaseTool:
    """The tool gated by Tollgate, for a ToolNode (in a graph compiled with a checkpointer). The original tool runs
    only once approved, with the arguments to run; a refusal is the tool's answer (the ToolMessage's content).

    ``conversation``: a Conversation, or ``(arguments, config) -> Conversation`` (e.g. from
    ``config["configurable"]["thread_id"]``). ``tool_name``: its name in Tollgate (default the tool's own).
    ``display``/``reason``: a value or a function of the arguments. ``on_refusal(error)``: what the model is told
    instead of the default text, e.g. ``delete_source was rejected by Ann via web: not today``.
    """
    gated = _ApprovalTool(name=tool.name, description=tool.description, args_schema=tool.args_schema)
    gated._inner = tool
    gated._conversation = conversation
    gated._tool_name = tool_name or tool.name
    gated._details = {"display": display, "reason": reason, "annotations": annotations}
    gated._on_refusal = on_refusal
    return gated


def _waiting(graph: Any, config: RunnableConfig, state: Any) -> list[Any]:
    return [i for t in state.tasks for i in (getattr(t, "interrupts", None) or ()) if is_tollgate_interrupt(i.value)]


def resume_when_decided(graph: Any, config: RunnableConfig, tollgate: Tollgate, *, timeout: float | None = None) -> Any:
    """While the graph (thread ``config``) is interrupted on Tollgate calls, waits for their decisions and resumes it
    with ``Command(resume=...)``. Answers the graph's last result, or None when it was not interrupted on Tollgate.
    Calls a ToolNode runs in parallel interrupt one per round, so this may resume several times."""
    result = None
    while True:
        waiting = _waiting(graph, config, graph.get_state(config))
        if not waiting:
            return result
        resume: dict[str, Any] = {}
        for i in waiting:
            call = tollgate.wait_for_decision(i.value["tool_call_id"], timeout=timeout)
            resume[i.id] = {"tool_call_id": call["id"], "status": call["status"]}  # informative: the node asks Tollgate
        result = graph.invoke(Command(resume=resume), config)


async def aresume_when_decided(graph: Any, config: RunnableConfig, tollgate: Tollgate, *, timeout: float | None = None) -> Any:
    """``resume_when_decided`` for graphs run with ``ainvoke``."""
    result = None
    while True:
        waiting = _waiting(graph, config, await graph.aget_state(config))
        if not waiting:
            return result
        resume: dict[str, Any] = {}
        for i in waiting:
            call = await asyncio.to_thread(tollgate.wait_for_decision, i.value["tool_call_id"], timeout=timeout)
            resume[i.id] = {"tool_call_id": call["id"], "status": call["status"]}
        result = await graph.ainvoke(Command(resume=resume), config)
