"""RFC 8785 JSON Canonicalization Scheme (JCS), and the arguments digest a receipt's ``args`` claim holds.

Members sorted by their names' UTF-16 code units, no whitespace, strings escaped as ECMAScript's JSON.stringify
escapes them and numbers written as ECMAScript writes them (``1.0`` is ``1``, ``1e21`` is ``1e+21``), so the text
is the one the server hashes.

The server reads JSON numbers as IEEE 754 doubles and writes them as ECMAScript does, and people approve what it
writes. An ``int`` of 2**53 or more is taken only when it is the number the server writes for it
(``1152921504606847000`` for the double nearest 2**60, as ``json.loads`` gives it from the server's answer; ``10**21``,
written ``1e+21``); any other (``2**53 + 1``, ``10**21 + 1``, ``2**60`` itself) raises ValueError: the server would
read it as a neighbour, so it is not what was approved, and two integers never share a digest. A string with a
lone surrogate raises ValueError too: RFC 8785 takes I-JSON, which forbids them, and the server refuses them at
input.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from decimal import Decimal
from typing import Any

# Python strings are code points: every surrogate in one is unpaired (json.loads joins escaped pairs).
_SURROGATE = re.compile("[\ud800-\udfff]")
_EXACT = 2**53  # every int below this in magnitude is a double


def canonical_json(value: Any) -> str:
    """The JCS text of a JSON value (dict, list, str, int, float, bool, None)."""
    return "".join(_write(value, set()))


def arguments_digest(value: Any) -> str:
    """SHA-256, hex, of the JCS text: the receipt's ``args`` claim and the audit trail's ``argumentsDigest``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def preview_digest(preview: Any) -> str:
    """A proposal's preview digest, as the server takes it (the receipt's ``preview`` claim): SHA-256, base64url
    without padding, of the JCS text of its given members (``kind``, ``content``, ``title``, ``estimatedRows``,
    ``email`` with its given headers); ``digest`` and members set to None are not part of it. Key order does not
    matter; strings are taken as they are (no Unicode normalisation)."""
    if not isinstance(preview, dict) or not isinstance(preview.get("kind"), str) or not isinstance(preview.get("content"), str):
        raise TypeError("a preview is a dict with a kind and a content (both text)")
    form: dict[str, Any] = {"kind": preview["kind"], "content": preview["content"]}
    for key in ("title", "estimatedRows"):
        if preview.get(key) is not None:
            form[key] = preview[key]
    email = preview.get("email")
    if isinstance(email, dict):
        given = {k: v for k, v in email.items() if v is not None}
        if given:
            form["email"] = given
    digest = hashlib.sha256(canonical_json(form).encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


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
        return [str(value) if -_EXACT < value < _EXACT else _big_int(value)]
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
                    _check(k)
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


def _check(s: str) -> None:
    if _SURROGATE.search(s):
        raise ValueError("a string with a lone surrogate (U+D800 to U+DFFF) is not JSON Tollgate keeps")


def _string(s: str) -> str:
    _check(s)
    # json.dumps escapes exactly what JSON.stringify does (quote, backslash, controls), hex in lower case.
    return json.dumps(s, ensure_ascii=False)


def _big_int(n: int) -> str:
    """The server's text for ``n`` when that text stands for ``n`` itself; ValueError otherwise."""
    try:
        text = _number(float(n))
    except OverflowError:
        text = "Infinity"
    if text == "Infinity" or Decimal(text) != n:
        shown = str(n) if abs(n) < 10**40 else f"of {len(str(abs(n)))} digits"
        raise ValueError(f"the integer {shown} is not a JSON number the server keeps as written: it reads it as {text}")
    return text


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
