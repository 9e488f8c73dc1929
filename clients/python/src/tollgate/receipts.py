"""Receipts: check, in a tool's own backend, that Tollgate approved running this tool with exactly these arguments.

A receipt is a compact JWS (EdDSA/Ed25519, ``typ: tollgate-receipt+jwt``). Checking its signature needs the
``cryptography`` package (``pip install 'tollgate[receipts]'``); it is imported only here, when a receipt is checked.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
import time
import urllib.request
from typing import Any, Callable, Literal, Mapping, Protocol, TypedDict

from .errors import ReceiptVerificationError
from .jcs import arguments_digest, preview_digest

RECEIPT_TYP = "tollgate-receipt+jwt"
_REQUIRED = ("tcid", "conv", "tool", "args", "approvedBy", "tenant", "iat", "exp", "jti")
_TEXT = ("tcid", "conv", "tool", "args", "approvedBy", "tenant", "jti")
_JWKS_TTL = 300.0  # the server lets JWKS be cached for 5 minutes
_JWKS_COOLDOWN = 30.0  # an unknown key id fetches the set again at most this often (as jose's cooldownDuration)
_B64URL = re.compile(r"[A-Za-z0-9_-]*")


class ReceiptStepUp(TypedDict):
    """A passkey an approval of the call was made with, user verification included."""

    #: The ``sub`` of the person who approved with it.
    by: str
    method: Literal["passkey"]
    #: The passkey's credential id (base64url).
    credentialId: str
    #: The authenticator model's AAGUID (all zeros when it does not say).
    aaguid: str
    uv: Literal[True]


class _ReceiptClaims(TypedDict):
    """What a receipt vouches for."""

    tcid: str
    conv: str
    tool: str
    #: SHA-256, hex, of the JCS arguments to run.
    args: str
    #: The ``sub`` of the person who approved, or ``policy``.
    approvedBy: str
    #: The tenant of the call (``default`` for tokens without a ``tenant`` claim).
    tenant: str
    #: Who the receipt is for: the server's TOLLGATE_RECEIPT_AUDIENCE, else its TOLLGATE_PUBLIC_URL, else its URL.
    aud: str
    iss: str
    iat: int
    exp: int
    jti: str


class ReceiptClaims(_ReceiptClaims, total=False):
    """What a receipt vouches for."""

    #: Only when an approval was made with a passkey (the call's rule says ``stepUp: passkey``): one entry per such
    #: approval, each of a quorum's. The whole assertion is in the approval's audit event.
    stepUp: list[ReceiptStepUp]
    #: Only when the proposal carried a preview: its digest (SHA-256, base64url, of its JCS form).
    preview: str


class ReplayStore(Protocol):
    """Where verify_receipt remembers receipts it accepted, to refuse them a second time."""

    def seen(self, jti: str, expires_at: float) -> bool:
        """Records ``jti`` until ``expires_at`` (seconds since the epoch; the receipt is refused as expired after it
        anyway) and answers whether it was recorded before. Atomic per ``jti`` (a shared store: Redis ``SET NX EX``,
        a unique row). An exception it raises fails the verification."""
        ...


class MemoryReplayStore:
    """A ReplayStore in this process's memory, thread-safe, for a backend that runs as one process. It holds at most
    ``max_entries`` receipts that have not expired; past that it raises rather than forget one that could then be
    replayed."""

    def __init__(self, max_entries: int = 100_000, *, clock: Callable[[], float] = time.time) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise ValueError("max_entries must be a whole number above 0")
        self._max = max_entries
        self._clock = clock
        self._entries: dict[str, float] = {}
        self._lock = threading.Lock()

    def seen(self, jti: str, expires_at: float) -> bool:
        with self._lock:
            now = self._clock()
            known = self._entries.get(jti)
            if known is not None and known >= now:
                return True
            if known is None and len(self._entries) >= self._max:
                self._entries = {k: until for k, until in self._entries.items() if until >= now}
                if len(self._entries) >= self._max:
                    raise RuntimeError(f"MemoryReplayStore holds {self._max} unexpired receipts; give it a larger max_entries")
            self._entries[jti] = expires_at
            return False


_cache: dict[str, tuple[float, dict[str, Any]]] = {}
_cache_lock = threading.Lock()


def verify_receipt(
    receipt: str,
    *,
    tool_name: str,
    arguments: Mapping[str, Any],
    tenant: str,
    jwks_url: str | None = None,
    jwks: Mapping[str, Any] | None = None,
    audience: str | None = None,
    tool_call_id: str | None = None,
    replay_store: ReplayStore | None = None,
    require_step_up: bool = False,
    preview: Mapping[str, Any] | None = None,
    issuer: str = "tollgate",
    clock_tolerance: float = 30.0,
    timeout: float = 10.0,
) -> ReceiptClaims:
    """The receipt's claims when Tollgate approved running ``tool_name`` with exactly ``arguments`` in ``tenant``:
    an Ed25519 signature by a key of the JWKS, ``typ`` tollgate-receipt+jwt, the issuer, not expired, the tenant,
    the audience (when given), the tool, the call (when given), ``args`` = sha256(JCS(arguments)), a passkey's approval
    (with ``require_step_up``), and a ``jti`` not seen before (with a ``replay_store``). Raises ReceiptVerificationError
    otherwise.

    ``tenant`` is required: the tenant whose approvals this backend acts on (the ``tenant`` claim of its agents'
    tokens, ``default`` when they carry none); one key signs every tenant's receipts. ``audience``, when given, must
    be the receipt's ``aud``. A backend that runs one given call should pass ``tool_call_id``. ``jwks_url`` is
    ``<tollgate>/.well-known/jwks.json`` (fetched, cached 5 minutes, fetched again for an unknown key id at most
    every 30 seconds); or pass ``jwks``, the key set itself. ``require_step_up=True`` insists on the ``stepUp``
    claim: the call was approved with a person's passkey (its rule says ``stepUp: passkey``); a backend whose tool
    must never run on a plain approval passes it, so that a policy edited to drop the passkey does not go unnoticed.
    ``preview``: the preview of what the backend is about to do (a diff, the SQL, the email), as the agent proposed
    it; the receipt's ``preview`` claim must be its digest (``receipt_mismatch`` when it differs, or when the receipt
    has none: the people who approved were shown none).
    """
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("verify_receipt needs the cryptography package: pip install 'tollgate[receipts]'") from e
    if jwks is None and jwks_url is None:
        raise TypeError("verify_receipt needs jwks_url or jwks")
    if not isinstance(tenant, str) or not tenant:
        raise TypeError("verify_receipt needs tenant: the tenant whose approvals this backend acts on "
                        "(its agents' token claim `tenant`, `default` when they carry none)")
    if audience is not None and (not isinstance(audience, str) or not audience):
        raise TypeError("verify_receipt: audience must be a non-empty string")

    parts = receipt.split(".") if isinstance(receipt, str) else []
    if len(parts) != 3:
        raise ReceiptVerificationError("receipt_invalid", "the receipt is not a compact JWS")
    try:
        header = json.loads(_b64(parts[0]).decode("utf-8"))
        payload = json.loads(_b64(parts[1]).decode("utf-8"))
        signature = _b64(parts[2])
    except (ValueError, TypeError) as e:
        raise ReceiptVerificationError("receipt_invalid", f"the receipt does not decode: {e}") from e
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise ReceiptVerificationError("receipt_invalid", "the receipt does not decode")
    if header.get("alg") != "EdDSA":
        raise ReceiptVerificationError("receipt_invalid", f"the receipt's algorithm is {header.get('alg')!r}, not EdDSA")
    if header.get("typ") != RECEIPT_TYP:
        raise ReceiptVerificationError("receipt_invalid", f"the receipt's typ is {header.get('typ')!r}, not {RECEIPT_TYP}")
    if header.get("crit"):
        raise ReceiptVerificationError("receipt_invalid", "the receipt has critical header parameters")

    key = _find_key(header.get("kid"), jwks, jwks_url, timeout)
    try:
        Ed25519PublicKey.from_public_bytes(_b64(key["x"])).verify(signature, f"{parts[0]}.{parts[1]}".encode("ascii"))
    except (InvalidSignature, ValueError, KeyError, TypeError) as e:
        raise ReceiptVerificationError("receipt_invalid", "the receipt's signature does not verify") from e

    missing = [c for c in _REQUIRED if c not in payload]
    if missing:
        raise ReceiptVerificationError("receipt_invalid", f"the receipt lacks {', '.join(missing)}")
    bad = next((c for c in _TEXT if not isinstance(payload[c], str) or not payload[c]), None)
    if bad:
        raise ReceiptVerificationError("receipt_invalid", f"the receipt's {bad} is not a non-empty string")
    if payload.get("iss") != issuer:
        raise ReceiptVerificationError("receipt_invalid", f"the receipt's issuer is {payload.get('iss')!r}, not {issuer!r}")
    now = time.time()
    if not isinstance(payload["exp"], (int, float)) or now - clock_tolerance >= payload["exp"]:
        raise ReceiptVerificationError("receipt_expired", "the receipt has expired")
    if not isinstance(payload["iat"], (int, float)) or payload["iat"] > now + clock_tolerance:
        raise ReceiptVerificationError("receipt_invalid", "the receipt is issued in the future")
    if payload["tenant"] != tenant:
        raise ReceiptVerificationError("receipt_mismatch", f"the receipt is for tenant {payload['tenant']!r}, not {tenant!r}")
    aud = payload.get("aud")
    if audience is not None and aud != audience and not (isinstance(aud, list) and audience in aud):
        raise ReceiptVerificationError("receipt_mismatch", f"the receipt is for audience {aud!r}, not {audience!r}")
    if payload["tool"] != tool_name:
        raise ReceiptVerificationError("receipt_mismatch", f"the receipt approves {payload['tool']!r}, not {tool_name!r}")
    if tool_call_id is not None and payload["tcid"] != tool_call_id:
        raise ReceiptVerificationError("receipt_mismatch", f"the receipt is for tool call {payload['tcid']}, not {tool_call_id}")
    try:
        digest = arguments_digest(dict(arguments))
    except (ValueError, TypeError) as e:  # a lone surrogate, an inexact integer, NaN: nothing Tollgate approved
        raise ReceiptVerificationError("receipt_mismatch", f"the arguments are not JSON Tollgate could have approved: {e}") from e
    if payload["args"] != digest:
        raise ReceiptVerificationError("receipt_mismatch", "the receipt approves other arguments")
    if require_step_up and not _has_step_up(payload.get("stepUp")):
        raise ReceiptVerificationError("receipt_mismatch", "the receipt has no stepUp: the call was not approved with a passkey")
    if preview is not None:
        claim = payload.get("preview")
        if not isinstance(claim, str) or not claim:
            raise ReceiptVerificationError("receipt_mismatch", "the receipt has no preview: the people who approved were shown none")
        try:
            shown = preview_digest(dict(preview))
        except (ValueError, TypeError) as e:
            raise ReceiptVerificationError("receipt_mismatch", f"the preview is not JSON Tollgate could have shown: {e}") from e
        if claim != shown:
            raise ReceiptVerificationError("receipt_mismatch", "the receipt approves another preview than the one given")
    # Last, so that a receipt refused above is not spent.
    if replay_store is not None and replay_store.seen(payload["jti"], payload["exp"] + clock_tolerance):
        raise ReceiptVerificationError("receipt_replayed", f"the receipt was used before (jti {payload['jti']})")
    return payload  # type: ignore[return-value]


def _has_step_up(claim: Any) -> bool:
    """A non-empty list of well-formed passkey entries: a receipt signed by Tollgate has nothing else there."""
    return (
        isinstance(claim, list)
        and len(claim) > 0
        and all(
            isinstance(e, dict)
            and e.get("method") == "passkey"
            and e.get("uv") is True
            and isinstance(e.get("by"), str)
            and e["by"] != ""
            and isinstance(e.get("credentialId"), str)
            and e["credentialId"] != ""
            for e in claim
        )
    )


def _find_key(kid: Any, jwks: Mapping[str, Any] | None, jwks_url: str | None, timeout: float) -> Mapping[str, Any]:
    if jwks is not None:
        key = _pick(kid, jwks)
    else:
        assert jwks_url is not None
        key = _pick(kid, _fetch(jwks_url, timeout, fresh=False))
        if key is None and not _fetched_within(jwks_url, _JWKS_COOLDOWN):
            # A rotated key: fetch the set again before giving up, but not for every receipt with a made-up kid.
            key = _pick(kid, _fetch(jwks_url, timeout, fresh=True))
    if key is None:
        raise ReceiptVerificationError("receipt_invalid", f"no Ed25519 key {kid!r} in the key set")
    return key


def _pick(kid: Any, jwks: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for k in jwks.get("keys") or []:
        if isinstance(k, Mapping) and k.get("kty") == "OKP" and k.get("crv") == "Ed25519" and (kid is None or k.get("kid") == kid):
            return k
    return None


def _fetched_within(url: str, seconds: float) -> bool:
    with _cache_lock:
        hit = _cache.get(url)
        return hit is not None and time.monotonic() - hit[0] < seconds


def _fetch(url: str, timeout: float, *, fresh: bool) -> Mapping[str, Any]:
    with _cache_lock:
        hit = _cache.get(url)
        if hit and not fresh and time.monotonic() - hit[0] < _JWKS_TTL:
            return hit[1]
    req = urllib.request.Request(url, headers={"accept": "application/json", "user-agent": "tollgate-python"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            data = json.loads(res.read(1024 * 1024))
    except (OSError, ValueError) as e:
        raise ReceiptVerificationError("receipt_invalid", f"cannot read the key set at {url}: {e}") from e
    with _cache_lock:
        _cache[url] = (time.monotonic(), data)
    return data


def _b64(s: Any) -> bytes:
    """Strict base64url without padding: other characters, or a last character with unused bits set, are refused,
    so one receipt cannot be written several ways."""
    if not isinstance(s, str) or not _B64URL.fullmatch(s) or len(s) % 4 == 1:
        raise ValueError("not base64url")
    try:
        raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    except binascii.Error as e:
        raise ValueError("not base64url") from e
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != s:
        raise ValueError("not canonical base64url")
    return raw
