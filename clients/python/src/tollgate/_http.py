"""HTTP to Tollgate over urllib: bearer token, JSON, RFC 9457 problems as TollgateError, bounded reads, and retries
of transient failures (network errors, 429, 502–504, 503 unavailable) with capped exponential backoff and jitter,
honouring Retry-After."""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

from .errors import TollgateError

TokenSource = Union[str, Callable[[], str], None]

#: The largest answer read; a longer one is refused rather than held in memory.
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of transient failures. Delays in seconds."""

    #: Attempts per request, the first included, before a transient failure is raised.
    max_attempts: int = 8
    #: The first backoff; it doubles per attempt, with jitter.
    initial_delay: float = 0.25
    #: The cap of the backoff.
    max_delay: float = 8.0
    #: The longest Retry-After honoured; a longer one is cut to this.
    max_retry_after: float = 60.0


@dataclass(frozen=True)
class RetryInfo:
    """Told to ``on_retry`` before each retry: what failed, and how long the client waits before the next attempt."""

    method: str
    path: str
    #: The attempt that failed, from 1.
    attempt: int
    #: Seconds.
    delay: float
    #: The HTTP status of the failed attempt; 0 for a network error.
    status: int
    #: The problem's code (``rate_limited``, ``unavailable``, ``network_error``, …).
    code: str
    #: True when the server asked for this delay (Retry-After).
    retry_after: bool


@dataclass
class Answer:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        if not self.body:
            return None
        if "json" in self.headers.get("content-type", ""):
            return json.loads(self.body.decode("utf-8"))
        return self.body.decode("utf-8", "replace")


class _NeverSent(Exception):
    """The connection was never made, so repeating the request is always safe."""


class Transport:
    def __init__(
        self,
        url: str,
        token: TokenSource = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        headers: Mapping[str, str] | None = None,
        on_retry: Callable[[RetryInfo], None] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        opener: urllib.request.OpenerDirector | None = None,
    ) -> None:
        if not isinstance(url, str) or not url:
            raise TypeError("Tollgate(url) needs the server URL, e.g. http://127.0.0.1:8080")
        self.base_url = url.rstrip("/")
        self._token = token
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.headers = dict(headers or {})
        self.on_retry = on_retry
        self.max_response_bytes = max_response_bytes
        # No redirects: a bearer token must not follow one to another host. A caller's opener (a proxy, a client
        # certificate…) gets the same guard added, ahead of any redirect handler of its own.
        if opener is None:
            opener = urllib.request.build_opener(_NoRedirect)
        elif not any(isinstance(h, _NoRedirect) for h in getattr(opener, "handlers", ())):
            opener.add_handler(_NoRedirect())
        self._opener = opener

    def token(self) -> str | None:
        t = self._token() if callable(self._token) else self._token
        return t.strip() or None if t else None

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        # A list is the parameter repeated (externalId=a&externalId=b).
        params = {
            k: [_query_value(x) for x in v] if isinstance(v, (list, tuple)) else _query_value(v)
            for k, v in (query or {}).items()
            if v is not None and v != ""
        }
        return self.base_url + path + ("?" + urllib.parse.urlencode(params, doseq=True) if params else "")

    def backoff(self, attempt: int) -> float:
        """The capped exponential backoff of attempt ``attempt`` (from 1), with equal jitter."""
        d = min(self.retry.max_delay, self.retry.initial_delay * 2 ** min(attempt - 1, 30))
        return d / 2 + random.random() * (d / 2)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        raw: tuple[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        idempotent: bool = True,
        max_attempts: int | None = None,
    ) -> Any:
        """Sends once per attempt until an answer that is not transient; answers the parsed JSON (or text).

        ``idempotent=False``: retried only when the server surely did not act (429, 503 unavailable, a
        connection never made), e.g. a claim, whose repeat would answer ``already_executed``.
        """
        refreshed = False
        attempt = 0
        limit = max_attempts or self.retry.max_attempts
        while True:
            attempt += 1
            token = self.token()  # outside the try: a token function's own failure is the caller's to see
            retry_after: float | None = None
            try:
                answer = self._attempt(method, path, query, body, raw, headers, timeout, token)
                if 200 <= answer.status < 300:
                    return answer.json()
                problem = _problem(answer)
                failure = TollgateError(problem, request_id=answer.headers.get("x-request-id"))
                if answer.status == 401 and callable(self._token) and not refreshed:
                    refreshed = True  # a rotated token: ask for a fresh one once
                    attempt -= 1
                    continue
                retry_after = _retry_after(answer.headers.get("retry-after"), problem.get("retryAfter"))
                retryable = _transient(answer.status, failure.code, idempotent)
            except _NeverSent as e:
                failure = _network_error(self.base_url, e.__cause__ or e)
                retryable = True
            except TollgateError:
                raise
            except (OSError, http.client.HTTPException) as e:
                failure = _network_error(self.base_url, e)
                retryable = idempotent
            if not retryable or attempt >= limit:
                raise failure
            delay = min(retry_after, self.retry.max_retry_after) if retry_after is not None else self.backoff(attempt)
            if self.on_retry:
                self.on_retry(RetryInfo(method, path, attempt, delay, failure.status, failure.code, retry_after is not None))
            time.sleep(delay)

    def _attempt(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None,
        body: Any,
        raw: tuple[str, str] | None,
        headers: Mapping[str, str] | None,
        timeout: float | None,
        token: str | None,
    ) -> Answer:
        h = {"accept": "application/json", "user-agent": "tollgate-python", **self.headers, **(headers or {})}
        if token:
            h["authorization"] = f"Bearer {token}"
        data: bytes | None = None
        if raw is not None:
            data = raw[0].encode("utf-8")
            h["content-type"] = raw[1]
        elif body is not None:
            data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
            h["content-type"] = "application/json"
        req = urllib.request.Request(self.url(path, query), data=data, method=method, headers=h)
        try:
            res = self._opener.open(req, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as e:  # a non-2xx answer: read its problem
            with e:
                return Answer(e.code, _lower(e.headers), self._read(e))
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, (ConnectionRefusedError, socket.gaierror)):
                raise _NeverSent() from reason
            raise OSError(str(reason)) from e
        with res:
            return Answer(res.status, _lower(res.headers), self._read(res))

    def _read(self, res: Any) -> bytes:
        # Bounded: a misbehaving server or proxy cannot make the client hold an endless answer.
        data = res.read(self.max_response_bytes + 1)
        if len(data) > self.max_response_bytes:
            raise TollgateError(
                {
                    "type": "urn:tollgate:problem:response_too_large",
                    "title": "Response too large",
                    "status": getattr(res, "status", 0) or 0,
                    "detail": f"the answer is larger than {self.max_response_bytes} bytes",
                    "code": "response_too_large",
                }
            )
        return data


class _NoRedirect(urllib.request.BaseHandler):
    """Answers a redirect as the error it is here, before any redirect handler of the opener could follow it."""

    handler_order = 1  # the opener asks its handlers in this order: this one before the others (500)

    def http_error_redirect(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any) -> None:
        raise urllib.error.HTTPError(req.full_url, code, msg, headers, fp)

    http_error_301 = http_error_302 = http_error_303 = http_error_307 = http_error_308 = http_error_redirect


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _lower(headers: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()} if headers else {}


def _transient(status: int, code: str, idempotent: bool) -> bool:
    if status == 429:
        return True  # refused before anything was done
    if status == 503:
        return code in ("unavailable", "http_503")  # not `halted`: a halt is an answer
    return idempotent and status in (502, 504)


def _retry_after(header: str | None, member: Any) -> float | None:
    """Retry-After in seconds or as an HTTP date; else the problem's ``retryAfter`` member."""
    if header and header.strip():
        v = header.strip()
        if v.isdigit():
            return float(v)
        try:
            at = email.utils.parsedate_to_datetime(v)
            return max(0.0, at.timestamp() - time.time())
        except (TypeError, ValueError):
            pass
    if isinstance(member, (int, float)) and not isinstance(member, bool) and member >= 0:
        return float(member)
    return None


def _problem(answer: Answer) -> dict[str, Any]:
    text = answer.body.decode("utf-8", "replace")
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = None
    p: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
    code = p["code"] if isinstance(p.get("code"), str) else f"http_{answer.status}"
    return {
        **p,
        "type": p["type"] if isinstance(p.get("type"), str) else f"urn:tollgate:problem:{code}",
        "title": p["title"] if isinstance(p.get("title"), str) else f"HTTP {answer.status}",
        "status": answer.status,
        "detail": p["detail"] if isinstance(p.get("detail"), str) else (text[:200] or f"HTTP {answer.status}"),
        "code": code,
    }


def _network_error(base_url: str, e: BaseException) -> TollgateError:
    why = "no answer in time" if isinstance(e, (socket.timeout, TimeoutError)) else (str(e) or type(e).__name__)
    err = TollgateError(
        {
            "type": "urn:tollgate:problem:network_error",
            "title": "Network error",
            "status": 0,
            "detail": f"cannot reach Tollgate at {base_url}: {why}",
            "code": "network_error",
        }
    )
    err.__cause__ = e
    return err
