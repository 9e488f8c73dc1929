"""A conversation of an agent: propose calls, wait for decisions, and run what is approved."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Mapping, Sequence, TypeVar, Union, cast

from ._api import ClientApi, JsonObject
from ._ids import new_id, tool_call_key
from ._reports import Carried, ReportMode, report_mode
from .errors import ApprovalTimeout, ToolCallRejected, TollgateError

ApprovalStatus = Literal["approved", "rejected", "expired", "cancelled", "denied"]
OnBlocked = Literal["wait", "raise"]
OfArgs = Union[Any, Callable[[JsonObject], Any]]

MAX_OUTPUT_BYTES = 64 * 1024
MAX_ERROR_CHARS = 16_000
#: The error a claimed call is reported ``failed`` with when its caller was cancelled before it could run it.
GAVE_UP = "the caller gave up before it ran (aborted)"
log = logging.getLogger("tollgate")


@dataclass
class ApprovalOutcome:
    """How a request for approval ended. ``denied``: the policy refused it; ``rejected``: a person did."""

    status: ApprovalStatus
    #: The call as it stands (the API's JSON).
    tool_call: JsonObject
    #: The arguments to run: an approver's edit when there was one, else the proposed ones.
    arguments: JsonObject
    decision: JsonObject | None = None

    @property
    def approved(self) -> bool:
        return self.status == "approved"


@dataclass
class RunContext:
    """What a guarded function may read while it runs (``tollgate.current_run()``)."""

    #: The signed receipt of this run, for the tool's backend to check (``verify_receipt``).
    receipt: str
    #: The call, now ``executed``.
    tool_call: JsonObject
    #: The arguments it runs with.
    arguments: JsonObject
    #: True when an approver edited the arguments.
    edited: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


_current_run: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar("tollgate_run", default=None)


def current_run() -> RunContext | None:
    """Inside a guarded function: the receipt, the call and whether the arguments were edited. Else None."""
    return _current_run.get()


def outcome_of(call: Mapping[str, Any]) -> ApprovalOutcome:
    """The approval outcome of a call that is no longer pending."""
    decision = call.get("decision")
    status = call.get("status")
    if status in ("approved", "executed", "completed"):
        edited = (decision or {}).get("editedArguments")
        return ApprovalOutcome("approved", dict(call), dict(edited if edited is not None else call["arguments"]), decision)
    if status == "rejected":
        by = (decision or {}).get("by") or {}
        return ApprovalOutcome("denied" if by.get("via") == "policy" else "rejected", dict(call), dict(call["arguments"]), decision)
    if status in ("expired", "cancelled"):
        return ApprovalOutcome(cast(ApprovalStatus, status), dict(call), dict(call["arguments"]), decision)
    raise TollgateError({"type": "urn:tollgate:problem:still_pending", "title": "Still pending", "status": 0,
                         "detail": f"tool call {call.get('id')} is still pending", "code": "still_pending"})


class ToolCallHandle:
    """One proposed call: wait for its decision, claim it, run it, report."""

    def __init__(self, tollgate: ClientApi, tool_call: Mapping[str, Any], claim: Mapping[str, Any] | None = None) -> None:
        self.tollgate = tollgate
        self.tool_call: JsonObject = dict(tool_call)
        # The claim a guarded proposal got in the same request (``claim: true``): used by the first run, once. Taken
        # under the lock: two threads running one handle must not both get it (the other is refused by the server).
        self._claim: JsonObject | None = dict(claim) if claim is not None else None
        self._claim_lock = threading.Lock()

    @property
    def id(self) -> str:
        """The server's id (``tc_…``)."""
        return str(self.tool_call["id"])

    @property
    def status(self) -> str:
        return str(self.tool_call["status"])

    def wait(self, *, timeout: float | None = None) -> ApprovalOutcome:
        """Waits (long-polling) until the call is decided, expired or cancelled. Never raises for a refusal."""
        self.tool_call = self.tollgate.wait_for_decision(self.tool_call, timeout=timeout)
        return outcome_of(self.tool_call)

    def claim(self) -> JsonObject:
        """Claims the run (exactly once): ``{toolCall, arguments, receipt}``. The proposal's claim when it made one
        (``claim=True``), without another request."""
        made = self._proposal_claim()
        if made is not None:
            return {"toolCall": made.tool_call, "arguments": made.arguments, "receipt": made.receipt}
        claim = self.tollgate.claim_execution(self.id)
        self.tool_call = claim["toolCall"]
        return claim

    def report(self, outcome: Literal["succeeded", "failed"], *, output: Any = None, error: str | None = None) -> JsonObject:
        return self._report(_report_body(outcome, output, error))

    def _report(self, body: JsonObject, sent_before: bool = False) -> JsonObject:
        if sent_before:  # with a proposal whose answer was lost: a first ``already_completed`` means it landed
            self.tool_call = self.tollgate.report_result(self.id, body, _sent_before=True)  # type: ignore[call-arg]
        else:
            self.tool_call = self.tollgate.report_result(self.id, body)
        return self.tool_call

    def run(self, fn: Callable[[JsonObject, RunContext], Any], *, timeout: float | None = None,
            output: Callable[[Any], Any] | None = None, report: ReportMode | None = None) -> Any:
        """Waits for the decision; approved, claims the run, calls ``fn(arguments, context)`` with the arguments to
        run and the receipt, reports its result and returns it. Refused, raises ToolCallRejected. When ``fn``
        raises, the call is reported ``failed`` with the error's message and the error is raised again.
        ``report``: ``"background"`` or ``"await"``, default the client's (see ``Tollgate``)."""
        mode = self._mode(report)
        context = self._approved_claim(timeout)
        token = _current_run.set(context)
        try:
            result = fn(context.arguments, context)
        except BaseException as error:
            self._send_report(mode, "failed", error=_message(error))
            raise
        finally:
            _current_run.reset(token)
        self._send_report(mode, "succeeded", output=_json_output(output(result) if output else result))
        return result

    async def arun(self, fn: Callable[[JsonObject, RunContext], Awaitable[Any]], *, timeout: float | None = None,
                   output: Callable[[Any], Any] | None = None, report: ReportMode | None = None) -> Any:
        """``run`` for a coroutine function: the HTTP runs in a worker thread, ``fn`` on the event loop. In the
        background the report goes to the client's report workers, not to a task of this loop: it outlives the loop
        (``asyncio.run`` cancels the tasks left at its end), and ``flush()`` or ``await aflush()`` waits for it."""
        mode = self._mode(report)
        # A claim from the proposal needs no request: no thread either. One made in a thread, whose caller was
        # cancelled meanwhile, is reported failed (never left ``executed``); once it is gone, none is made.
        context = self._proposal_claim()
        if context is None:
            context = await _in_thread(lambda gone: self._approved_claim(timeout, gone),
                                       lambda made: self._give_up(made.tool_call))
        token = _current_run.set(context)
        try:
            result = await fn(context.arguments, context)
        except BaseException as error:
            await self._asend_report(mode, "failed", error=_message(error))
            raise
        finally:
            _current_run.reset(token)
        await self._asend_report(mode, "succeeded", output=_json_output(output(result) if output else result))
        return result

    async def await_(self, *, timeout: float | None = None) -> ApprovalOutcome:
        """``wait`` as a coroutine."""
        return await asyncio.to_thread(self.wait, timeout=timeout)

    def _mode(self, report: ReportMode | None) -> ReportMode:
        return self.tollgate.report if report is None else report_mode(report)

    def _proposal_claim(self) -> RunContext | None:
        """The run context of the claim the proposal carried, once; None when it carried none. A call claimed
        before by another request carries none: claiming it again is the server's to refuse (``already_executed``).
        The same request retried after a lost answer (its ``claimKey``) is answered the claim it made."""
        with self._claim_lock:
            claim, self._claim = self._claim, None
        if claim is None:
            return None
        return RunContext(receipt=claim["receipt"], tool_call=self.tool_call, arguments=claim["arguments"],
                          edited=(self.tool_call.get("decision") or {}).get("editedArguments") is not None)

    def _give_up(self, tool_call: Mapping[str, Any] | None = None) -> None:
        """The caller is gone (cancelled) before it ran this call: the claim the proposal made of it, if any (or the
        one made for it, ``tool_call``), is reported ``failed`` in the background, so the call does not stay
        ``executed`` (as the TypeScript SDK's ``giveUp``)."""
        if tool_call is None:
            made = self._proposal_claim()
            if made is None:
                return
            tool_call = made.tool_call
        self.tool_call = dict(tool_call)
        self._send_report("background", "failed", error=GAVE_UP)

    def _approved_claim(self, timeout: float | None, gone: Callable[[], bool] = lambda: False) -> RunContext:
        proposed = self._proposal_claim()
        if proposed is not None:
            return proposed
        outcome = self.wait(timeout=timeout)
        if outcome.status != "approved":
            raise ToolCallRejected(outcome.status, outcome.tool_call)
        if gone():  # the caller was cancelled during the wait: claim nothing that nobody will run
            raise _Gone()
        try:
            claim = self.claim()
        except TollgateError as e:
            # A halt between the approval and the claim cancels the call: that is a refusal, not a failure.
            if e.code in ("halted", "not_approved"):
                try:
                    now = self.tollgate.get_tool_call(self.id)
                except TollgateError:
                    now = None
                if now is not None:
                    self.tool_call = now
                    if now.get("status") == "cancelled":
                        raise ToolCallRejected("cancelled", now) from e
            raise
        edited = (claim["toolCall"].get("decision") or {}).get("editedArguments") is not None
        return RunContext(receipt=claim["receipt"], tool_call=claim["toolCall"], arguments=claim["arguments"], edited=edited)

    def _send_report(self, mode: ReportMode, outcome: Literal["succeeded", "failed"], *, output: Any = None,
                     error: str | None = None) -> None:
        body = _report_body(outcome, output, error)
        if mode == "await":
            self._report_quietly(body)
        else:
            # The conversation's next proposal may take it along (``results``); else a worker sends it alone.
            self.tollgate.reports.carry(str(self.tool_call.get("conversationId", "")), self.id, body,
                                        functools.partial(self._report_quietly, body))

    async def _asend_report(self, mode: ReportMode, outcome: Literal["succeeded", "failed"], *, output: Any = None,
                            error: str | None = None) -> None:
        if mode == "await":
            await asyncio.to_thread(self._report_quietly, _report_body(outcome, output, error))
        else:
            self._send_report(mode, outcome, output=output, error=error)

    def _report_quietly(self, body: JsonObject, sent_before: bool = False) -> None:
        try:
            self._report(body, sent_before)
        except Exception as e:  # the run is on record (claimed); only its outcome is missing
            hook = self.tollgate.on_report_error
            if hook:
                hook(e, self.tool_call)
            else:
                log.warning("tollgate: the result of %s (%s) could not be reported: %s", self.tool_call.get("toolName"), self.id, e)


