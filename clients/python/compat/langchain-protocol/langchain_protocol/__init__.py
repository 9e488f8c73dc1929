"""Type-only stand-in for langchain-protocol: the names langgraph-sdk imports (see ../pyproject.toml)."""

from typing import Any, Literal, TypedDict, Union

Channel = str
Namespace = list[str]


class Event(TypedDict, total=False):
    type: str
    method: str
    params: dict[str, Any]
    seq: int
    event_id: str


class SubscribeParams(TypedDict, total=False):
    channels: list[str]
    namespaces: list[list[str]]
    depth: int


__all__ = ["Channel", "Event", "Namespace", "SubscribeParams", "Literal", "Union"]
