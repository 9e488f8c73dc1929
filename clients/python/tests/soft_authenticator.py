"""A software WebAuthn authenticator for the tests, as test/support/soft-authenticator.ts: ES256 (P-256) keys,
attestation ``none``, user present and verified. It answers the options the server gives with the JSON a browser's
@simplewebauthn/browser would send, so a test approves a ``stepUp: passkey`` call as a person in the inbox does."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


def _b64url(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _cbor(value: Any) -> bytes:
    """The CBOR of what WebAuthn's attestation holds: whole numbers, bytes, text and maps (RFC 8949)."""

    def head(major: int, n: int) -> bytes:
        if n < 24:
            return bytes([major << 5 | n])
        for extra, size in ((24, 1), (25, 2), (26, 4)):
            if n < 1 << (8 * size):
                return bytes([major << 5 | extra]) + n.to_bytes(size, "big")
        raise ValueError("too large")

    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return head(3, len(raw)) + raw
    if isinstance(value, dict):
        return head(5, len(value)) + b"".join(_cbor(k) + _cbor(v) for k, v in value.items())
    raise TypeError(type(value))


class SoftAuthenticator:
    def __init__(self, origin: str, aaguid: str = "5eb1e1a5-0000-4000-8000-00000000a11c") -> None:
        self.origin = origin
        self.aaguid = aaguid
        self._keys: dict[str, tuple[ec.EllipticCurvePrivateKey, str, int]] = {}

    @property
    def ids(self) -> list[str]:
        return list(self._keys)

    def register(self, options: dict[str, Any]) -> dict[str, Any]:
        """navigator.credentials.create(): a new ES256 credential for the options' relying party."""
        rp_id = options["rp"]["id"]
        key = ec.generate_private_key(ec.SECP256R1())
        numbers = key.public_key().public_numbers()
        raw_id = os.urandom(16)
        cose = _cbor({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        attested = bytes.fromhex(self.aaguid.replace("-", "")) + len(raw_id).to_bytes(2, "big") + raw_id + cose
        auth_data = self._auth_data(rp_id, 0x45, 0) + attested  # user present, verified, attested credential data
        client_data = self._client_data("webauthn.create", options["challenge"])
        cred_id = _b64url(raw_id)
        self._keys[cred_id] = (key, rp_id, 0)
        return {
            "id": cred_id,
            "rawId": cred_id,
            "type": "public-key",
            "response": {
                "clientDataJSON": _b64url(client_data),
                "attestationObject": _b64url(_cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})),
                "transports": ["internal"],
                "publicKeyAlgorithm": -7,
            },
            "clientExtensionResults": {},
            "authenticatorAttachment": "platform",
        }

    def assert_(self, options: dict[str, Any]) -> dict[str, Any]:
        """navigator.credentials.get(): an assertion with the first of the allowed credentials it holds."""
        allowed = [c["id"] for c in options.get("allowCredentials") or []]
        cred_id = next(i for i in self._keys if not allowed or i in allowed)
        key, rp_id, counter = self._keys[cred_id]
        self._keys[cred_id] = (key, rp_id, counter + 1)
        auth_data = self._auth_data(options.get("rpId") or rp_id, 0x05, counter + 1)
        client_data = self._client_data("webauthn.get", options["challenge"])
        signature = key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": cred_id,
            "rawId": cred_id,
            "type": "public-key",
            "response": {
                "clientDataJSON": _b64url(client_data),
                "authenticatorData": _b64url(auth_data),
                "signature": _b64url(signature),
            },
            "clientExtensionResults": {},
            "authenticatorAttachment": "platform",
        }

    @staticmethod
    def _auth_data(rp_id: str, flags: int, counter: int) -> bytes:
        return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + counter.to_bytes(4, "big")

    def _client_data(self, kind: str, challenge: str) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": False}).encode()
