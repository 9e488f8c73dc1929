"""The tests run against a real Tollgate server: test/e2e/python-client.e2e-spec.ts starts one on a fresh database
and passes its URL and tokens (TOLLGATE_TEST_URL, TOLLGATE_TEST_TOKENS). People decide over REST with their own
tokens, as the web inbox does (X-Tollgate-Channel: web); agent tokens never decide."""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Iterator

import pytest

from tollgate import RetryPolicy, Tollgate

URL = os.environ.get("TOLLGATE_TEST_URL")
TOKENS: dict[str, str] = json.loads(os.environ.get("TOLLGATE_TEST_TOKENS") or "{}")

if not URL or not TOKENS:
    raise pytest.UsageError(
        "These tests need a running Tollgate: run them with `npm test` (or `npx jest test/e2e/python-client.e2e-spec.ts`) "
        "from the repository root, which starts one and sets TOLLGATE_TEST_URL and TOLLGATE_TEST_TOKENS."
    )

#: The policy the tests run under: reads run, `shell rm` is denied, deletions wait for an admin, `flash` expires in 1 s.
POLICY = {
    "rules": [
        {"match": "get_*", "level": "automatic"},
        {"match": "shell(cmd=rm *)", "level": "deny"},
        {"match": "delete_source", "level": "confirm", "approvers": ["admin"]},
        {"match": "flash", "level": "confirm", "timeoutSeconds": 1},
        {"match": "send_email", "level": "confirm"},
    ]
}

#: Fast retries, so outages in tests cost little time (the delays themselves are never asserted).
FAST_RETRY = RetryPolicy(max_attempts=50, initial_delay=0.02, max_delay=0.2)
USER = {"id": "ann", "roles": ["admin"], "name": "Ann"}

_agents = itertools.cycle(sorted((k for k in TOKENS if k.startswith("agent")), key=lambda k: int(k[5:])))


@pytest.fixture(scope="session", autouse=True)
def policy() -> None:
    Tollgate(URL, TOKENS["admin"]).put_policy(POLICY)


@pytest.fixture
def url() -> str:
    assert URL
    return URL


@pytest.fixture
def agent_token() -> str:
    """An agent token of its own per test (each subject has its own bound of open waits)."""
    return TOKENS[next(_agents)]


@pytest.fixture
def agent(agent_token: str) -> Tollgate:
    assert URL
    return Tollgate(URL, agent_token, retry=FAST_RETRY)


def conv_id(name: str) -> str:
    return f"py-{name}-{uuid.uuid4().hex[:8]}"


class Person:
    """Someone deciding in the web inbox: their own token, the REST API, `X-Tollgate-Channel: web`."""

    def __init__(self, token: str) -> None:
        assert URL
        self.client = Tollgate(URL, token, channel="web")

    def pending_in(self, conversation_id: str, count: int = 1, within: float = 20.0) -> list[dict[str, Any]]:
        """The calls of the conversation waiting for this person, once there are `count` of them."""
        end = time.monotonic() + within
        while True:
            items = [a for a in self.client.list_approvals(limit=1000)["items"] if a["conversationId"] == conversation_id]
            if len(items) >= count:
                return items
            if time.monotonic() > end:
                raise AssertionError(f"{count} pending call(s) in {conversation_id} never reached the inbox")
            time.sleep(0.05)

    def decide_in_background(self, conversation_id: str, decide: Callable[[Person, dict[str, Any]], Any]) -> threading.Thread:
        """From another thread: waits for the conversation's call in the inbox, then `decide(person, call)`."""
        errors: list[BaseException] = []

        def work() -> None:
            try:
                decide(self, self.pending_in(conversation_id)[0])
            except BaseException as e:  # surfaced by join()
                errors.append(e)

        thread = _Joining(target=work, errors=errors)
        thread.start()
        return thread


class _Joining(threading.Thread):
    def __init__(self, target: Callable[[], None], errors: list[BaseException]) -> None:
        super().__init__(target=target, daemon=True)
        self.errors = errors

    def join(self, timeout: float | None = 30.0) -> None:
        super().join(timeout)
        assert not self.is_alive(), "the deciding thread did not finish"
        if self.errors:
            raise self.errors[0]


@pytest.fixture
def ann() -> Person:
    """Ann, an admin (deletions need an admin)."""
    return Person(TOKENS["admin"])


@pytest.fixture
def bob() -> Person:
    """Bob, an approver."""
    return Person(TOKENS["approver"])


@pytest.fixture
def admin() -> Tollgate:
    assert URL
    return Tollgate(URL, TOKENS["admin"], channel="web")


class Requests(urllib.request.BaseHandler):
    """Every request a client sends (a handler of its urllib opener): method, path and JSON body."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any]] = []

    def http_request(self, req: urllib.request.Request) -> urllib.request.Request:
        data = req.data if isinstance(req.data, bytes) else None
        self.sent.append((req.get_method(), urllib.parse.urlsplit(req.full_url).path, json.loads(data) if data else None))
        return req

    def paths(self, since: int = 0) -> list[tuple[str, str]]:
        return [(method, path) for method, path, _ in self.sent[since:]]


@pytest.fixture
def requests() -> Requests:
    return Requests()


@pytest.fixture
def counted(agent_token: str, requests: Requests) -> Tollgate:
    """An agent whose requests are counted."""
    assert URL
    return Tollgate(URL, agent_token, retry=FAST_RETRY, opener=urllib.request.build_opener(requests))


@pytest.fixture
def started() -> Iterator[list[threading.Thread]]:
    """Threads a test starts; joined (and their failures raised) at its end."""
    threads: list[threading.Thread] = []
    yield threads
    for t in threads:
        t.join()
