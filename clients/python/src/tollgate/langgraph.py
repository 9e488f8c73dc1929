"""LangGraph: gate a tool of a graph behind Tollgate with ``interrupt()``, so the graph pauses (checkpointed) while
people decide, and resumes when the decision arrives.

- ``with_approval(tool, conversation=...)``: the tool, for a ToolNode, proposing each call to Tollgate and
  interrupting the graph while it is pending; resumed, it runs with the approved (maybe edited) arguments, exactly
  once, or answers the refusal as the ToolMessage the model reads. The gated calls of one model turn (one
  AIMessage) are proposed together, as one step: people see them together, the graph interrupts once for all of
  them, and none runs before all are decided.
- ``request_approval(conversation, tool_name, arguments, id=...)``: the same step for your own nodes: propose,
  interrupt while pending, and answer the outcome and the call's handle (to claim, run and report).
  ``request_approvals(conversation, calls)`` does it for several calls as one step.
- ``resume_when_decided(graph, config, tollgate)``: waits for the decisions the graph is interrupted on and resumes
  it, until it ends or stops on something else (``aresume_when_decided`` for async graphs).

On resume LangGraph runs the interrupted node again from its start, so the proposal is repeated: it is idempotent
by the model's tool-call id (the call's ``externalId``), and the decision is read from Tollgate, never from the
resume value (which cannot approve anything).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from typing import Any, Callable, Mapping, Sequence, TypedDict, Union

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.types import Command, interrupt
from pydantic import PrivateAttr

from ._api import JsonObject
from .client import Tollgate
from .conversation import ApprovalOutcome, Conversation, ToolCallHandle, _in_thread, outcome_of
from .errors import ToolCallRejected

try:  # langgraph-prebuilt ≥ 1.0: a ToolNode passes it to the tools that ask for it
    from langgraph.prebuilt import ToolRuntime
except ImportError:  # pragma: no cover - an older LangGraph: each call is proposed on its own
    ToolRuntime = None  # type: ignore[assignment,misc]

__all__ = [
    "PendingCall",
    "TollgateInterrupt",
    "aresume_when_decided",
    "arequest_approval",
    "arequest_approvals",
    "is_tollgate_interrupt",
    "request_approval",
    "request_approvals",
    "resume_when_decided",
    "with_approval",
]



class PendingCall(TypedDict):
    """One call of a step the graph waits for."""

    #: Tollgate's id of the pending call (``tc_…``).
    tool_call_id: str
    tool_name: str
    arguments: JsonObject
    #: The id it was proposed with: the model's tool-call id, or the ``id`` given to ``request_approval``.
    external_id: str | None


class TollgateInterrupt(TypedDict):
    """The value a Tollgate interrupt carries (``state.tasks[i].interrupts[j].value``): what the graph waits for.
    ``tool_calls`` lists every pending call of the step (the gated calls of one model turn); ``tool_call_id``,
    ``tool_name`` and ``arguments`` are its first one's."""

    kind: str  # always "tollgate-approval"
    tool_call_id: str
    conversation_id: str
    tool_name: str
    arguments: JsonObject
    tool_calls: list[PendingCall]


