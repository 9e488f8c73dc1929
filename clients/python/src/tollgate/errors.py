"""The exceptions of the client: a refused request, a refused tool call, a receipt that does not verify."""

from __future__ import annotations

from typing import Any, Literal, Mapping

RefusalStatus = Literal["rejected", "denied", "expired", "cancelled"]

_STANDARD = ("type", "title", "status", "detail", "code")


class TollgateError(Exception):
    """The server refused a request, or could not be reached.

    Carries the RFC 9457 problem the server answered: ``status``, the stable ``code`` (``not_found``,
    ``conversation_blocked``, ``already_decided``, …), ``detail``, and the whole ``problem`` with its extension
    members (``pending_tool_call_ids`` is ``problem["pendingToolCallIds"]``). A network failure has ``status`` 0 and
    the code ``network_error``.
    """

    def __init__(self, problem: Mapping[str, Any], *, request_id: str | None = None) -> None:
        self.problem: dict[str, Any] = dict(problem)
        self.status: int = int(self.problem.get("status", 0))
        self.code: str = str(self.problem.get("code", f"http_{self.status}"))
        self.detail: str = str(self.problem.get("detail", ""))
        #: The server's ``X-Request-Id`` of the refused request, to find it in the server's logs.
        self.request_id = request_id
        super().__init__(f"{self.code}: {self.detail}")

    @property
    def extensions(self) -> dict[str, Any]:
        """The problem's members beyond the standard ones (``pendingToolCallIds``, ``toolCallStatus``, ``retryAfter``…)."""
        return {k: v for k, v in self.problem.items() if k not in _STANDARD}

    @property
    def retry_after(self) -> float | None:
        value = self.problem.get("retryAfter")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class ToolCallRejected(Exception):
    """A tool call did not run: a person rejected it, the policy denied it, nobody decided in time, or a halt
    cancelled it. ``reason`` is the decider's own words (what the model may be told), ``decided_by`` and ``via``
    who and through which channel. The message reads ``delete_source was rejected by Ann via web: not today``.
    """

    def __init__(self, status: RefusalStatus, tool_call: Mapping[str, Any]) -> None:
        decision = tool_call.get("decision") or {}
        cancellation = tool_call.get("cancellation") or {}
        if status == "cancelled":
            by = cancellation.get("by") or decision.get("by")
            reason = cancellation.get("reason") or decision.get("reason")
        elif status == "denied":
            by = decision.get("by")
            reason = decision.get("reason") or (tool_call.get("policy") or {}).get("reason")
        else:
            by = decision.get("by")
            reason = decision.get("reason")
        self.status: RefusalStatus = status
        self.reason: str | None = reason
        self.decided_by: dict[str, Any] | None = dict(by) if by else None
        self.via: str | None = by.get("via") if by else None
        self.tool_call: dict[str, Any] = dict(tool_call)
        super().__init__(_describe(status, str(tool_call.get("toolName", "the tool")), by, reason))


def _describe(status: str, tool_name: str, by: Mapping[str, Any] | None, reason: str | None) -> str:
    if status == "denied":
        who = " by the policy"
    elif status == "expired":
        who = " (nobody decided in time)"
    elif by and by.get("via") != "system":
        who = f" by {by.get('name') or by.get('id')} via {by.get('via')}"
    else:
        who = ""
    return f"{tool_name} was {status}{who}{': ' + reason if reason else ''}"


class ApprovalTimeout(TimeoutError):
    """No decision within the ``timeout`` the caller gave. The call stays pending on the server (until its own
    expiry); waiting again with its id takes it up."""

    def __init__(self, tool_call_id: str, timeout: float) -> None:
        self.tool_call_id = tool_call_id
        self.timeout = timeout
        super().__init__(f"tool call {tool_call_id} was still pending after {timeout:g} s")


ReceiptErrorCode = Literal["receipt_invalid", "receipt_expired", "receipt_mismatch", "receipt_replayed"]


class ReceiptVerificationError(Exception):
    """A receipt that does not vouch for this run: badly signed or formed (``receipt_invalid``), expired
    (``receipt_expired``), for another tenant, audience, tool, call or arguments (``receipt_mismatch``), or used
    before (``receipt_replayed``, with a replay store)."""

    def __init__(self, code: ReceiptErrorCode, message: str) -> None:
        self.code: ReceiptErrorCode = code
        super().__init__(message)
