"""The end user's own token (``user={"token": ...}``): Tollgate verifies it and records the user as verified; a
token Tollgate would take as a bearer credential is refused, and the refusal comes back as a TollgateError."""

from __future__ import annotations

import pytest

from conftest import TOKENS, USER, conv_id
from tollgate import Tollgate, TollgateError


def test_a_user_verified_from_their_own_token(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("verified"), user={"token": TOKENS["user_token"]})
    assert conv.view["user"] == {"id": "ann", "roles": ["admin"], "name": "Ann", "assurance": "verified"}
    assert conv.refresh()["user"]["assurance"] == "verified"


def test_a_user_the_agent_names_is_asserted(agent: Tollgate) -> None:
    conv = agent.conversation(conv_id("asserted"), user=USER)
    assert conv.view["user"] == {**USER, "assurance": "asserted"}


def test_a_tollgate_credential_is_refused_as_a_user_token(agent: Tollgate) -> None:
    with pytest.raises(TollgateError) as refused:
        agent.conversation(conv_id("credential"), user={"token": TOKENS["admin"]})
    assert refused.value.status == 400
    assert refused.value.code == "user_token_is_credential"
    assert TOKENS["admin"] not in str(refused.value)
