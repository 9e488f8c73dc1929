"""A reverse proxy in front of the real server, for what the network and load balancers do to a client: refuse a
request with 503 (as a load balancer does while no instance is up), hold a request until the test lets it through,
or forward a request and lose its answer (the connection drops after the server acted)."""

from __future__ import annotations

import http.server
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Rule:
    path: str
    refuse: int = 0
    retry_after: str = "0"
    lose: int = 0
    hold: threading.Event | None = None
    held: threading.Event = field(default_factory=threading.Event)
    #: Set when a request to ``path`` arrives.
    seen: threading.Event = field(default_factory=threading.Event)


class Proxy(http.server.ThreadingHTTPServer):
    """Forwards everything to ``upstream`` except what its rules say, for paths ending in a rule's ``path``."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.rules: list[_Rule] = []
        #: Requests refused with 503, and requests forwarded whose answer was lost.
        self.refused = 0
        self.lost = 0
        super().__init__(("127.0.0.1", 0), _Forward)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def refuse(self, path: str, times: int, retry_after: str = "0") -> None:
        """Answers the first ``times`` requests to ``path`` with 503 and this Retry-After, without forwarding them."""
        self.rules.append(_Rule(path, refuse=times, retry_after=retry_after))

    def lose_answer(self, path: str, times: int = 1) -> None:
        """Forwards the first ``times`` POSTs to ``path``, then drops the connection instead of answering."""
        self.rules.append(_Rule(path, lose=times))

    def hold(self, path: str) -> _Rule:
        """Holds every request to ``path`` until ``rule.hold`` is set; ``rule.held`` is set once one waits."""
        rule = _Rule(path, hold=threading.Event())
        self.rules.append(rule)
        return rule

    def watch(self, path: str) -> threading.Event:
        """An event set when a request to ``path`` arrives."""
        rule = _Rule(path)
        self.rules.append(rule)
        return rule.seen

    def stop(self) -> None:
        for rule in self.rules:
            if rule.hold is not None:
                rule.hold.set()
        self.shutdown()
        self.server_close()


class _Forward(http.server.BaseHTTPRequestHandler):
    server: Proxy

    def _handle(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0)) or None
        proxy = self.server
        path = self.path.split("?")[0]
        lose = False
        for rule in proxy.rules:
            if not path.endswith(rule.path):
                continue
            rule.seen.set()
            if rule.refuse > 0:
                rule.refuse -= 1
                proxy.refused += 1
                self._unavailable(rule.retry_after)
                return
            if rule.hold is not None:
                rule.held.set()
                rule.hold.wait(60)
            if rule.lose > 0 and self.command == "POST":
                rule.lose -= 1
                lose = True
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
        req = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command, headers=headers)
        try:
            res = urllib.request.urlopen(req, timeout=70)
        except urllib.error.HTTPError as e:
            res = e
        with res:
            data = res.read()
            if lose:  # the server acted; the client never hears of it
                proxy.lost += 1
                self.close_connection = True
                return
            self.send_response(res.status)
            for k, v in res.headers.items():
                if k.lower() not in ("transfer-encoding", "connection", "content-length", "keep-alive"):
                    self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def _unavailable(self, retry_after: str) -> None:
        page = b"<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>"
        self.send_response(503)
        self.send_header("content-type", "text/html")
        self.send_header("retry-after", retry_after)
        self.send_header("content-length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    do_GET = do_POST = do_PUT = _handle

    def log_message(self, *args: Any) -> None:
        pass
