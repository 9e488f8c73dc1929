"""The Tollgate client: agents start conversations and guard tool calls with it, approvers decide, and any program
reaches the rest of the API. Method names follow the API's operationIds in snake_case; each blocking method has an
``a``-prefixed coroutine twin (``aconversation``, ``arequest_approval``…) that runs it in a worker thread."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.parse
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Sequence

from ._api import JsonObject
from ._http import DEFAULT_MAX_RESPONSE_BYTES, RetryInfo, RetryPolicy, TokenSource, Transport
from ._ids import ID_PATTERN, new_id
from ._reports import ReportMode, Reports, report_mode
from .conversation import Conversation
from .errors import ApprovalTimeout, TollgateError

if TYPE_CHECKING:
    import urllib.request
DecisionChannel = Literal["web", "cli", "api"]


def _enc(s: str) -> str:
    return urllib.parse.quote(s, safe="")


class Tollgate:
    """A client of one Tollgate server with one token.

    ``Tollgate("http://127.0.0.1:8080", token)``: ``token`` is a bearer token, or a function returning a fresh one
    (called before each request, and again after a 401). ``timeout`` bounds each attempt of an ordinary request
    (seconds); ``retry`` the retries of transient failures; ``channel`` is the ``X-Tollgate-Channel`` of decisions,
    halts and resumes (recorded as ``via``); ``poll_seconds`` the longest single long-poll while waiting.

    ``report``: how a guarded call reports its result. ``"background"`` (the default): the guard returns as soon as
    the tool returns, and the conversation's next proposal carries the report (``results``) when it comes first, else
    a worker thread sends it, with the retries; ``flush()`` waits for the reports in flight, and ``close()`` (or
    leaving ``with Tollgate(...) as tollgate:``) flushes first. ``"await"``: the guard returns once the report is sent. Either way a report that fails goes to ``on_report_error``.
    """

    def __init__(
        self,
        url: str,
        token: TokenSource = None,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        on_retry: Callable[[RetryInfo], None] | None = None,
        headers: Mapping[str, str] | None = None,
        channel: DecisionChannel | None = None,
        poll_seconds: int = 30,
        on_report_error: Callable[[BaseException, JsonObject], None] | None = None,
        report: ReportMode = "background",
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        opener: urllib.request.OpenerDirector | None = None,
    ) -> None:
        self.transport = Transport(
            url, token, retry=retry, timeout=timeout, headers=headers, on_retry=on_retry,
            max_response_bytes=max_response_bytes, opener=opener,
        )
        self.channel = channel
        self.poll_seconds = max(1, min(60, int(poll_seconds)))
        self.on_report_error = on_report_error
        self.report: ReportMode = report_mode(report)
        #: The reports in flight, and the calls this client ran whose result is not on record yet.
        self.reports = Reports()

    @property
    def url(self) -> str:
        return self.transport.base_url

    def flush(self, timeout: float | None = None) -> bool:
        """Waits until every result report in flight has been sent, or given up and passed to ``on_report_error``.
        False when ``timeout`` (seconds) passed first, and at once inside ``on_report_error``, which runs in a report
        worker (it would wait for itself)."""
        return self.reports.flush(timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Flushes the reports in flight and lets the report workers end. The client may still be used after."""
        return self.reports.close(timeout)

    def __enter__(self) -> Tollgate:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def aflush(self, timeout: float | None = None) -> bool:
        """``flush`` without blocking the event loop."""
        return await asyncio.to_thread(self.reports.flush, timeout)

    async def aclose(self, timeout: float | None = None) -> bool:
        return await asyncio.to_thread(self.reports.close, timeout)

    async def __aenter__(self) -> Tollgate:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def request(self, method: str, path: str, **options: Any) -> Any:
        """Any route: JSON in (``body=``), JSON (or text) out, problems as TollgateError, transient failures retried."""
        return self.transport.request(method, path, **options)

    # ── agents ────────────────────────────────────────────────────────────────────────────────────────────

    def conversation(
        self,
        id: str | None = None,
        *,
        user: Mapping[str, Any] | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Conversation:
        """Starts a conversation, or takes up the one with this id (the same id from the same agent answers it as
        it is). Without an id one is made here, before the first attempt, so a retried start never makes two.

        ``user``: the end user, ``{"id", "roles", "name"}`` as the agent names them (recorded as asserted), or
        ``{"token": <the user's own identity provider token>}``, issued to the agent's application (never one
        Tollgate takes as a bearer token): Tollgate verifies it and takes the id, roles and name from it (recorded
        as verified, which rules with ``requireVerifiedUser`` insist on). The token is sent, never kept or logged."""
        cid = id if id is not None else new_id("conv")
        if not ID_PATTERN.fullmatch(cid):
            raise ValueError(f"conversation id {cid!r} must match {ID_PATTERN.pattern}")
        body: JsonObject = {"id": cid}
        if user is not None:
            body["user"] = dict(user)
        if title is not None:
            body["title"] = title
        if metadata is not None:
            body["metadata"] = dict(metadata)
        return Conversation(self, self.start_conversation(body))

    def start_conversation(self, body: Mapping[str, Any]) -> JsonObject:
        return self.request("POST", "/v1/conversations", body=dict(body))

    def get_conversation(self, id: str, *, external_ids: Sequence[str] | None = None) -> JsonObject:
        """The conversation with its calls; with ``external_ids`` (1 to 64), only the calls of those external ids,
        each looked up on its own: the read costs the same however long the conversation is."""
        if external_ids is not None:
            if isinstance(external_ids, str) or len(external_ids) == 0:
                raise TypeError("external_ids: a non-empty list of external ids (none would read every call)")
            return self.request("GET", f"/v1/conversations/{_enc(id)}", query={"externalId": list(external_ids)})
        return self.request("GET", f"/v1/conversations/{_enc(id)}")

    def list_conversations(self, *, status: str | None = None, cursor: str | None = None, limit: int | None = None) -> JsonObject:
        return self.request("GET", "/v1/conversations", query={"status": status, "cursor": cursor, "limit": limit})

    def get_tool_call(self, id: str, *, wait: float | None = None) -> JsonObject:
        """The call as it stands; with ``wait`` (0–60 s) a pending call is answered as soon as it leaves pending."""
        if wait is None:
            return self.request("GET", f"/v1/tool-calls/{_enc(id)}")
        w = max(0, min(60, int(-(-wait // 1))))
        # A long-poll answers after up to `wait` seconds: give the socket that long, and then some.
        return self.request("GET", f"/v1/tool-calls/{_enc(id)}", query={"wait": w}, timeout=w + 15.0)

    def wait_for_decision(self, id_or_call: str | Mapping[str, Any], *, timeout: float | None = None) -> JsonObject:
        """Long-polls until the call leaves ``pending``: decided, expired or cancelled. It rides out network errors
        and server restarts (it keeps asking, with backoff, while the call may still be decided). ``timeout``
        (seconds): raise ApprovalTimeout when still pending then."""
        call = self.get_tool_call(id_or_call) if isinstance(id_or_call, str) else dict(id_or_call)
        deadline = None if timeout is None else time.monotonic() + timeout
        failures = 0
        while call.get("status") == "pending":
            expires_at = _parse_time((call.get("approval") or {}).get("expiresAt"))
            left = self.poll_seconds if expires_at is None else int(-(-(expires_at - time.time()) // 1))
            # At least a second: past the expiry the server expires the call on read, whatever the clocks say.
            wait = max(1, min(self.poll_seconds, left))
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ApprovalTimeout(str(call["id"]), timeout or 0)
                wait = max(1, min(wait, int(-(-remaining // 1))))
            try:
                call = self.get_tool_call(str(call["id"]), wait=wait)
                failures = 0
            except TollgateError as e:
                # The transport gave up on a transient failure (a long outage): keep at it while the call may
                # still be decided, i.e. until a minute past its expiry by our clock. Anything else is raised.
                transient = e.status == 0 or e.status == 429 or e.status >= 502
                if not transient or e.code == "halted" or (expires_at is not None and time.time() > expires_at + 60):
                    raise
                failures += 1
                time.sleep(self.transport.backoff(failures + 3))
        return call

    def claim_execution(self, id: str) -> JsonObject:
        """Claims the run of an approved call, exactly once: ``{toolCall, arguments, receipt}``. Retried only when
        the server surely did not act on it: a claim whose answer was lost cannot be repeated."""
        return self.request("POST", f"/v1/tool-calls/{_enc(id)}/execution", idempotent=False)

    def report_result(self, id: str, result: Mapping[str, Any], *, _sent_before: bool = False) -> JsonObject:
        """Reports the run's outcome (the call becomes ``completed``). A retry whose first attempt did land answers
        ``409 already_completed``; that is taken as done. (``_sent_before``, internal: the result went with a
        proposal whose answer was lost, so even a first ``already_completed`` is.)"""
        path = f"/v1/tool-calls/{_enc(id)}/result"
        attempts = 0
        while True:
            attempts += 1
            try:
                return self.request("POST", path, body=dict(result), max_attempts=1)
            except TollgateError as e:
                if e.code == "already_completed" and (attempts > 1 or _sent_before):
                    return self.get_tool_call(id)
                # As the transport's retries: a 503 is transient when the server or a load balancer is unavailable.
                transient = e.status in (0, 429, 502, 504) or (e.status == 503 and e.code in ("unavailable", "http_503"))
                if not transient or attempts >= self.transport.retry.max_attempts:
                    raise
                delay = e.retry_after if e.retry_after is not None else self.transport.backoff(attempts)
                if self.transport.on_retry:
                    self.transport.on_retry(RetryInfo("POST", path, attempts, delay, e.status, e.code, e.retry_after is not None))
                time.sleep(delay)

    def register_tool(self, name: str, *, description: str | None = None, is_read_only: bool | None = None,
                      requires_approval: bool | None = None, destructive: bool | None = None,
                      redact: Sequence[str] | None = None, input_schema: Mapping[str, Any] | None = None) -> JsonObject:
        """Registers (or replaces) a tool. ``redact``: its secret arguments (dotted paths, or key globs at any
        depth such as ``*token*``), shown masked everywhere but the claim."""
        body = {k: v for k, v in {"description": description, "isReadOnly": is_read_only,
                                  "requiresApproval": requires_approval, "destructive": destructive,
                                  "redact": list(redact) if redact is not None else None}.items() if v is not None}
        if input_schema is not None:  # the JSON Schema of its input, for review: forms, and edits checked against it
            body["inputSchema"] = dict(input_schema)
        return self.request("PUT", f"/v1/tools/{_enc(name)}", body=body)

    def get_tool(self, name: str) -> JsonObject:
        return self.request("GET", f"/v1/tools/{_enc(name)}")

    # ── people ────────────────────────────────────────────────────────────────────────────────────────────

    def list_approvals(self, *, status: str | None = None, cursor: str | None = None, limit: int | None = None) -> JsonObject:
        """The calls the caller may decide (a person's token): ``{items, nextCursor}``."""
        return self.request("GET", "/v1/approvals", query={"status": status, "cursor": cursor, "limit": limit})

    def decide(self, id: str, decision: Literal["approve", "reject", "always_allow"], *, reason: str | None = None,
               arguments: Mapping[str, Any] | None = None, scope: str | None = None,
               channel: DecisionChannel | None = None) -> JsonObject:
        """A person's decision (never an agent token's): the call as it now stands."""
        body: JsonObject = {"decision": decision}
        if reason is not None:
            body["reason"] = reason
        if arguments is not None:
            body["arguments"] = dict(arguments)
        if scope is not None:
            body["scope"] = scope
        return self.request("POST", f"/v1/tool-calls/{_enc(id)}/decision", body=body, headers=self._channel(channel))

    def approve(self, id: str, *, reason: str | None = None, arguments: Mapping[str, Any] | None = None) -> JsonObject:
        return self.decide(id, "approve", reason=reason, arguments=arguments)

    def reject(self, id: str, *, reason: str | None = None) -> JsonObject:
        return self.decide(id, "reject", reason=reason)

    def get_policy(self) -> JsonObject:
        return self.request("GET", "/v1/policy")

    def put_policy(self, document: Mapping[str, Any] | str) -> JsonObject:
        """A new policy version (admin): a document, or its YAML (or JSON) text."""
        if isinstance(document, str):
            kind = "application/json" if document.lstrip()[:1] in ("{", "[") else "application/yaml"
            return self.request("PUT", "/v1/policy", raw=(document, kind))
        return self.request("PUT", "/v1/policy", body=dict(document))

    def me(self) -> JsonObject:
        """Who this client's token is: ``{id, tenant, kind, name, email, roles, owner}`` as Tollgate counts it."""
        return self.request("GET", "/v1/me")

    def get_status(self) -> JsonObject:
        return self.request("GET", "/v1/status")

    def halt(self, scope: Literal["tenant", "agent", "conversation"], *, reason: str, id: str | None = None,
             channel: DecisionChannel | None = None) -> JsonObject:
        """The kill switch (admin)."""
        body: JsonObject = {"scope": scope, "reason": reason}
        if id is not None:
            body["id"] = id
        return self.request("POST", "/v1/halt", body=body, headers=self._channel(channel))

    def resume(self, scope: Literal["tenant", "agent", "conversation"], *, id: str | None = None, reason: str | None = None,
               channel: DecisionChannel | None = None) -> JsonObject:
        body: JsonObject = {"scope": scope}
        if id is not None:
            body["id"] = id
        if reason is not None:
            body["reason"] = reason
        return self.request("POST", "/v1/resume", body=body, headers=self._channel(channel))

    def get_jwks(self) -> JsonObject:
        """The public keys of receipts and checkpoints (no token needed)."""
        return self.request("GET", "/.well-known/jwks.json")

    def _channel(self, channel: DecisionChannel | None) -> dict[str, str]:
        c = channel or self.channel
        return {"x-tollgate-channel": c} if c else {}

    # ── async twins ───────────────────────────────────────────────────────────────────────────────────────

    async def aconversation(self, id: str | None = None, **kwargs: Any) -> Conversation:
        return await asyncio.to_thread(self.conversation, id, **kwargs)

    async def await_for_decision(self, id_or_call: str | Mapping[str, Any], *, timeout: float | None = None) -> JsonObject:
        return await asyncio.to_thread(self.wait_for_decision, id_or_call, timeout=timeout)

    async def arequest(self, method: str, path: str, **options: Any) -> Any:
        return await asyncio.to_thread(self.request, method, path, **options)


def _parse_time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _json_size(value: Any) -> int | None:
    try:
        return len(json.dumps(value, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError):
        return None
