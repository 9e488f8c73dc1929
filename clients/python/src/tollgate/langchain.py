"""LangChain 1: ``TollgateMiddleware(conversation=...)`` for ``create_agent``, in the place of
``HumanInTheLoopMiddleware``. Each tool call the model makes is proposed to Tollgate, and the tool runs only once
approved, with the approved (maybe edited) arguments, exactly once (Tollgate's claim), its result reported; a
refusal is the ToolMessage the model reads (who refused and why), and the tool never runs.

LangChain's decisions map onto Tollgate's: approve → approve; edit → approve with edited arguments; reject →
reject with a reason. ``respond`` (a person answers in the tool's place) is a rejection whose reason is the answer:
Tollgate records who gave it and the words, and ``on_refusal`` may present them as the tool's answer. Tollgate has
no separate ``respond`` decision.

It gates in ``wrap_tool_call`` (not ``after_model``, as ``HumanInTheLoopMiddleware`` does): the claim and the
report must surround the tool's run. While a person decides, the tool call waits (long-polling Tollgate) by
default, so it works with any agent, checkpointer or not. With ``interrupt=True`` the graph pauses instead, as
LangChain's HITL does (``__interrupt__``, needs a checkpointer), and ``resume_when_decided(agent, config,
tollgate)`` resumes it. On resume the tool node runs again from its start: the proposal repeats, idempotent by the
model's tool-call id, and the decision is read from Tollgate, never from the resume value.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping, Sequence, Union

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage

from ._api import JsonObject
from .conversation import Conversation, ToolCallHandle, outcome_of
from .errors import ToolCallRejected
from .langgraph import _astep, _require_checkpointer, _step, aresume_when_decided, is_tollgate_interrupt, resume_when_decided

__all__ = ["TollgateMiddleware", "aresume_when_decided", "is_tollgate_interrupt", "resume_when_decided"]

ConversationSource = Union[Conversation, Callable[[ToolCallRequest], Conversation]]
OfArgs = Union[Any, Callable[[JsonObject], Any]]


class TollgateMiddleware(AgentMiddleware):
    """The middleware for ``create_agent(model, tools, middleware=[TollgateMiddleware(conversation=conv)])``.

    ``conversation``: a Conversation, or ``(request) -> Conversation`` (``request.tool_call``, ``request.state``,
    ``request.runtime``). ``tools``: the names of the tools to gate; default every tool call, so a tool added later
    is not let through unseen (Tollgate's policy lets the harmless ones through at once). ``interrupt``: pause the
    graph while a person decides (needs a checkpointer) instead of waiting in the tool call.
    ``display``/``reason``: a value or a function of the arguments. ``annotations``: the tool's flags, counted for a
    tool not registered with Tollgate. ``on_refusal(error)``: what the model is told instead of the default text,
    e.g. ``delete_source was rejected by Ann via web: not today``.
    """

    def __init__(self, *, conversation: ConversationSource, tools: Sequence[str] | None = None,
                 interrupt: bool = False, display: OfArgs = None, reason: OfArgs = None,
                 annotations: Mapping[str, bool] | None = None,
                 on_refusal: Callable[[ToolCallRejected], Any] | None = None) -> None:
        super().__init__()
        self._conversation = conversation
        self._tools = frozenset(tools) if tools is not None else None
        self._interrupt = interrupt
        self._details = {"display": display, "reason": reason}
        self._annotations = dict(annotations) if annotations else None
        self._on_refusal = on_refusal

    def _gates(self, request: ToolCallRequest) -> bool:
        return self._tools is None or request.tool_call["name"] in self._tools

    def _proposal(self, request: ToolCallRequest) -> tuple[Conversation, JsonObject]:
        tool_call = request.tool_call
        arguments = tool_call.get("args")
        if not isinstance(arguments, Mapping):
            raise TypeError(f"{tool_call['name']}: the model's arguments are not a JSON object")
        if self._interrupt and not tool_call.get("id"):
            # Resumed, the tool node runs again from its start: without the model's id each run would propose anew.
            raise ValueError(f"TollgateMiddleware(interrupt=True): the tool call {tool_call['name']} has no id, so a "
                             "resumed run could not find it in Tollgate and would propose it again; use a model that "
                             "gives its tool calls ids")
        source = self._conversation
        conversation = source if isinstance(source, Conversation) else source(request)
        call: JsonObject = {"tool_name": tool_call["name"], "arguments": dict(arguments), "id": tool_call.get("id") or None}
        for key, value in self._details.items():
            picked = value(dict(arguments)) if callable(value) else value
            if picked is not None:
                call[key] = picked
        if self._annotations:
            call["annotations"] = self._annotations
        return conversation, call

    def _refusal(self, request: ToolCallRequest, e: ToolCallRejected) -> ToolMessage:
        content = self._on_refusal(e) if self._on_refusal else str(e)
        tool_call = request.tool_call
        # status "error", as LangChain's own HITL marks a rejected call.
        return ToolMessage(content=content if isinstance(content, (str, list)) else str(content),
                           tool_call_id=tool_call.get("id") or "", name=tool_call["name"], status="error")

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        if not self._gates(request):
            return handler(request)
        conversation, call = self._proposal(request)
        try:
            if self._interrupt:
                _require_checkpointer(None, "TollgateMiddleware(interrupt=True)")
                [handle] = _step(conversation, [call], run=True)  # interrupts the graph while pending
                _refuse_unless_approved(handle)
            else:
                handle = conversation.propose(claim=True, **call)  # claimed at once when the policy approves
            # The tool runs with the arguments Tollgate gives (an approver's edit), not the model's.
            return handle.run(lambda approved, _ctx: handler(_with_args(request, approved)), output=_output)
        except ToolCallRejected as e:
            return self._refusal(request, e)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        if not self._gates(request):
            return await handler(request)
        conversation, call = self._proposal(request)
        try:
            if self._interrupt:
                _require_checkpointer(None, "TollgateMiddleware(interrupt=True)")
                [handle] = await _astep(conversation, [call], run=True)
                _refuse_unless_approved(handle)
            else:
                handle = await conversation.apropose(claim=True, **call)
            return await handle.arun(lambda approved, _ctx: handler(_with_args(request, approved)), output=_output)
        except ToolCallRejected as e:
            return self._refusal(request, e)


def _refuse_unless_approved(handle: ToolCallHandle) -> None:
    outcome = outcome_of(handle.tool_call)
    if outcome.status != "approved":
        raise ToolCallRejected(outcome.status, outcome.tool_call)


def _with_args(request: ToolCallRequest, arguments: JsonObject) -> ToolCallRequest:
    return request.override(tool_call={**request.tool_call, "args": dict(arguments)})


def _output(result: Any) -> Any:
    """What is reported as the call's output: the ToolMessage's content (a Command reports none)."""
    return result.content if isinstance(result, ToolMessage) else None
