"""What the network and the server do to an agent: a real 429 (too many open waits, Retry-After: 1), a 503 from a
load balancer in front of Tollgate during a deploy, an address nobody listens on, an answer too large to hold."""

from __future__ import annotations

import http.server
import threading
import urllib.request
from typing import Any, Iterator

import pytest

from conftest import FAST_RETRY, USER, Person, conv_id
from proxy import Proxy
from tollgate import RetryInfo, RetryPolicy, Tollgate, TollgateError


def test_a_wait_refused_with_429_is_retried_after_the_servers_retry_after(url: str, agent_token: str, ann: Person) -> None:
    # The server holds at most two open waits per subject (the e2e wrapper's setting): three waiters of one agent
    # meet a real 429 rate_limited with Retry-After, and each goes on until it has its decision.
    retries: list[RetryInfo] = []
    refused = threading.Event()

    def on_retry(info: RetryInfo) -> None:
        retries.append(info)
        refused.set()

    agent = Tollgate(url, agent_token, on_retry=on_retry)
    handles = [agent.conversation(conv_id(f"busy{i}"), user=USER).propose("delete_source", {"id": f"src_{i}"}) for i in range(3)]
    outcomes: dict[str, str] = {}

    def wait(h: Any) -> None:
        outcomes[h.id] = h.wait().status

    waiters = [threading.Thread(target=wait, args=(h,), daemon=True) for h in handles]
    for w in waiters:
        w.start()
    assert refused.wait(30), "no waiter was refused"
    for h in handles:
        ann.client.approve(h.id)
    for w in waiters:
        w.join(30)
    assert outcomes == {h.id: "approved" for h in handles}
    first = retries[0]
    assert (first.method, first.status, first.code, first.retry_after, first.delay) == ("GET", 429, "rate_limited", True, 1.0)
    assert first.path.startswith("/v1/tool-calls/tc_")


@pytest.fixture
def balancer(url: str, request: pytest.FixtureRequest) -> Iterator[Proxy]:
    """A load balancer in front of the real server that answers `refuse` requests to paths ending in `path` with
    503 and Retry-After: 0, as one does while no instance is up, and forwards everything else."""
    path, refuse = request.param
    lb = Proxy(url)
    lb.refuse(path, refuse)
    yield lb
    lb.stop()


@pytest.mark.parametrize("balancer", [("/v1/conversations", 2)], indirect=True)
def test_503_from_a_load_balancer_is_retried_after_its_retry_after(balancer: Proxy, agent_token: str) -> None:
    retries: list[RetryInfo] = []
    agent = Tollgate(balancer.url, agent_token, on_retry=retries.append)
    conv = agent.conversation(conv_id("lb"), user=USER)
    assert conv.view["status"] == "active"
    assert balancer.refused == 2
    assert [(r.path, r.attempt, r.status, r.code, r.retry_after, r.delay) for r in retries] == [
        ("/v1/conversations", 1, 503, "http_503", True, 0.0),
        ("/v1/conversations", 2, 503, "http_503", True, 0.0),
    ]


@pytest.mark.parametrize("balancer", [("/execution", 1)], indirect=True)
def test_503_before_a_claim_is_retried_too_the_claim_never_reached_the_server(balancer: Proxy, agent_token: str, ann: Person,
                                                                               started: list[threading.Thread]) -> None:
    retries: list[RetryInfo] = []
    conv = Tollgate(balancer.url, agent_token, on_retry=retries.append).conversation(conv_id("lb-claim"), user=USER)
    ran: list[str] = []

    @conv.guard("delete_source")
    def delete_source(id: str) -> str:
        ran.append(id)
        return id

    # A call people approve is claimed on its own request (an automatic one is claimed in its proposal).
    started.append(ann.decide_in_background(conv.id, lambda p, c: p.client.approve(c["id"])))
    assert delete_source(id="s1") == "s1"
    assert ran == ["s1"]
    assert [(r.status, r.code) for r in retries] == [(503, "http_503")]
    conv.tollgate.flush()
    assert conv.refresh()["toolCalls"][0]["status"] == "completed"


@pytest.mark.parametrize("balancer", [("/v1/tools/anything", 100)], indirect=True)
def test_the_client_gives_up_after_max_attempts_with_the_last_problem(balancer: Proxy, agent_token: str) -> None:
    agent = Tollgate(balancer.url, agent_token, retry=RetryPolicy(max_attempts=3, initial_delay=0.01))
    with pytest.raises(TollgateError) as caught:
        agent.get_tool("anything")
    assert (caught.value.status, caught.value.code) == (503, "http_503")
    assert "503 Service Temporarily Unavailable" in caught.value.detail
    assert balancer.refused == 3


def test_an_address_nobody_listens_on_is_a_network_error_after_the_retries(agent_token: str) -> None:
    retries: list[RetryInfo] = []
    agent = Tollgate("http://127.0.0.1:9", agent_token, retry=RetryPolicy(max_attempts=3, initial_delay=0.01), on_retry=retries.append)
    with pytest.raises(TollgateError) as caught:
        agent.get_tool("x")
    assert (caught.value.status, caught.value.code) == (0, "network_error")
    assert "cannot reach Tollgate at http://127.0.0.1:9" in caught.value.detail
    assert [r.code for r in retries] == ["network_error", "network_error"]


def test_an_answer_larger_than_max_response_bytes_is_refused_not_read_whole(url: str, agent_token: str) -> None:
    conv = Tollgate(url, agent_token, retry=FAST_RETRY).conversation(conv_id("big"), user=USER, metadata={"notes": "x" * 20_000})
    small = Tollgate(url, agent_token, max_response_bytes=4096)
    with pytest.raises(TollgateError) as caught:
        small.get_conversation(conv.id)
    assert caught.value.code == "response_too_large"


def test_a_token_function_is_asked_again_after_a_401(url: str, agent_token: str) -> None:
    issued: list[str] = []

    def token() -> str:
        t = agent_token + "x" if not issued else agent_token  # the first one no longer verifies
        issued.append(t)
        return t

    conv = Tollgate(url, token).conversation(conv_id("rotate"), user=USER)
    assert conv.id.startswith("py-rotate-")
    assert issued == [agent_token + "x", agent_token]


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Another host: records what reaches it. The redirector sends everything there."""

    def do_GET(self) -> None:
        server: Any = self.server
        if server.target is None:
            server.seen.append(dict(self.headers.items()))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")
            return
        self.send_response(302)
        self.send_header("location", server.target + self.path)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _serve(target: str | None) -> Any:
    server: Any = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.target, server.seen = target, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_no_opener_follows_a_redirect_with_the_token_not_even_one_the_caller_gives(agent_token: str) -> None:
    other = _serve(None)
    redirector = _serve(f"http://127.0.0.1:{other.server_address[1]}")
    try:
        # The caller's own opener follows redirects (urllib's default): the client still does not.
        for opener in (None, urllib.request.build_opener(), urllib.request.build_opener(urllib.request.ProxyHandler({}))):
            agent = Tollgate(f"http://127.0.0.1:{redirector.server_address[1]}", agent_token, opener=opener,
                             retry=RetryPolicy(max_attempts=1))
            with pytest.raises(TollgateError) as caught:
                agent.get_tool("anything")
            assert caught.value.status == 302
        assert other.seen == []  # the token never went to the other host
    finally:
        for s in (redirector, other):
            s.shutdown()
            s.server_close()
