"""The approval loop step by step, for flows the guard decorator does not fit: propose a call, wait for its
decision, claim the run (exactly once), let the tool's backend check the signed receipt, report the result.

    npm start                                                               # Tollgate, in another terminal
    pip install './clients/python[receipts]'                                # verify_receipt needs cryptography
    TOLLGATE_TOKEN=$(npx tollgate token --sub support-bot --role agent) python examples/python/custom_flow.py
    # it prints the call's id: npx tollgate approve tc_… (or reject it, or decide in the web inbox)
"""

from __future__ import annotations

import os
import time
from typing import Any, Mapping

from tollgate import MemoryReplayStore, Tollgate, verify_receipt

URL = os.environ.get("TOLLGATE_URL", "http://127.0.0.1:8080")
TENANT = os.environ.get("TOLLGATE_TENANT", "default")  # whose approvals this backend acts on
SOURCES = {"src_1": "Pricing FAQ", "src_2": "Old pricing FAQ", "src_3": "Archive"}
_used = MemoryReplayStore()  # receipts already used: a second use raises ReceiptVerificationError (receipt_replayed)


def backend_delete(arguments: Mapping[str, Any], receipt: str) -> dict[str, Any]:
    """The tool's own backend: it runs only what Tollgate approved for its tenant, once, whoever calls it."""
    claims = verify_receipt(receipt, jwks_url=f"{URL}/.well-known/jwks.json", tenant=TENANT, tool_name="delete_source",
                            arguments=arguments, replay_store=_used)
    return {"deleted": arguments["id"], "existed": SOURCES.pop(arguments["id"], None) is not None, "approvedBy": claims["approvedBy"]}


def main(token: str, conversation_id: str | None = None) -> str:
    tollgate = Tollgate(URL, token)
    conv = tollgate.conversation(conversation_id or f"python-flow-{int(time.time())}", user={"id": "ann", "roles": ["admin"]})

    # id: your framework's tool-call id. Proposing it again (after a crash, a retry) answers the same call.
    handle = conv.propose("delete_source", {"id": "src_2"}, id="call_1", annotations={"destructive": True},
                          display={"title": "Delete source src_2"})
    print(f"{handle.id} is {handle.status}: npx tollgate approve {handle.id}", flush=True)

    outcome = handle.wait()  # long-polls; never raises for a refusal
    if not outcome.approved:
        print(f"Not run: {outcome.status}, {(outcome.decision or {}).get('reason')}")
        return outcome.status

    claim = handle.claim()  # {toolCall, arguments, receipt}; a second claim is refused (409 already_executed)
    try:
        result = backend_delete(claim["arguments"], claim["receipt"])
    except Exception as e:
        handle.report("failed", error=str(e))
        raise
    handle.report("succeeded", output=result)
    print(f"Ran with {claim['arguments']}: {result}; the call is now {handle.status}")
    return handle.status


if __name__ == "__main__":
    main(os.environ["TOLLGATE_TOKEN"])
