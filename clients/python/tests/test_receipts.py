"""Receipts: the tool's backend checks that Tollgate approved exactly this run; JCS digests agree with the server's."""

from __future__ import annotations

import base64
import http.server
import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from typing import Any, Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from conftest import POLICY, TOKENS, USER, Person, conv_id
from soft_authenticator import SoftAuthenticator
from tollgate import (
    MemoryReplayStore,
    ReceiptVerificationError,
    Tollgate,
    arguments_digest,
    canonical_json,
    current_run,
    verify_receipt,
)


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
    claims = verify_receipt(receipt, jwks_url=jwks_url, tenant="default", tool_name="delete_source", arguments=args, tool_call_id=call_id)
    assert (claims["tcid"], claims["tool"], claims["approvedBy"], claims["iss"]) == (call_id, "delete_source", "ann", "tollgate")
    assert (claims["tenant"], claims["aud"]) == ("default", url)
    assert claims["args"] == arguments_digest(args)

    # The key set itself works as well as its URL.
    with urllib.request.urlopen(jwks_url) as res:
        jwks = json.load(res)
    assert verify_receipt(receipt, jwks=jwks, tenant="default", tool_name="delete_source", arguments=args)["tcid"] == call_id

    with pytest.raises(ReceiptVerificationError) as other_args:
        verify_receipt(receipt, jwks_url=jwks_url, tenant="default", tool_name="delete_source", arguments={**args, "id": "src_4"})
    assert other_args.value.code == "receipt_mismatch"
    with pytest.raises(ReceiptVerificationError) as other_tool:
        verify_receipt(receipt, jwks_url=jwks_url, tenant="default", tool_name="drop_database", arguments=args)
    assert other_tool.value.code == "receipt_mismatch"
    with pytest.raises(ReceiptVerificationError) as other_call:
        verify_receipt(receipt, jwks_url=jwks_url, tenant="default", tool_name="delete_source", arguments=args, tool_call_id="tc_other")
    assert other_call.value.code == "receipt_mismatch"


def test_a_tampered_receipt_does_not_verify(agent: Tollgate, ann: Person, url: str) -> None:
    receipt, args, _ = _claimed(agent, ann)
    header, payload, signature = receipt.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["tool"] = "drop_database"  # a receipt for another tool, with the old signature
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    jwks_url = f"{url}/.well-known/jwks.json"
    with pytest.raises(ReceiptVerificationError) as caught:
        verify_receipt(f"{header}.{forged}.{signature}", jwks_url=jwks_url, tenant="default", tool_name="drop_database", arguments=args)
    assert caught.value.code == "receipt_invalid"
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    with pytest.raises(ReceiptVerificationError):
        verify_receipt(f"{header}.{payload}.{flipped}", jwks_url=jwks_url, tenant="default", tool_name="delete_source", arguments=args)
    with pytest.raises(ReceiptVerificationError) as garbage:
        verify_receipt("not-a-receipt", jwks_url=jwks_url, tenant="default", tool_name="delete_source", arguments=args)
    assert garbage.value.code == "receipt_invalid"


