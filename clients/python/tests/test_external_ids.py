"""get_conversation(id, external_ids=[...]): only the calls of those external ids, sent as a repeated parameter."""

from __future__ import annotations

import pytest

from conftest import USER, Requests, conv_id
from tollgate import Tollgate


def test_only_the_named_calls_come_back(counted: Tollgate, requests: Requests) -> None:
    conv = counted.conversation(conv_id("ext-ids"), user=USER)
    for name in ("a", "b", "c"):
        assert conv.request_approval("get_source", {"id": name}, id=f"call_{name}").status == "approved"
    since = len(requests.paths())
    view = counted.get_conversation(conv.id, external_ids=["call_c", "nope", "call_a"])
    assert sorted(c["externalId"] for c in view["toolCalls"]) == ["call_a", "call_c"]
    assert view["id"] == conv.id
    [(method, path)] = requests.paths(since)
    # One read; the server took the parameter as three (a list sent as one value would be refused, 400).
    assert (method, path) == ("GET", f"/v1/conversations/{conv.id}")
    assert len(counted.get_conversation(conv.id)["toolCalls"]) == 3


def test_no_external_ids_is_refused_rather_than_read_whole(agent: Tollgate) -> None:
    for bad in ([], "call_a"):
        with pytest.raises(TypeError):
            agent.get_conversation("any", external_ids=bad)  # type: ignore[arg-type]