F = TypeVar("F", bound=Callable[..., Any])


class Conversation:
    """A conversation of an agent (``tollgate.conversation(...)``)."""

    def __init__(self, tollgate: ClientApi, view: Mapping[str, Any]) -> None:
        self.tollgate = tollgate
        self.view: JsonObject = dict(view)

    @property
    def id(self) -> str:
        return str(self.view["id"])

    def refresh(self) -> JsonObject:
        """Reads the conversation again, with all its calls."""
        self.view = self.tollgate.get_conversation(self.id)
        return self.view

    def propose(self, tool_name: str, arguments: Mapping[str, Any], *, id: str | None = None,
                on_blocked: OnBlocked = "wait", timeout: float | None = None, claim: bool = False,
                **details: Any) -> ToolCallHandle:
        """Proposes one call. ``id`` is the framework's own tool-call id, the idempotency key: proposing it again
        with the same tool and arguments answers the same call (any string; one the API would refuse is replaced
        by its SHA-256). Left out, one is made before the first attempt. ``details``: ``reason``, ``display``,
        ``annotations``, ``confidence``, ``estimated_cost``. ``timeout`` bounds the wait for an earlier step's
        pending calls (``on_blocked="wait"``): ApprovalTimeout, naming the call still blocking, after it.

        ``claim=True``: a call the policy approves on the spot is claimed in the same request, and ``handle.run``
        (or ``handle.claim()``) uses that claim without another request. Only when you will run it: a claimed call
        that is never reported stays ``executed``. ``guard`` does this."""
        calls = [dict(tool_name=tool_name, arguments=arguments, id=id, **details)]
        return self.propose_step(calls, on_blocked=on_blocked, timeout=timeout, claim=claim)[0]

    def propose_step(self, calls: Sequence[Mapping[str, Any]], *, on_blocked: OnBlocked = "wait",
                     timeout: float | None = None, claim: bool = False) -> list[ToolCallHandle]:
        """Proposes several calls as one step (1 to 64; people see them together): one handle per call, in order.
        Each call is a mapping of ``propose``'s parameters (``tool_name``, ``arguments``, ``id``, …). ``claim``:
        as ``propose``'s, for every call of the step the policy approves on the spot."""
        with _Deadline(timeout) as deadline:
            return self._propose_step(calls, on_blocked, deadline, claim)

    def _propose_step(self, calls: Sequence[Mapping[str, Any]], on_blocked: OnBlocked, deadline: _Deadline,
                      claim: bool = False, gone: Callable[[], bool] = lambda: False) -> list[ToolCallHandle]:
        # Its background reports are taken first: making ids reads os.urandom, which lets a report worker run (and
        # send them alone) while the GIL is released.
        carried = self.tollgate.reports.take(self.id)
        try:
            prepared = [_prepare(c) for c in calls]
        except BaseException:
            self.tollgate.reports.hand_back(carried, sent_before=False)
            raise
        proposal = self._send(prepared, on_blocked, deadline, claim, gone, carried)
        claims = {str(c["toolCallId"]): c for c in proposal.get("claims") or ()} if claim else {}
        return [ToolCallHandle(self.tollgate, tc, claims.get(str(tc["id"]))) for tc in proposal["toolCalls"]]

    def request_approval(self, tool_name: str, arguments: Mapping[str, Any], *, id: str | None = None,
                         timeout: float | None = None, on_blocked: OnBlocked = "wait", **details: Any) -> ApprovalOutcome:
        """Proposes one call and waits for its decision. Never raises for a refusal: see ``status``. ``timeout``
        bounds the whole wait: for an earlier step's pending calls (when blocked), then for this call's decision."""
        calls = [dict(tool_name=tool_name, arguments=arguments, id=id, **details)]
        with _Deadline(timeout) as deadline:
            handle = self._propose_step(calls, on_blocked, deadline)[0]
            return handle.wait(timeout=deadline.left_for(handle))

    async def apropose(self, tool_name: str, arguments: Mapping[str, Any], **kwargs: Any) -> ToolCallHandle:
        return await asyncio.to_thread(functools.partial(self.propose, tool_name, arguments, **kwargs))

    async def arequest_approval(self, tool_name: str, arguments: Mapping[str, Any], **kwargs: Any) -> ApprovalOutcome:
        return await asyncio.to_thread(functools.partial(self.request_approval, tool_name, arguments, **kwargs))

    def guard(self, tool_name: str, *, display: OfArgs = None, reason: OfArgs = None,
              annotations: Mapping[str, bool] | None = None, confidence: OfArgs = None, estimated_cost: OfArgs = None,
              output: Callable[[Any], Any] | None = None, timeout: float | None = None,
              on_blocked: OnBlocked = "wait", report: ReportMode | None = None) -> Callable[[F], F]:
        """A decorator: each call of the function is proposed as ``tool_name`` with its arguments (by parameter
        name), waits for a decision, claims the run, runs the function with the approved (maybe edited)
        arguments, reports the result and returns it. A refusal raises ToolCallRejected; an exception of the
        function is reported ``failed`` and raised again. Works on ``def`` and ``async def`` functions.

        The proposal also asks for the claim (``claim: true``): a call the policy approves on the spot runs after
        one request, and only a call that waits for people is claimed separately once approved. A repeated call
        (the same ``tollgate_id``) that was claimed before raises TollgateError ``already_executed``, unrun. An
        ``async def`` guard cancelled while its proposal or claim is under way reports a claim made for it after all
        ``failed`` (``GAVE_UP``), in the background, so the call is not left ``executed``.

        ``display``, ``reason``, ``confidence``, ``estimated_cost``: a value or a function of the arguments.
        ``report``: ``"background"`` or ``"await"``, default the client's (see ``Tollgate``).
        Per call, the keyword ``tollgate_id=`` gives the framework's tool-call id (the idempotency key).
        """
        mode = None if report is None else report_mode(report)

        def decorate(fn: F) -> F:
            signature = inspect.signature(fn)

            def request(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[JsonObject, dict[str, Any]]:
                call_id = kwargs.pop("tollgate_id", None)
                bound = signature.bind(*args, **kwargs)
                arguments = _arguments(bound)
                details: dict[str, Any] = {"id": call_id}
                for key, value in (("display", display), ("reason", reason), ("confidence", confidence),
                                   ("estimated_cost", estimated_cost)):
                    picked = value(arguments) if callable(value) else value
                    if picked is not None:
                        details[key] = picked
                if annotations:
                    details["annotations"] = dict(annotations)
                return arguments, details

            def propose(arguments: JsonObject, details: dict[str, Any], deadline: _Deadline,
                        gone: Callable[[], bool] = lambda: False) -> ToolCallHandle:
                calls = [dict(tool_name=tool_name, arguments=arguments, **details)]
                return self._propose_step(calls, on_blocked, deadline, claim=True, gone=gone)[0]

            if inspect.iscoroutinefunction(fn):
                @functools.wraps(fn)
                async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                    arguments, details = request(args, kwargs)
                    # ``timeout`` bounds the whole wait: an earlier step's pending calls, then this call's decision.
                    with _Deadline(timeout) as deadline:
                        # Cancelled while the proposal is under way, the claim it made is reported failed.
                        handle = await _in_thread(lambda gone: propose(arguments, details, deadline, gone),
                                                  ToolCallHandle._give_up)
                        return await handle.arun(lambda approved, _ctx: fn(**approved), timeout=deadline.left_for(handle),
                                                 output=output, report=mode)

                return cast(F, guarded_async)

            @functools.wraps(fn)
            def guarded(*args: Any, **kwargs: Any) -> Any:
                arguments, details = request(args, kwargs)
                with _Deadline(timeout) as deadline:
                    handle = propose(arguments, details, deadline)
                    return handle.run(lambda approved, _ctx: fn(**approved), timeout=deadline.left_for(handle), output=output,
                                      report=mode)

            return cast(F, guarded)

        return decorate

    def _send(self, calls: list[JsonObject], on_blocked: OnBlocked, deadline: _Deadline, claim: bool = False,
              gone: Callable[[], bool] = lambda: False, taken: list[Carried] | None = None) -> JsonObject:
        """Proposes the step, with the conversation's background reports waiting for it (``results``) and after its
        other reports in flight, and again after an earlier step's pending calls when blocked. ``gone()``: the async
        caller was cancelled, so nothing is proposed (or claimed) for it after a wait; every attempt of one step
        sends the same body, its ``claimKey`` included (only the reports it carries may differ). ``taken``: the
        reports the caller took for the first attempt (else it takes them itself)."""
        reports = self.tollgate.reports
        # Taken before the wait below, which leaves them out: their workers wait for this request's outcome.
        carried = reports.take(self.id) if taken is None else taken
        path = f"/v1/conversations/{_quote(self.id)}/tool-calls"
        # The claim key makes the claim idempotent too: a retry after a lost answer is answered the same claim.
        body: JsonObject = {"toolCalls": calls, "claim": True, "claimKey": new_id("claim")} if claim else {"toolCalls": calls}
        carrying, waited, sending = True, False, False
        while True:
            try:
                if gone():
                    raise _Gone()
                if not waited:
                    # Bounded by the caller's timeout: when it is up, the proposal goes anyway (the wait only spares
                    # a race).
                    reports.before_proposal(self.id, deadline.remaining())
                    waited = True
                sending = True
                proposal = self.tollgate.request(
                    "POST", path, body={**body, "results": [c.result() for c in carried]} if carried else body)
            except TollgateError as e:
                if carried:
                    # Refused (a 4xx, or a halt), nothing of the request was written; otherwise its answer may have
                    # been lost, and the reports alone take a first ``already_completed`` as done.
                    refused = 400 <= e.status < 500 or e.code == "halted"
                    reports.hand_back(carried, sent_before=not refused)
                    carried = []
                    if refused and e.code not in ("conversation_blocked", "halted"):
                        # Refused for a result (or by a server that takes none): the proposal goes again without
                        # them, once they have gone alone (as after any report in flight).
                        carrying = False
                        if e.status == 400 and 'unknown field "results"' in str(e.problem.get("detail") or ""):
                            reports.carries_results = False
                        reports.before_proposal(self.id, deadline.remaining())
                        continue
                blocking = e.problem.get("pendingToolCallIds")
                if e.code != "conversation_blocked" or on_blocked == "raise" or not isinstance(blocking, list) or not blocking:
                    raise
                # Wait for the earlier step's calls to be decided (or to expire), then propose again; within the
                # caller's timeout, if any (the stale call of an earlier timeout may still be pending).
                for pending in blocking:
                    self.tollgate.wait_for_decision(str(pending), timeout=deadline.left(str(pending)))
                # Reports of the conversation carried meanwhile go with the next attempt.
                carried = reports.take(self.id) if carrying else []
                continue
            except BaseException:
                # Interrupted: the reports go alone; once the request was under way, whether it landed is not known.
                reports.hand_back(carried, sent_before=sending)
                raise
            reports.done(carried)
            self.view.update(proposal.get("conversation") or {})
            return proposal


class _Deadline:
    """One caller's ``timeout`` across several waits (blocked, then the decision): what is left of it. An
    ApprovalTimeout inside ``with deadline:`` names the caller's whole timeout, not the part that was left."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.at = None if timeout is None else time.monotonic() + timeout
        self.waited: set[str] = set()

    def left(self, tool_call_id: str) -> float | None:
        """Seconds left (None: no bound); ApprovalTimeout for ``tool_call_id`` when none are."""
        if self.at is None:
            return None
        self.waited.add(tool_call_id)
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise ApprovalTimeout(tool_call_id, self.timeout or 0)
        return remaining

    def remaining(self) -> float | None:
        """Seconds left, 0 at the least (None: no bound); never raises."""
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def left_for(self, handle: ToolCallHandle) -> float | None:
        """What is left for the decision of ``handle``: no bound needed once it is decided."""
        return None if handle.status != "pending" else self.left(handle.id)

    def __enter__(self) -> _Deadline:
        return self

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        if isinstance(error, ApprovalTimeout) and self.timeout is not None and error.tool_call_id in self.waited and error.timeout != self.timeout:
            raise ApprovalTimeout(error.tool_call_id, self.timeout) from None


T = TypeVar("T")


class _Gone(Exception):
    """The caller of a worker thread's claim was cancelled: the thread stops before it claims."""


async def _in_thread(work: Callable[[Callable[[], bool]], T], give_up: Callable[[T], None]) -> T:
    """``work(gone)`` in a worker thread (``asyncio.to_thread``), where a claim is made. A cancelled caller does not
    stop the thread: then ``give_up(result)`` runs on what it made, in the thread when it finishes later, or here
    when it finished first. ``gone()`` tells the work that the caller was cancelled (then it should claim nothing).
    One lock hands the result over, so exactly one of the two sides gives it up, or the caller gets it."""
    lock = threading.Lock()
    state: dict[str, Any] = {"gone": False, "done": False}

    def gone() -> bool:
        with lock:
            return bool(state["gone"])

    def run() -> T:
        result = work(gone)
        with lock:
            if not state["gone"]:
                state["done"], state["result"] = True, result
                return result
        give_up(result)
        return result

    try:
        return await asyncio.to_thread(run)
    except asyncio.CancelledError:
        with lock:
            state["gone"] = True
            done, result = state["done"], state.get("result")
        if done:  # the thread handed it over, but the caller was cancelled before taking it
            give_up(cast(T, result))
        raise


_DETAIL_KEYS = {"reason": "reason", "display": "display", "annotations": "annotations", "confidence": "confidence",
                "estimated_cost": "estimatedCost", "preview": "preview"}


def _prepare(call: Mapping[str, Any]) -> JsonObject:
    tool_name = call.get("tool_name")
    arguments = call.get("arguments")
    if not isinstance(tool_name, str):
        raise TypeError("a proposal needs a tool_name")
    if not isinstance(arguments, Mapping):
        raise TypeError("a proposal needs arguments: a JSON object")
    unknown = set(call) - {"tool_name", "arguments", "id", *_DETAIL_KEYS}
    if unknown:
        raise TypeError(f"unknown proposal fields: {', '.join(sorted(unknown))}")
    raw_id = call.get("id")
    out: JsonObject = {"id": new_id("call") if raw_id is None else tool_call_key(str(raw_id)), "toolName": tool_name,
                       "arguments": dict(arguments)}
    for key, wire in _DETAIL_KEYS.items():
        if call.get(key) is not None:
            out[wire] = call[key]
    return out


def _report_body(outcome: Literal["succeeded", "failed"], output: Any, error: str | None) -> JsonObject:
    """A result as the result endpoint (and a proposal's ``results``) takes it."""
    body: JsonObject = {"outcome": outcome}
    if output is not None:
        body["output"] = output
    if error is not None:
        body["error"] = error
    return body


def _arguments(bound: inspect.BoundArguments) -> JsonObject:
    args: JsonObject = {}
    for name, value in bound.arguments.items():
        kind = bound.signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            args.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError("a guarded function takes its arguments by name: *args cannot be proposed")
        else:
            args[name] = value
    return args


def _quote(s: str) -> str:
    import urllib.parse

    return urllib.parse.quote(s, safe="")


def _message(e: BaseException) -> str:
    return (str(e) or type(e).__name__)[:MAX_ERROR_CHARS]


def _json_output(value: Any) -> Any:
    """The result as JSON the server accepts as ``output`` (64 KiB at most), or None when it is not."""
    if value is None:
        return None
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return None if len(text.encode("utf-8")) > MAX_OUTPUT_BYTES else json.loads(text)