def test_importing_the_client_needs_no_cryptography() -> None:
    # `cryptography` made unimportable: the package and everything but verify_receipt still load.
    code = ("import sys; sys.modules['cryptography'] = None\n"
            "import tollgate, tollgate.receipts\n"
            "try:\n    tollgate.verify_receipt('a.b.c', jwks={'keys': []}, tenant='default', tool_name='t', arguments={})\n"
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


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class _Signer:
    """Receipt-shaped tokens signed with a key of its own, and that key's JWKS: to shape claims Tollgate never signs."""

    def __init__(self, kid: str = "local") -> None:
        self.key = Ed25519PrivateKey.generate()
        self.kid = kid
        x = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.jwks = {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": _b64url(x), "kid": kid, "alg": "EdDSA"}]}

    def sign(self, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": "tollgate", "iat": now, "exp": now + 900, "jti": "j1", "tcid": "tc_1", "conv": "c", "tool": "transfer",
                "args": arguments_digest(TRANSFER), "approvedBy": "policy", "tenant": "default", **claims}
        body = {k: v for k, v in body.items() if v is not None}
        header = _b64url(json.dumps({"alg": "EdDSA", "kid": self.kid, "typ": "tollgate-receipt+jwt"}).encode())
        payload = _b64url(json.dumps(body).encode())
        return f"{header}.{payload}.{_b64url(self.key.sign(f'{header}.{payload}'.encode()))}"


TRANSFER = {"to": "mallory", "amount": 1000000}


def test_a_receipt_of_another_tenant_is_refused_and_the_tenant_must_be_named() -> None:
    signer = _Signer()
    theirs = signer.sign(tenant="tenant-b")  # tenant B's admin let everything through
    with pytest.raises(ReceiptVerificationError) as caught:
        verify_receipt(theirs, jwks=signer.jwks, tenant="default", tool_name="transfer", arguments=TRANSFER)
    assert (caught.value.code, str(caught.value)) == ("receipt_mismatch", "the receipt is for tenant 'tenant-b', not 'default'")
    assert verify_receipt(theirs, jwks=signer.jwks, tenant="tenant-b", tool_name="transfer", arguments=TRANSFER)["tenant"] == "tenant-b"
    with pytest.raises(TypeError, match="verify_receipt needs tenant"):
        verify_receipt(theirs, jwks=signer.jwks, tenant="", tool_name="transfer", arguments=TRANSFER)
    with pytest.raises(TypeError):
        verify_receipt(theirs, jwks=signer.jwks, tool_name="transfer", arguments=TRANSFER)  # type: ignore[call-arg]


def test_the_audience_is_checked_when_given(agent: Tollgate, ann: Person, url: str) -> None:
    receipt, args, _ = _claimed(agent, ann)
    jwks_url = f"{url}/.well-known/jwks.json"
    assert verify_receipt(receipt, jwks_url=jwks_url, tenant="default", audience=url, tool_name="delete_source", arguments=args)["aud"] == url
    with pytest.raises(ReceiptVerificationError) as caught:
        verify_receipt(receipt, jwks_url=jwks_url, tenant="default", audience="https://tollgate.example.com", tool_name="delete_source", arguments=args)
    assert caught.value.code == "receipt_mismatch"


def test_a_replay_store_refuses_a_receipt_seen_before_and_does_not_spend_one_refused(agent: Tollgate, ann: Person, url: str) -> None:
    receipt, args, _ = _claimed(agent, ann)
    store = MemoryReplayStore()
    check = dict(jwks_url=f"{url}/.well-known/jwks.json", tenant="default", tool_name="delete_source", replay_store=store)
    with pytest.raises(ReceiptVerificationError) as other:
        verify_receipt(receipt, arguments={**args, "id": "src_4"}, **check)  # type: ignore[arg-type]
    assert other.value.code == "receipt_mismatch"
    claims = verify_receipt(receipt, arguments=args, **check)  # type: ignore[arg-type]
    with pytest.raises(ReceiptVerificationError) as again:
        verify_receipt(receipt, arguments=args, **check)  # type: ignore[arg-type]
    assert (again.value.code, str(again.value)) == ("receipt_replayed", f"the receipt was used before (jti {claims['jti']})")


def test_the_replay_store_is_asked_with_the_jti_until_exp_plus_tolerance_and_its_failure_fails_the_check() -> None:
    signer = _Signer()
    asked: list[tuple[str, float]] = []

    class Recording:
        def seen(self, jti: str, expires_at: float) -> bool:
            asked.append((jti, expires_at))
            return False

    class Down:
        def seen(self, jti: str, expires_at: float) -> bool:
            raise ConnectionError("the store is down")

    token = signer.sign(jti="j7")
    claims = verify_receipt(token, jwks=signer.jwks, tenant="default", tool_name="transfer", arguments=TRANSFER, replay_store=Recording(), clock_tolerance=5)
    assert asked == [("j7", claims["exp"] + 5)]
    with pytest.raises(ConnectionError):
        verify_receipt(token, jwks=signer.jwks, tenant="default", tool_name="transfer", arguments=TRANSFER, replay_store=Down())


def test_a_receipt_whose_jti_or_tenant_is_missing_or_not_text_is_invalid() -> None:
    signer = _Signer()
    for claims in ({"jti": None}, {"jti": 42}, {"jti": ""}, {"tenant": None}, {"tenant": ["default"]}):
        with pytest.raises(ReceiptVerificationError) as caught:
            verify_receipt(signer.sign(**claims), jwks=signer.jwks, tenant="default", tool_name="transfer", arguments=TRANSFER, replay_store=MemoryReplayStore())
        assert caught.value.code == "receipt_invalid", claims


def test_memory_replay_store_forgets_expired_receipts_and_refuses_rather_than_forget_a_live_one() -> None:
    now = [1000.0]
    store = MemoryReplayStore(max_entries=2, clock=lambda: now[0])
    assert (store.seen("a", 1100), store.seen("a", 1100)) == (False, True)
    assert store.seen("b", 1500) is False
    now[0] = 1200  # a has expired
    assert store.seen("a", 1500) is False
    with pytest.raises(RuntimeError, match="max_entries"):
        store.seen("c", 1500)
    assert store.seen("b", 1500) is True  # nothing live was forgotten
    with pytest.raises(ValueError):
        MemoryReplayStore(max_entries=0)


def test_base64url_is_decoded_strictly(agent: Tollgate, ann: Person, url: str) -> None:
    receipt, args, _ = _claimed(agent, ann)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    # 64 signature bytes take 86 characters: the last carries 2 bits of the signature and 4 that must be zero.
    same_bits = receipt[:-1] + alphabet[alphabet.index(receipt[-1]) ^ 1]
    header, payload, signature = receipt.split(".")
    for bad in (receipt + "$$$", receipt + "=", receipt + "==", receipt + "A", same_bits, f"{header}.{payload}.{signature[:40]}+{signature[41:]}",
                f" {header}.{payload}.{signature}"):
        with pytest.raises(ReceiptVerificationError) as caught:
            verify_receipt(bad, jwks_url=f"{url}/.well-known/jwks.json", tenant="default", tool_name="delete_source", arguments=args)
        assert caught.value.code == "receipt_invalid", bad


class _KeySetServer(http.server.ThreadingHTTPServer):
    fetches = 0


@pytest.fixture
def key_set_server() -> Iterator[tuple[str, _Signer, _KeySetServer]]:
    signer = _Signer()
    body = json.dumps(signer.jwks).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.fetches += 1
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: Any) -> None:
            pass

    server = _KeySetServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json", signer, server
    finally:
        server.shutdown()
        server.server_close()


def test_an_unknown_key_id_does_not_fetch_the_key_set_for_every_receipt(key_set_server: tuple[str, _Signer, _KeySetServer]) -> None:
    jwks_url, signer, server = key_set_server
    assert verify_receipt(signer.sign(), jwks_url=jwks_url, tenant="default", tool_name="transfer", arguments=TRANSFER)["jti"] == "j1"
    for i in range(5):
        stranger = _Signer(kid=f"rotated-{i}")
        with pytest.raises(ReceiptVerificationError) as caught:
            verify_receipt(stranger.sign(), jwks_url=jwks_url, tenant="default", tool_name="transfer", arguments=TRANSFER)
        assert caught.value.code == "receipt_invalid"
    assert server.fetches == 1  # fetched a moment ago: unknown key ids within the cooldown fetch nothing more


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ([2**53, -(2**53), 2**53 + 2, 1152921504606847000, 10**21, 1234567890123456800000000], "[9007199254740992,-9007199254740992,9007199254740994,1152921504606847000,1e+21,1.2345678901234568e+24]"),
        ({"\U0001f600": "\U0001f600"}, '{"\U0001f600":"\U0001f600"}'),
    ],
)
def test_canonical_json_writes_big_integers_as_the_server_writes_them(value: Any, text: str) -> None:
    assert canonical_json(value) == text


