"""Tollgate's Python client: ask Tollgate before an agent runs a tool, wait for the decision, run it once.

    from tollgate import Tollgate
    tollgate = Tollgate("http://127.0.0.1:8080", token)
    conv = tollgate.conversation("conv-1", user={"id": "ann", "roles": ["admin"]})

    @conv.guard("delete_source")
    def delete_source(id: str) -> dict: ...

The core is the standard library only; ``verify_receipt`` needs ``cryptography`` (imported when a receipt is
checked), ``tollgate.langgraph`` needs LangGraph and ``tollgate.langchain`` LangChain 1.
"""

from ._http import RetryInfo, RetryPolicy
from ._reports import ReportMode
from .client import Tollgate
from .conversation import ApprovalOutcome, Conversation, RunContext, ToolCallHandle, current_run, outcome_of
from .errors import ApprovalTimeout, ReceiptVerificationError, ToolCallRejected, TollgateError
from .jcs import arguments_digest, canonical_json, preview_digest
from .receipts import MemoryReplayStore, ReceiptClaims, ReceiptStepUp, ReplayStore, verify_receipt

__version__ = "0.5.0"

__all__ = [
    "ApprovalOutcome",
    "ApprovalTimeout",
    "Conversation",
    "MemoryReplayStore",
    "ReceiptClaims",
    "ReceiptStepUp",
    "ReceiptVerificationError",
    "ReplayStore",
    "ReportMode",
    "RetryInfo",
    "RetryPolicy",
    "RunContext",
    "Tollgate",
    "TollgateError",
    "ToolCallHandle",
    "ToolCallRejected",
    "arguments_digest",
    "canonical_json",
    "current_run",
    "outcome_of",
    "preview_digest",
    "verify_receipt",
]
