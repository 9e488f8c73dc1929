from __future__ import annotations

import hashlib
import re
import uuid

#: What the API accepts as a tool-call or conversation id.
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


def new_id(prefix: str) -> str:
    """A fresh id, made once before the first attempt so that retries repeat it."""
    return f"{prefix}_{uuid.uuid4()}"


def tool_call_key(framework_id: str) -> str:
    """A framework's tool-call id as the API's idempotency key: kept when the API accepts it, else ``x_<sha256>``,
    so the same framework id always maps to the same key."""
    if ID_PATTERN.fullmatch(framework_id):
        return framework_id
    return "x_" + hashlib.sha256(framework_id.encode("utf-8")).hexdigest()