@pytest.mark.parametrize("value", [10**21 + 1, 2**53 + 1, 2**60, -(2**60), 10**400, {"s": "\ud800"}, {"\udc00": 1}, ["x\ud83d"], ["\ud83d\ude00"]])
def test_canonical_json_refuses_what_the_server_would_read_otherwise_or_refuse(value: Any) -> None:
    # 10**21 + 1 and 2**60 would be read as 1e+21 and 1152921504606847000: as another integer. A string of lone
    # surrogates (even two that would pair in UTF-16: Python strings are code points) is refused by the server.
    with pytest.raises(ValueError):
        canonical_json(value)


def test_arguments_no_server_could_have_approved_are_another_call() -> None:
    signer = _Signer()
    token = signer.sign(args=arguments_digest({"amount": 10**21}))
    assert verify_receipt(token, jwks=signer.jwks, tenant="default", tool_name="transfer", arguments={"amount": 10**21})["jti"] == "j1"
    for arguments in ({"amount": 10**21 + 1}, {"amount": 1, "note": "\ud800"}):
        with pytest.raises(ReceiptVerificationError) as caught:
            verify_receipt(token, jwks=signer.jwks, tenant="default", tool_name="transfer", arguments=arguments)
        assert caught.value.code == "receipt_mismatch"


