"""Type-only stand-in for langchain_protocol.protocol: the names langchain-core imports (see ../pyproject.toml)."""

from typing import Any, Literal, TypedDict, Union

LifecycleCause = str


class UsageInfo(TypedDict, total=False):
    input_tokens: int
    output_tokens: int
    total_tokens: int


class MessageMetadata(TypedDict, total=False):
    provider: str
    model: str


class TextContentBlock(TypedDict, total=False):
    type: Literal["text"]
    text: str


class ReasoningContentBlock(TypedDict, total=False):
    type: Literal["reasoning"]
    reasoning: str


class ToolCall(TypedDict, total=False):
    type: Literal["tool_call"]
    id: str
    name: str
    args: dict[str, Any]


class ToolCallChunk(TypedDict, total=False):
    type: Literal["tool_call_chunk"]
    id: str
    name: str
    args: str
    index: int


class InvalidToolCall(TypedDict, total=False):
    type: Literal["invalid_tool_call"]
    id: str
    name: str
    args: str
    error: str


class ServerToolCall(TypedDict, total=False):
    type: Literal["server_tool_call"]
    id: str
    name: str
    args: dict[str, Any]


class ServerToolCallChunk(TypedDict, total=False):
    type: Literal["server_tool_call_chunk"]
    id: str
    name: str
    args: str
    index: int


ContentBlock = dict[str, Any]
FinalizedContentBlock = dict[str, Any]


class TextDelta(TypedDict, total=False):
    type: Literal["text-delta"]
    text: str


class ReasoningDelta(TypedDict, total=False):
    type: Literal["reasoning-delta"]
    reasoning: str


class DataDelta(TypedDict, total=False):
    type: Literal["data-delta"]
    data: Any


BlockDelta = dict[str, Any]
BlockDeltaFields = dict[str, Any]
ContentBlockDelta = Union[TextDelta, ReasoningDelta, DataDelta, dict[str, Any]]


class MessageStartData(TypedDict, total=False):
    event: Literal["message-start"]
    message_id: str
    metadata: MessageMetadata


class ContentBlockStartData(TypedDict, total=False):
    event: Literal["content-block-start"]
    index: int
    content: ContentBlock


class ContentBlockDeltaData(TypedDict, total=False):
    event: Literal["content-block-delta"]
    index: int
    delta: ContentBlockDelta


class ContentBlockFinishData(TypedDict, total=False):
    event: Literal["content-block-finish"]
    index: int
    content: FinalizedContentBlock


class MessageFinishData(TypedDict, total=False):
    event: Literal["message-finish"]
    usage: UsageInfo


MessagesData = Union[MessageStartData, ContentBlockStartData, ContentBlockDeltaData, ContentBlockFinishData, MessageFinishData]
