"""Receipts: check, in a tool's own backend, that Tollgate approved running this tool with exactly these arguments.

A receipt is a compact JWS (EdDSA/Ed25519, ``typ: tollgate-receipt+jwt``). Checking its signature needs the
``cryptography`` package (``pip install 'tollgate[receipts]'``); it is imported only here, when a receipt is checked.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.request
from typing import Any, Mapping, TypedDict

from .errors import ReceiptVerificationError
from .jcs import arguments_digest

RECEIPT_TYP = "tollgate-receipt+jwt"
_REQUIRED = ("tcid", "conv", "tool", "args", "approvedBy", "iat", "exp", "jti")
_JWKS_TTL = 300.0  # the server lets JWKS be cached for 5 minutes


class ReceiptClaims(TypedDict):
    """What a receipt vouches for."""

    tcid: str
    conv: str
    tool: str
    #: SHA-256, hex, of the JCS arguments to run.
    args: str
    #: The ``sub`` of the person who approved, or ``policy``.
    approvedBy: str
    iss: str
    iat: int
    exp: int
    jti: str


_cache: dict[str, tuple[float, dict[str, Any]]] = {}
_cache_lock = threading.Lock()


def verify_receipt(
    receipt: str,
    *,
    tool_name: str,
    arguments: Mapping[str, Any],
    jwks_url: str | None = None,
    jwks: Mapping[str, Any] | None = None,
    tool_call_id: str | None = None,
    issuer: str = "tollgate",
    clock_tolerance: float = 30.0,
    timeout: float = 10.0,
) -> ReceiptClaims:
    """The receipt's claims when Tollgate approved running ``tool_name`` with exactly ``arguments``: an Ed25519
    signature by a key of the JWKS, ``typ`` tollgate-receipt+jwt, the issuer, not expired, the tool, and
    ``args`` = sha256(JCS(arguments)). Raises ReceiptVerificationError otherwise.

    ``jwks_url`` is ``<tollgate>/.well-known/jwks.json`` (fetched, cached 5 minutes, fetched again for an unknown
    key id); or pass ``jwks``, the key set itself. To run each approval once, remember ``tcid`` (or ``jti``) until
    ``exp`` and refuse a receipt seen before.
    """
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("verify_receipt needs the cryptography package: pip install 'tollgate[receipts]'") from e
    if jwks is None and jwks_url is None:
        raise TypeError("verify_receipt needs jwks_url or jwks")

    parts = receipt.split(".") if isinstance(receipt, str) else []
    if len(parts) != 3:
        raise ReceiptVerificationError("receipt_invalid", "the receipt is not a compact JWS")
    try:
        header = json.loads(_b64(parts[0]))
        payload = json.loads(_b64(parts[1]))
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
    if payload.get("iss") != issuer:
        raise ReceiptVerificationError("receipt_invalid", f"the receipt's issuer is {payload.get('iss')!r}, not {issuer!r}")
    now = time.time()
    if not isinstance(payload["exp"], (int, float)) or now - clock_tolerance >= payload["exp"]:
        raise ReceiptVerificationError("receipt_expired", "the receipt has expired")
    if not isinstance(payload["iat"], (int, float)) or payload["iat"] > now + clock_tolerance:
        raise ReceiptVerificationError("receipt_invalid", "the receipt is issued in the future")
    if payload["tool"] != tool_name:
        raise ReceiptVerificationError("receipt_mismatch", f"the receipt approves {payload['tool']!r}, not {tool_name!r}")
    if tool_call_id is not None and payload["tcid"] != tool_call_id:
        raise ReceiptVerificationError("receipt_mismatch", f"the receipt is for tool call {payload['tcid']}, not {tool_call_id}")
    if payload["args"] != arguments_digest(dict(arguments)):
        raise ReceiptVerificationError("receipt_mismatch", "the receipt approves other arguments")
    return payload  # type: ignore[return-value]


def _find_key(kid: Any, jwks: Mapping[str, Any] | None, jwks_url: str | None, timeout: float) -> Mapping[str, Any]:
    if jwks is not None:
        key = _pick(kid, jwks)
    else:
        assert jwks_url is not None
        key = _pick(kid, _fetch(jwks_url, timeout, fresh=False))
        if key is None:  # a rotated key: fetch the set again before giving up
            key = _pick(kid, _fetch(jwks_url, timeout, fresh=True))
    if key is None:
        raise ReceiptVerificationError("receipt_invalid", f"no Ed25519 key {kid!r} in the key set")
    return key


def _pick(kid: Any, jwks: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for k in jwks.get("keys") or []:
        if isinstance(k, Mapping) and k.get("kty") == "OKP" and k.get("crv") == "Ed25519" and (kid is None or k.get("kid") == kid):
            return k
    return None


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


def _b64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
