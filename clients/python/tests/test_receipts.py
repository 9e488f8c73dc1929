"""Receipts: the tool's backend checks that Tollgate approved exactly this run; JCS digests agree with the server's."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import urllib.request
from typing import Any

import pytest

from conftest import USER, Person, conv_id
from tollgate import ReceiptVerificationError, Tollgate, arguments_digest, canonical_json, current_run, verify_receipt


def _claimed(agent: Tollgate, ann: Person) -> tuple[str, dict[str, Any], str]:
    """A delete approved by Ann with edited arguments, run through the guard: its receipt, arguments and call id."""
    conv = agent.conversation(conv_id("receipt"), user=USER)
    handle = conv.propose("delete_source", {"id": "src_2"})
    ann.client.approve(handle.id, arguments={"id": "src_3", "options": {"force": True, "ratio": 0.5, "tags": ["é", "😀"]}})
    seen: list[tuple[str, dict[str, Any]]] = []

    @conv.guard("delete_source")
    def delete_source(**args: Any) -> None:
        run = current_run()
        assert run is not None
        seen.append((run.receipt, args))

    delete_source(id="src_2", tollgate_id=handle.tool_call["externalId"])
    [(receipt, args)] = seen
    return receipt, args, handle.id


def test_a_receipt_verifies_for_the_arguments_that_ran_and_for_nothing_else(agent: Tollgate, ann: Person, url: str) -> None:
    receipt, args, call_id = _claimed(agent, ann)
    jwks_url = f"{url}/.well-known/jwks.json"
    claims = verify_receipt(receipt, jwks_url=jwks_url, tool_name="delete_source", arguments=args, tool_call_id=call_id)
    assert (claims["tcid"], claims["tool"], claims["approvedBy"], claims["iss"]) == (call_id, "delete_source", "ann", "tollgate")
    assert claims["args"] == arguments_digest(args)

    # The key set itself works as well as its URL.
    with urllib.request.urlopen(jwks_url) as res:
        jwks = json.load(res)
    assert verify_receipt(receipt, jwks=jwks, tool_name="delete_source", arguments=args)["tcid"] == call_id

    with pytest.raises(ReceiptVerificationError) as other_args:
        verify_receipt(receipt, jwks_url=jwks_url, tool_name="delete_source", arguments={**args, "id": "src_4"})
    assert other_args.value.code == "receipt_mismatch"
    with pytest.raises(ReceiptVerificationError) as other_tool:
        verify_receipt(receipt, jwks_url=jwks_url, tool_name="drop_database", arguments=args)
    assert other_tool.value.code == "receipt_mismatch"
    with pytest.raises(ReceiptVerificationError) as other_call:
        verify_receipt(receipt, jwks_url=jwks_url, tool_name="delete_source", arguments=args, tool_call_id="tc_other")
    assert other_call.value.code == "receipt_mismatch"


def test_a_tampered_receipt_does_not_verify(agent: Tollgate, ann: Person, url: str) -> None:
    receipt, args, _ = _claimed(agent, ann)
    header, payload, signature = receipt.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["tool"] = "drop_database"  # a receipt for another tool, with the old signature
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    jwks_url = f"{url}/.well-known/jwks.json"
    with pytest.raises(ReceiptVerificationError) as caught:
        verify_receipt(f"{header}.{forged}.{signature}", jwks_url=jwks_url, tool_name="drop_database", arguments=args)
    assert caught.value.code == "receipt_invalid"
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    with pytest.raises(ReceiptVerificationError):
        verify_receipt(f"{header}.{payload}.{flipped}", jwks_url=jwks_url, tool_name="delete_source", arguments=args)
    with pytest.raises(ReceiptVerificationError) as garbage:
        verify_receipt("not-a-receipt", jwks_url=jwks_url, tool_name="delete_source", arguments=args)
    assert garbage.value.code == "receipt_invalid"


def test_importing_the_client_needs_no_cryptography() -> None:
    # `cryptography` made unimportable: the package and everything but verify_receipt still load.
    code = ("import sys; sys.modules['cryptography'] = None\n"
            "import tollgate, tollgate.receipts\n"
            "try:\n    tollgate.verify_receipt('a.b.c', jwks={'keys': []}, tool_name='t', arguments={})\n"
            "except ImportError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "pip install 'tollgate[receipts]'" in r.stdout


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"b": 1.0, "a": [1e21, 1e-7, 0.1, -0.0, 5e-324, 1.5e300, 123456789012345680000.0]},
         '{"a":[1e+21,1e-7,0.1,0,5e-324,1.5e+300,123456789012345680000],"b":1}'),
        ({"\ue000": 1, "\U0001f600": 2, "é": True, "a\nb\u2028\"": None}, '{"a\\nb\u2028\\"":null,"é":true,"\U0001f600":2,"\ue000":1}'),
        ([{"z": {"y": [], "x": {}}}, "\u0001"], '[{"z":{"x":{},"y":[]}},"\\u0001"]'),
    ],
)
def test_canonical_json_writes_what_rfc_8785_writes(value: Any, text: str) -> None:
    assert canonical_json(value) == text