def is_tollgate_interrupt(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("kind") == "tollgate-approval"


# ── the step: propose together, interrupt once while any is pending ─────────────────────────────────────────

# LangGraph's key of the checkpointer in a task's config (None when the graph was compiled without one).
_CHECKPOINTER_KEY = "__pregel_checkpointer"


def _require_checkpointer(config: Mapping[str, Any] | None, what: str) -> None:
    """Fails before anything is proposed when the graph cannot be resumed: no graph, or no checkpointer."""
    if config is None:
        try:
            config = get_config()
        except RuntimeError:
            raise RuntimeError(f"{what} must run inside a LangGraph node (or a tool a ToolNode runs), "
                               "in a graph compiled with a checkpointer") from None
    configurable = config.get("configurable") or {}
    if _CHECKPOINTER_KEY in configurable and not configurable[_CHECKPOINTER_KEY]:
        raise RuntimeError(f"{what} needs a graph compiled with a checkpointer (e.g. "
                           "workflow.compile(checkpointer=InMemorySaver())): without one the graph cannot pause "
                           "while people decide and be resumed")


def _interrupt_value(conversation: Conversation, pending: Sequence[ToolCallHandle]) -> TollgateInterrupt:
    calls: list[PendingCall] = [{"tool_call_id": h.id, "tool_name": str(h.tool_call["toolName"]),
                                 "arguments": dict(h.tool_call["arguments"]), "external_id": h.tool_call.get("externalId")}
                                for h in pending]
    first = calls[0]
    return {"kind": "tollgate-approval", "tool_call_id": first["tool_call_id"], "conversation_id": conversation.id,
            "tool_name": first["tool_name"], "arguments": first["arguments"], "tool_calls": calls}


def _claims(calls: Sequence[Mapping[str, Any]], run: bool) -> bool:
    """Whether the step's proposal also claims its approved calls: only a step of one call that this node runs.
    A call is claimed once, by whichever proposal comes first, and never handed out again. Each gated call of a
    model turn proposes the whole step from its own run of the tool, so the first would claim its siblings' calls,
    and claimed calls of a step that waits for people would have to outlive the interrupt (and the process)."""
    return run and len(calls) == 1


def _step(conversation: Conversation, calls: Sequence[Mapping[str, Any]], run: bool = False) -> list[ToolCallHandle]:
    """Proposes the calls as one step (idempotently, by their ids) and interrupts the graph while any of them is
    pending. Resumed, answers them as Tollgate has them: all decided. ``run``: the caller runs them (``_claims``)."""
    claim = _claims(calls, run)
    handles = conversation.propose_step(calls, claim=claim)
    while True:
        pending = [h for h in handles if h.status == "pending"]
        if not pending:
            return handles
        # The first time this raises (the graph pauses); resumed, it returns and Tollgate is asked again. Run
        # again while a call is still pending, it raises again (a new interrupt) instead of blocking the node.
        interrupt(_interrupt_value(conversation, pending))
        handles = conversation.propose_step(calls, claim=claim)  # all repeated: the calls as they stand now


def _call(tool_name: Any, arguments: Any, id: Any, details: Mapping[str, Any]) -> JsonObject:
    if not isinstance(arguments, Mapping):
        raise TypeError("a proposal needs arguments: a JSON object")
    if not isinstance(id, str) or not id:
        raise TypeError("request_approval needs id=: a stable id of the call (e.g. the model's tool-call id), so "
                        "that the node, run again on resume, proposes the same call instead of a new one")
    return {"tool_name": tool_name, "arguments": dict(arguments), "id": id, **details}


def _calls(calls: Sequence[Mapping[str, Any]]) -> list[JsonObject]:
    if not calls:
        raise ValueError("request_approvals needs at least one call")
    return [_call(c.get("tool_name"), c.get("arguments"), c.get("id"),
                  {k: v for k, v in c.items() if k not in ("tool_name", "arguments", "id")}) for c in calls]


def request_approval(conversation: Conversation, tool_name: str, arguments: Mapping[str, Any], *, id: str,
                     **details: Any) -> tuple[ApprovalOutcome, ToolCallHandle]:
    """Proposes the call and, while it is pending, interrupts the graph. ``id`` (required) makes the proposal
    idempotent: the node runs again from its start on resume, and must propose the same call again (the model's
    tool-call id, or any id stable across reruns of the node). Must run inside a graph node (or a tool a ToolNode
    runs) with a checkpointer. Resumed, answers the outcome as Tollgate has it, and the handle to claim and run an
    approved call. ``details``: ``reason``, ``display``, ``annotations``, ``confidence``, ``estimated_cost``."""
    [(outcome, handle)] = request_approvals(conversation, [_call(tool_name, arguments, id, details)])
    return outcome, handle


def request_approvals(conversation: Conversation, calls: Sequence[Mapping[str, Any]]) -> list[tuple[ApprovalOutcome, ToolCallHandle]]:
    """Several calls as one step (people see and decide them together): proposes them, interrupts the graph once
    while any is pending, and answers ``(outcome, handle)`` per call, in order. Each call is a mapping of
    ``request_approval``'s parameters: ``tool_name``, ``arguments``, ``id`` (required), ``reason``, ``display``…"""
    _require_checkpointer(None, "request_approvals")
    return [(outcome_of(h.tool_call), h) for h in _step(conversation, _calls(calls))]


async def arequest_approval(conversation: Conversation, tool_name: str, arguments: Mapping[str, Any], *, id: str,
                            **details: Any) -> tuple[ApprovalOutcome, ToolCallHandle]:
    """``request_approval`` for async nodes."""
    [(outcome, handle)] = await arequest_approvals(conversation, [_call(tool_name, arguments, id, details)])
    return outcome, handle


async def arequest_approvals(conversation: Conversation, calls: Sequence[Mapping[str, Any]]) -> list[tuple[ApprovalOutcome, ToolCallHandle]]:
    """``request_approvals`` for async nodes."""
    _require_checkpointer(None, "arequest_approvals")
    return [(outcome_of(h.tool_call), h) for h in await _astep(conversation, _calls(calls))]


async def _astep(conversation: Conversation, calls: Sequence[Mapping[str, Any]], run: bool = False) -> list[ToolCallHandle]:
    step = functools.partial(conversation.propose_step, calls, claim=_claims(calls, run))

    async def propose() -> list[ToolCallHandle]:
        # Cancelled while the proposal is under way, the claims it made are reported failed (never left executed).
        return await _in_thread(lambda _gone: step(), _give_up_all)

    handles = await propose()
    while True:
        pending = [h for h in handles if h.status == "pending"]
        if not pending:
            return handles
        interrupt(_interrupt_value(conversation, pending))
        handles = await propose()


def _give_up_all(handles: Sequence[ToolCallHandle]) -> None:
    for handle in handles:
        handle._give_up()


# ── with_approval: the gated tool of a ToolNode ────────────────────────────────────────────────────────────

ConversationSource = Union[Conversation, Callable[[JsonObject, RunnableConfig], Conversation]]
OfArgs = Union[Any, Callable[[JsonObject], Any]]


class _Invocation:
    """What a ToolNode gave this run of the tool: the model's tool-call id, its arguments, and the ToolRuntime."""

    def __init__(self, tool_call_id: str | None, arguments: JsonObject | None, runtime: Any) -> None:
        self.tool_call_id = tool_call_id
        self.arguments = arguments
        self.runtime = runtime


_invocation: contextvars.ContextVar[_Invocation | None] = contextvars.ContextVar("tollgate_lc_invocation", default=None)


def _asks_for_runtime(runtime: ToolRuntime) -> None:
    """Never called: its signature asks a ToolNode to pass its ToolRuntime (the graph's state, with the model's
    message, and the node's tools) to the gated tool, which finds there the calls of the same model turn."""


class _ApprovalTool(BaseTool):
    """The wrapped tool, with the same name, description and schema, gated by Tollgate."""

    _inner: BaseTool = PrivateAttr()
    _conversation: Any = PrivateAttr()
    _tool_name: str = PrivateAttr()
    _details: dict[str, Any] = PrivateAttr()
    _on_refusal: Callable[[ToolCallRejected], Any] | None = PrivateAttr()

    @property
    def func(self) -> Callable[..., None] | None:
        # A ToolNode reads the tools' `func` annotations for what to inject: a parameter `runtime: ToolRuntime`.
        return _asks_for_runtime if ToolRuntime is not None else None

    def run(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        tool_input, runtime = _split_runtime(tool_input)
        token = _invocation.set(_Invocation(kwargs.get("tool_call_id"), _as_dict(tool_input), runtime))
        try:
            return super().run(tool_input, *args, **kwargs)
        finally:
            _invocation.reset(token)

    async def arun(self, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        tool_input, runtime = _split_runtime(tool_input)
        token = _invocation.set(_Invocation(kwargs.get("tool_call_id"), _as_dict(tool_input), runtime))
        try:
            return await super().arun(tool_input, *args, **kwargs)
        finally:
            _invocation.reset(token)

    def _proposal(self, arguments: JsonObject, call_id: str | None, config: RunnableConfig) -> tuple[Conversation, JsonObject]:
        source = self._conversation
        conversation = source if isinstance(source, Conversation) else source(arguments, config)
        call: JsonObject = {"tool_name": self._tool_name, "arguments": arguments, "id": call_id or None}
        for key in ("display", "reason"):
            value = self._details.get(key)
            picked = value(arguments) if callable(value) else value
            if picked is not None:
                call[key] = picked
        if self._details.get("annotations"):
            call["annotations"] = dict(self._details["annotations"])
        return conversation, call

    def _valid(self, arguments: JsonObject, call_id: str) -> bool:
        try:
            self._parse_input(dict(arguments), call_id)
            return True
        except Exception:  # the sibling's own run answers its invalid arguments; it is not proposed
            return False

    def _plan(self, kwargs: JsonObject, config: RunnableConfig) -> tuple[Conversation, list[JsonObject], int]:
        """This call's conversation and step: the gated calls of the same model turn in this conversation (this
        one among them, at the index answered), when a ToolNode passed its runtime; else this call alone."""
        _require_checkpointer(config, "with_approval")
        invocation = _invocation.get() or _Invocation(None, None, None)
        call_id = invocation.tool_call_id or None
        # The model's own arguments (JSON as it sent them), the same whichever sibling proposes the step.
        arguments = invocation.arguments if invocation.arguments is not None else kwargs
        message = _message_of(invocation.runtime, call_id)
        if message is None or call_id is None:
            conversation, own = self._proposal(arguments, call_id, config)
            return conversation, [own], 0
        tools = {t.name: t for t in (getattr(invocation.runtime, "tools", None) or ())}
        proposals: list[tuple[Conversation, JsonObject]] = []
        index = 0
        for tc in message.tool_calls:
            tool = tools.get(tc["name"])
            if tc.get("id") == call_id:
                index = len(proposals)
                proposals.append(self._proposal(dict(tc["args"]), call_id, config))
            elif isinstance(tool, _ApprovalTool) and tc.get("id") and tool._valid(tc["args"], str(tc["id"])):
                proposals.append(tool._proposal(dict(tc["args"]), str(tc["id"]), config))
        conversation = proposals[index][0]
        # Those of this conversation (another conversation's calls are that conversation's step).
        before = [call for c, call in proposals[:index] if c.id == conversation.id]
        after = [call for c, call in proposals[index:] if c.id == conversation.id]
        return conversation, before + after, len(before)

    def _refusal(self, e: ToolCallRejected) -> Any:
        return self._on_refusal(e) if self._on_refusal else str(e)

    def _run(self, *args: Any, config: RunnableConfig, run_manager: Any = None, **kwargs: Any) -> Any:
        conversation, calls, index = self._plan(kwargs, config)
        try:
            handle = _step(conversation, calls, run=True)[index]
            outcome = outcome_of(handle.tool_call)
            if outcome.status != "approved":
                raise ToolCallRejected(outcome.status, outcome.tool_call)
            # The original tool with the arguments to run; its answer is this tool's content.
            return handle.run(lambda approved, _ctx: self._inner.invoke(approved, _child(config)))
        except ToolCallRejected as e:
            return self._refusal(e)

    async def _arun(self, *args: Any, config: RunnableConfig, run_manager: Any = None, **kwargs: Any) -> Any:
        conversation, calls, index = await asyncio.to_thread(self._plan, kwargs, config)
        try:
            handle = (await _astep(conversation, calls, run=True))[index]
            outcome = outcome_of(handle.tool_call)
            if outcome.status != "approved":
                raise ToolCallRejected(outcome.status, outcome.tool_call)
            return await handle.arun(lambda approved, _ctx: self._inner.ainvoke(approved, _child(config)))
        except ToolCallRejected as e:
            return self._refusal(e)


def _split_runtime(tool_input: Any) -> tuple[Any, Any]:
    """The tool's input without the ToolRuntime a ToolNode injected, and that runtime (or None)."""
    if ToolRuntime is not None and isinstance(tool_input, dict) and isinstance(tool_input.get("runtime"), ToolRuntime):
        return {k: v for k, v in tool_input.items() if k != "runtime"}, tool_input["runtime"]
    return tool_input, None


def _as_dict(tool_input: Any) -> JsonObject | None:
    return dict(tool_input) if isinstance(tool_input, dict) else None


def _message_of(runtime: Any, call_id: str | None) -> AIMessage | None:
    """The model's message holding the call ``call_id``, from the graph's state a ToolNode passed."""
    if runtime is None or call_id is None:
        return None
    state = getattr(runtime, "state", None)
    if isinstance(state, list):
        lists: list[Any] = [state]
    elif isinstance(state, Mapping):
        lists = [v for v in state.values() if isinstance(v, list)]
    else:
        lists = [v for v in vars(state).values() if isinstance(v, list)] if hasattr(state, "__dict__") else []
    for messages in lists:
        for m in reversed(messages):
            if isinstance(m, AIMessage) and any(tc.get("id") == call_id for tc in m.tool_calls):
                return m
    return None


def _child(config: RunnableConfig) -> RunnableConfig:
    # The inner tool runs as a plain call (not as the model's tool call): its output is our content.
    return {k: v for k, v in config.items() if k not in ("run_id", "run_name")}  # type: ignore[return-value]


def with_approval(tool: BaseTool, *, conversation: ConversationSource, tool_name: str | None = None,
                  display: OfArgs = None, reason: OfArgs = None, annotations: Mapping[str, bool] | None = None,
                  on_refusal: Callable[[ToolCallRejected], Any] | None = None) -> BaseTool:
    """The tool gated by Tollgate, for a ToolNode (in a graph compiled with a checkpointer). The original tool runs
    only once approved, with the arguments to run; a refusal is the tool's answer (the ToolMessage's content).
    The gated calls of one model message (in the same conversation) are proposed as one step, and the graph
    interrupts once for all of them.

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


# ── resuming ──────────────────────────────────────────────────────────────────────────────────────────────

def _waiting(state: Any) -> list[Any]:
    return [i for t in state.tasks for i in (getattr(t, "interrupts", None) or ()) if is_tollgate_interrupt(i.value)]


def _ids_of(value: Mapping[str, Any]) -> list[str]:
    calls = value.get("tool_calls")
    return [str(c["tool_call_id"]) for c in calls] if isinstance(calls, list) and calls else [str(value["tool_call_id"])]


def resume_when_decided(graph: Any, config: RunnableConfig, tollgate: Tollgate, *, timeout: float | None = None) -> Any:
    """While the graph (thread ``config``) is interrupted on Tollgate calls, waits for their decisions (every call
    of each interrupt's step) and resumes it with ``Command(resume=...)``. Answers the graph's last result, or None
    when it was not interrupted on Tollgate."""
    result = None
    while True:
        waiting = _waiting(graph.get_state(config))
        if not waiting:
            return result
        resume: dict[str, Any] = {}
        for i in waiting:
            calls = [tollgate.wait_for_decision(id, timeout=timeout) for id in _ids_of(i.value)]
            # Informative only: the node reads the decisions from Tollgate.
            resume[i.id] = {"tool_call_id": calls[0]["id"], "status": calls[0]["status"],
                            "tool_calls": [{"tool_call_id": c["id"], "status": c["status"]} for c in calls]}
        result = graph.invoke(Command(resume=resume), config)


async def aresume_when_decided(graph: Any, config: RunnableConfig, tollgate: Tollgate, *, timeout: float | None = None) -> Any:
    """``resume_when_decided`` for graphs run with ``ainvoke``."""
    result = None
    while True:
        waiting = _waiting(await graph.aget_state(config))
        if not waiting:
            return result
        resume: dict[str, Any] = {}
        for i in waiting:
            calls = [await asyncio.to_thread(tollgate.wait_for_decision, id, timeout=timeout) for id in _ids_of(i.value)]
            resume[i.id] = {"tool_call_id": calls[0]["id"], "status": calls[0]["status"],
                            "tool_calls": [{"tool_call_id": c["id"], "status": c["status"]} for c in calls]}
        result = await graph.ainvoke(Command(resume=resume), config)
