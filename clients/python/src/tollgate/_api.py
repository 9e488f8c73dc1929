"""What a conversation needs of the client: the piece ``client`` and ``conversation`` share. ``Tollgate`` (client.py)
has all of it; conversation.py types against this protocol instead of importing the client, so the client can
import conversations at the top (no import cycle between the two modules)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence

from ._reports import ReportMode, Reports

#: A JSON object as the API answers it.
JsonObject = dict[str, Any]


class ClientApi(Protocol):
    """The client's operations a conversation and its calls use (``Tollgate`` is one)."""

    on_report_error: Callable[[BaseException, JsonObject], None] | None
    #: How a guarded call reports its result by default: ``"background"`` or ``"await"``.
    report: ReportMode
    reports: Reports

    def request(self, method: str, path: str, **options: Any) -> Any: ...

    def get_conversation(self, id: str, *, external_ids: Sequence[str] | None = None) -> JsonObject: ...

    def get_tool_call(self, id: str, *, wait: float | None = None) -> JsonObject: ...

    def wait_for_decision(self, id_or_call: str | Mapping[str, Any], *, timeout: float | None = None) -> JsonObject: ...

    def claim_execution(self, id: str) -> JsonObject: ...

    def report_result(self, id: str, result: Mapping[str, Any]) -> JsonObject: ...
