"""RFC 8785 JSON Canonicalization Scheme (JCS), and the arguments digest a receipt's ``args`` claim holds.

Members sorted by their names' UTF-16 code units, no whitespace, strings escaped as ECMAScript's JSON.stringify
escapes them and numbers written as ECMAScript writes them (``1.0`` is ``1``, ``1e21`` is ``1e+21``), so the text
is the one the server hashes.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any


def canonical_json(value: Any) -> str:
    """The JCS text of a JSON value (dict, list, str, int, float, bool, None)."""
    return "".join(_write(value, set()))


def arguments_digest(value: Any) -> str:
    """SHA-256, hex, of the JCS text: the receipt's ``args`` claim and the audit trail's ``argumentsDigest``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def _write(value: Any, seen: set[int]) -> list[str]:
    if value is None:
        return ["null"]
    if value is True:
        return ["true"]
    if value is False:
        return ["false"]
    if isinstance(value, str):
        return [_string(value)]
    if isinstance(value, int):
        return [_number(float(value)) if abs(value) >= 10**21 else str(value)]
    if isinstance(value, float):
        return [_number(value)]
    if isinstance(value, (list, tuple, dict)):
        if id(value) in seen:
            raise ValueError("a cyclic structure is not JSON")
        seen.add(id(value))
        try:
            if isinstance(value, dict):
                for k in value:
                    if not isinstance(k, str):
                        raise TypeError(f"object keys must be strings, not {type(k).__name__}")
                out = ["{"]
                for i, k in enumerate(sorted(value, key=lambda s: s.encode("utf-16-be"))):
                    if i:
                        out.append(",")
                    out.append(_string(k))
                    out.append(":")
                    out.extend(_write(value[k], seen))
                out.append("}")
                return out
            out = ["["]
            for i, item in enumerate(value):
                if i:
                    out.append(",")
                out.extend(_write(item, seen))
            out.append("]")
            return out
        finally:
            seen.discard(id(value))
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _string(s: str) -> str:
    # json.dumps escapes exactly what JSON.stringify does (quote, backslash, controls), hex in lower case.
    return json.dumps(s, ensure_ascii=False)


def _number(x: float) -> str:
    """ECMAScript's Number::toString, which JCS specifies: the shortest digits that round-trip."""
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{x} is not allowed in JSON")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    t = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    k = len(digits)
    n = k + int(t.exponent)  # value = 0.digits × 10^n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + body