def _approved_with_passkey(agent: Tollgate, bob: Person, url: str) -> tuple[str, dict[str, Any], SoftAuthenticator]:
    """A wire whose rule says stepUp: passkey, approved by Bob with his passkey as in the inbox, then claimed."""
    admin = Tollgate(url, TOKENS["admin"])
    admin.put_policy({"rules": [{"match": "wire_money", "level": "confirm", "stepUp": "passkey"}, *POLICY["rules"]]})
    try:
        # WebAuthn refuses IP-address origins: without TOLLGATE_PUBLIC_URL the relying party is localhost:PORT.
        key = SoftAuthenticator(f"http://localhost:{urllib.parse.urlsplit(url).port}")
        options = bob.client.request("POST", "/v1/me/passkeys/options")
        assert "assertion" not in options  # Bob's first passkey: his sign-in is enough
        bob.client.request("POST", "/v1/me/passkeys", body={"response": key.register(options["publicKey"])})
        args = {"to": "ACME", "amount": 950000}
        handle = agent.conversation(conv_id("receipt-passkey"), user=USER).propose("wire_money", args)
        challenge = bob.client.request("POST", f"/v1/tool-calls/{handle.id}/step-up", body={})
        assert challenge["argumentsDigest"] == arguments_digest(args)
        bob.client.request("POST", f"/v1/tool-calls/{handle.id}/decision",
                           body={"decision": "approve", "stepUp": {"passkey": key.assert_(challenge["publicKey"])}})
        claim = agent.claim_execution(handle.id)
    finally:
        admin.put_policy(POLICY)
    return claim["receipt"], claim["arguments"], key


def test_require_step_up_takes_a_receipt_of_a_passkey_approval_and_refuses_others(agent: Tollgate, ann: Person, bob: Person, url: str) -> None:
    receipt, args, key = _approved_with_passkey(agent, bob, url)
    check = dict(jwks_url=f"{url}/.well-known/jwks.json", tenant="default", require_step_up=True)
    claims = verify_receipt(receipt, tool_name="wire_money", arguments=args, **check)  # type: ignore[arg-type]
    assert claims["approvedBy"] == "bob"
    assert claims["stepUp"] == [{"by": "bob", "method": "passkey", "credentialId": key.ids[0], "aaguid": key.aaguid, "uv": True}]

    # Approved without a passkey: no stepUp claim, so refused when one is required, and taken when not.
    plain, plain_args, _ = _claimed(agent, ann)
    assert "stepUp" not in verify_receipt(plain, tool_name="delete_source", arguments=plain_args, jwks_url=check["jwks_url"], tenant="default")
    with pytest.raises(ReceiptVerificationError) as caught:
        verify_receipt(plain, tool_name="delete_source", arguments=plain_args, **check)  # type: ignore[arg-type]
    assert (caught.value.code, str(caught.value)) == ("receipt_mismatch", "the receipt has no stepUp: the call was not approved with a passkey")


def test_require_step_up_refuses_an_empty_or_malformed_claim_even_signed_by_a_trusted_key() -> None:
    signer = _Signer()
    entry = {"by": "bob", "method": "passkey", "credentialId": "cred", "aaguid": "00000000-0000-0000-0000-000000000000", "uv": True}
    for step_up in ([], {}, "passkey", [None], [{**entry, "uv": False}], [{**entry, "method": "totp"}], [{**entry, "by": ""}]):
        with pytest.raises(ReceiptVerificationError) as caught:
            verify_receipt(signer.sign(stepUp=step_up), jwks=signer.jwks, tenant="default", tool_name="transfer", arguments=TRANSFER, require_step_up=True)
        assert caught.value.code == "receipt_mismatch", step_up
    # The same key with a well-formed claim passes: the refusals above are the claim's.
    claims = verify_receipt(signer.sign(stepUp=[entry]), jwks=signer.jwks, tenant="default", tool_name="transfer", arguments=TRANSFER, require_step_up=True)
    assert claims["stepUp"] == [entry]
