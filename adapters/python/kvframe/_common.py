"""What the threaded and the asyncio client share: argument checks, specs, answers."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, Iterable, List, Optional, Tuple, Union

from . import patch as _patch
from . import wire
from .errors import ErrorCode, KvframeError, TooLargeError
from .messages import Answer, Chunk, FrameFormat, Mode, TaskKind
from ._core import ResultEvent

JsonLike = Union[str, bytes, bytearray, memoryview, dict, list]
Schema = Union[str, dict]


def routing_id() -> bytes:
    """A random 16-byte ZeroMQ routing id with the first byte's high bit set.

    Without CURVE the server knows a client by its routing id (its principal
    owns its sessions), so it must be unguessable and kept across reconnects;
    ids starting with a zero byte are ZeroMQ's own.
    """
    rid = bytearray(secrets.token_bytes(16))
    rid[0] |= 0x80
    return bytes(rid)


def json_bytes(value: JsonLike) -> bytes:
    """The UTF-8 bytes of a frame or patch: JSON text as it is, or a dict/list serialized compactly."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raise TypeError(f"a frame is JSON text (str/bytes) or a dict/list, not {type(value).__name__}")


def schema_text(schema: Optional[Schema]) -> str:
    if schema is None:
        return ""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, dict):
        return json.dumps(schema, separators=(",", ":"))
    raise TypeError(f"schema is a JSON Schema as a dict or JSON text, not {type(schema).__name__}")


def check_keys(server_public_key, client_public_key, client_secret_key) -> Optional[Tuple[bytes, bytes, bytes]]:
    keys = [server_public_key, client_public_key, client_secret_key]
    given = [k for k in keys if k]
    if not given:
        return None
    if len(given) != 3:
        raise ValueError("CURVE needs all three keys (server public, client public, client secret) or none")
    out = []
    for k in keys:
        b = k.encode("ascii") if isinstance(k, str) else bytes(k)
        b = b.strip()
        if len(b) != 40:
            raise ValueError("CURVE keys are Z85 text of 40 characters (kvframe-serve --gen-keys, zmq.curve_keypair)")
        out.append(b)
    return out[0], out[1], out[2]


def open_spec(game_id: str, rules: Optional[Union[str, dict]], mode: Union[Mode, int], system_prompt: str,
              context_tokens: int) -> wire.OpenSpec:
    if int(mode) not in (0, 1, 2):
        raise ValueError(f"mode {mode!r} is not a kvframe.Mode (FULL, PREFIX or BLOCK)")
    if context_tokens < 0:
        raise ValueError("context_tokens must be >= 0 (0: the server's default)")
    rules_json = "" if rules is None else (rules if isinstance(rules, str) else json.dumps(rules))
    return wire.OpenSpec(game_id or "", rules_json, Mode(int(mode)), system_prompt or "", int(context_tokens))


def query_spec(instruction: str, *, kind: Union[TaskKind, int], npc_id: str, schema: Optional[Schema],
               max_tokens: int, temperature: float, top_k: int, top_p: float, seed: int, stop: Iterable[str],
               stream: bool, frame_number: int, deadline_ms: int, deadline_frame: int) -> wire.QuerySpec:
    if not isinstance(instruction, str) or not instruction:
        raise ValueError("instruction is empty: say what the model should do now")
    if int(kind) not in (0, 1, 2):
        raise ValueError(f"kind {kind!r} is not a kvframe.TaskKind")
    schema_json = schema_text(schema)
    if schema_json and int(kind) == TaskKind.TEXT:
        kind = TaskKind.NPC_ACTION  # a schema means an action
    stops = tuple(stop)
    for s in stops:
        if not isinstance(s, str):
            raise TypeError("stop strings are str")
    return wire.QuerySpec(instruction=instruction, kind=TaskKind(int(kind)), npc_id=npc_id or "",
                          output_schema=schema_json, max_tokens=int(max_tokens), temperature=float(temperature),
                          top_k=int(top_k), top_p=float(top_p), seed=int(seed), stop=stops, stream=bool(stream),
                          frame_number=int(frame_number), deadline_ms=int(deadline_ms),
                          deadline_frame=int(deadline_frame))


def check_size(payload_bytes: int, limit: int, what: str) -> None:
    bound = payload_bytes + wire.ENVELOPE_BYTES
    if bound > limit:
        raise TooLargeError(f"the {what} needs up to {bound} bytes on the wire; the server takes at most {limit} per "
                            "message (nothing was sent: send patches, drop fields with block rules, or raise the "
                            "server's --max-message-mb)")


class StateDelta:
    """Remembers the last state a session sent and picks how to send the next one."""

    __slots__ = ("last", "since_whole")

    def __init__(self) -> None:
        self.last: Any = None
        self.since_whole = 0

    def next_frame(self, state: Any, patch: Optional[str], whole_every: int) -> Tuple[FrameFormat, bytes]:
        if patch not in (None, "merge", "json"):
            raise ValueError('patch is "merge", "json" or None (always whole)')
        delta: Any = None
        fmt = FrameFormat.WHOLE
        if self.last is not None and patch and not (whole_every and self.since_whole >= whole_every):
            if patch == "merge":
                delta, fmt = _patch.merge_patch(self.last, state), FrameFormat.MERGE_PATCH
            else:
                delta, fmt = _patch.json_patch(self.last, state), FrameFormat.JSON_PATCH
        whole = json_bytes(state)
        payload = whole
        if delta is not None:
            patched = json_bytes(delta)
            if len(patched) < len(whole):
                payload = patched
            else:
                fmt = FrameFormat.WHOLE
        else:
            fmt = FrameFormat.WHOLE
        # A private copy: the caller may change its dict in place for the next frame.
        self.last = json.loads(whole)
        self.since_whole = 0 if fmt == FrameFormat.WHOLE else self.since_whole + 1
        return fmt, payload


class QueryEvents:
    """Collects a query's chunks and turns its final event into an Answer (or an exception)."""

    __slots__ = ("request_id", "chunks", "first_chunk_at", "on_chunk")

    def __init__(self, on_chunk) -> None:
        self.request_id = 0
        self.chunks: List[Chunk] = []
        self.first_chunk_at: Optional[float] = None
        self.on_chunk = on_chunk

    def chunk(self, event: Chunk) -> None:
        if not self.chunks:
            self.first_chunk_at = time.monotonic()
        self.chunks.append(event)

    def final(self, event: Any) -> Union[Answer, KvframeError]:
        if isinstance(event, KvframeError):
            return event
        if not isinstance(event, ResultEvent):
            return KvframeError(f"unexpected event {event!r}", code=ErrorCode.INTERNAL, request_id=self.request_id)
        return Answer(text=event.text, action_json=event.action_json, action=event.action,
                      action_flexbuffer=event.action_flexbuffer, stop=event.stop, report=event.report,
                      chunks=list(self.chunks), frame_number=event.frame_number, request_id=event.request_id,
                      first_chunk_at=self.first_chunk_at)
