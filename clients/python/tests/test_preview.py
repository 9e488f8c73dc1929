"""A proposal's preview: its digest (what the receipt's ``preview`` claim binds) and verify_receipt's check of it."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Person, conv_id

from tollgate import ReceiptVerificationError, Tollgate, current_run, preview_digest, verify_receipt

DIFF = {"kind": "diff", "content": "-replicas: 2\n+replicas: 0", "title": "Scale down"}


@pytest.mark.parametrize(
    ("preview", "digest"),
    [
        # The same vectors as the server's (SHA-256, base64url, of the RFC 8785 form of the given members).
        ({"kind": "diff", "content": "-a\n+b", "title": "é 🚀"}, "7_bK_bIDYoShKjgBdqEJZHY6YHvgT81lg8oDuUZ-ldI"),
        (
            {"email": {"subject": "Paid", "to": "ann@example.com", "cc": None}, "content": "Hi", "kind": "email"},
            "AGL1CP_ZBHPOm0BIfGGZlofx-EExb6A0CtvwVULfdwM",
        ),
        ({"kind": "sql", "content": "DELETE FROM t", "estimatedRows": 3, "digest": "ignored"}, "Yp2QSfpF3CPjF37YEeygH0KmQRFzVYBgyCsjju6FeJg"),
    ],
)
def test_a_preview_digest_is_the_servers_whatever_the_key_order(preview: dict[str, Any], digest: str) -> None:
    assert preview_digest(preview) == digest


def test_a_receipt_binds_the_preview_shown_and_refuses_another(agent: Tollgate, ann: Person, url: str) -> None:
    conv = agent.conversation(conv_id("preview"))
    handle = conv.propose("delete_source", {"id": "src_2"}, preview=DIFF)
    assert handle.tool_call["preview"]["digest"] == preview_digest(DIFF)
    ann.client.approve(handle.id)
    seen: list[tuple[str, dict[str, Any]]] = []

    @conv.guard("delete_source")
    def delete_source(**args: Any) -> None:
        run = current_run()
        assert run is not None
        seen.append((run.receipt, args))

    delete_source(id="src_2", tollgate_id=handle.tool_call["externalId"])
    [(receipt, args)] = seen
    check = dict(jwks_url=f"{url}/.well-known/jwks.json", tenant="default", tool_name="delete_source", arguments=args)
    assert verify_receipt(receipt, preview=DIFF, **check)["preview"] == preview_digest(DIFF)
    with pytest.raises(ReceiptVerificationError) as other:
        verify_receipt(receipt, preview={**DIFF, "content": "-replicas: 2\n+replicas: 1"}, **check)
    assert other.value.code == "receipt_mismatch"
