"""The protocol on the wire: requests encoded, replies decoded.

Built on the classes ``flatc --python --gen-object-api`` generates from
protocol/kvframe.fbs at build time (``kvframe.protocol.fb``). Requests are
written with the generated builder functions (no object API: it costs an
object per field); replies are read in place with the generated accessors.

Reading a whole Message: the generated ``MessageT.InitFromBuf(buf, 0)`` looks
like the way, but it treats offset 0 as the table itself, while a root
buffer starts with the *offset* of its root table, so it reads garbage (and
``MessageT.InitFromPackedBuf`` does not exist in flatc 2.0.8). Go through
``GetRootAs``, which follows that offset::

    msg = Message.GetRootAs(buf, 0)          # the accessors, in place
    obj = MessageT.InitFromObj(msg)          # the object API, if wanted

Python's flatbuffers has no verifier: a reply is read defensively and a
reply that cannot be read fails its request with MalformedError.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, make_dataclass
from typing import Any, Optional, Tuple

import flatbuffers

try:
    from .protocol.fb import (
        Body,
        Chunk as FbChunk,
        CloseSession,
        Error as FbError,
        Frame as FbFrame,
        FrameAck as FbFrameAck,
        Hello,
        HelloReply,
        Message,
        OpenSession,
        Ping,
        Query,
        Result as FbResult,
        Sampling,
        SessionClosed,
        SessionOpened,
        Stats as FbStats,
        StatsRequest,
    )
except ImportError as _e:  # pragma: no cover - a source tree that was never built
    raise ImportError(
        "kvframe.protocol (the code flatc generates from protocol/kvframe.fbs) is missing: "
        "install the package (pip install ./adapters/python) instead of importing it from the source tree"
    ) from _e

from . import messages as t
from . import options

PROTOCOL_VERSION = 1
"""``Message.protocol_version`` this client speaks; the server answers another with WrongVersion."""
FILE_IDENTIFIER = b"KVF1"
"""The schema's file_identifier: bytes 4..8 of every message."""
ENVELOPE_BYTES = 1024
"""Room for a message's tables around its strings (the native client's size bound)."""

_B = Body.Body
_EMPTY = b""


# ---- requests as plain data ------------------------------------------------------


def _spec(name: str, group: Tuple[options.Option, ...], doc: str) -> type:
    spec = make_dataclass(name, [(o.name, Any, field(default=o.wire_default)) for o in group], frozen=True)
    spec.__doc__ = doc
    return spec


OpenSpec = _spec("OpenSpec", options.SESSION,
                 "An OpenSession's fields (protocol/options.json), kept to re-open the session after a restart.")
QuerySpec = _spec("QuerySpec", options.QUERY, "A Query's fields, its sampling's among them (protocol/options.json).")


def strings_bytes(spec: Any, group: Tuple[options.Option, ...]) -> int:
    """What a spec's strings take on the wire, at most (the native client's size bound)."""
    total = 0
    for o in group:
        if o.type == "string":
            total += len(getattr(spec, o.name).encode())
        elif o.type == "strings":
            total += sum(len(s.encode()) + 8 for s in getattr(spec, o.name))
    return total


@dataclass(frozen=True)
class FrameSpec:
    """A Frame's fields; ``json`` is the UTF-8 payload (the JSON or the patch)."""

    frame_number: int
    format: int
    json: bytes
    base_frame: Optional[int] = None  # a patch's base: the frame it was made against


# ---- encoding --------------------------------------------------------------------


def _finish(b: flatbuffers.Builder, request_id: int, body_type: int, body: int) -> bytes:
    Message.Start(b)
    Message.AddProtocolVersion(b, PROTOCOL_VERSION)
    Message.AddRequestId(b, request_id)
    Message.AddBodyType(b, body_type)
    Message.AddBody(b, body)
    b.Finish(Message.End(b), file_identifier=FILE_IDENTIFIER)
    return bytes(b.Output())


def encode_hello(request_id: int, client_name: str) -> bytes:
    b = flatbuffers.Builder(128 + len(client_name))
    name = b.CreateString(client_name)
    Hello.Start(b)
    Hello.AddClientName(b, name)
    return _finish(b, request_id, _B.Hello, Hello.End(b))


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _strings(b: flatbuffers.Builder, table: Any, spec: Any, group: Tuple[options.Option, ...]) -> dict:
    """The offsets of a spec's strings, written before its table; an empty one is left off
    (the server reads an absent string as empty)."""
    offsets = {}
    for o in group:
        value = getattr(spec, o.name)
        if o.type == "string" and value:
            offsets[o.name] = b.CreateString(value)
        elif o.type == "strings" and value:
            items = [b.CreateString(s) for s in value]
            getattr(table, "Start" + _pascal(o.name) + "Vector")(b, len(items))
            for item in reversed(items):
                b.PrependUOffsetTRelative(item)
            offsets[o.name] = b.EndVector()
    return offsets


def _add_fields(b: flatbuffers.Builder, table: Any, spec: Any, group: Tuple[options.Option, ...],
                offsets: dict) -> None:
    """Every option of `group` into the table being built (its strings by their offsets)."""
    for o in group:
        if o.type in ("string", "strings"):
            if o.name in offsets:
                getattr(table, "Add" + _pascal(o.name))(b, offsets[o.name])
            continue
        value = getattr(spec, o.name)
        getattr(table, "Add" + _pascal(o.wire.rpartition(".")[2]))(b, int(value) if o.enum else value)


def encode_open(request_id: int, spec: OpenSpec) -> bytes:
    b = flatbuffers.Builder(256 + strings_bytes(spec, options.SESSION))
    strings = _strings(b, OpenSession, spec, options.SESSION)
    OpenSession.Start(b)
    _add_fields(b, OpenSession, spec, options.SESSION, strings)
    return _finish(b, request_id, _B.OpenSession, OpenSession.End(b))


def encode_close(request_id: int, server_session: int) -> bytes:
    b = flatbuffers.Builder(64)
    CloseSession.Start(b)
    CloseSession.AddSessionId(b, server_session)
    return _finish(b, request_id, _B.CloseSession, CloseSession.End(b))


def encode_frame(request_id: int, server_session: int, spec: FrameSpec) -> bytes:
    b = flatbuffers.Builder(128 + len(spec.json))
    payload = b.CreateString(spec.json)  # bytes go in as they are
    FbFrame.Start(b)
    FbFrame.AddSessionId(b, server_session)
    FbFrame.AddFrameNumber(b, spec.frame_number)
    FbFrame.AddFormat(b, int(spec.format))
    FbFrame.AddJson(b, payload)
    if spec.base_frame is not None:
        FbFrame.AddBaseFrame(b, spec.base_frame)
    return _finish(b, request_id, _B.Frame, FbFrame.End(b))


_QUERY_OWN = tuple(o for o in options.QUERY if "." not in o.wire)
_QUERY_SAMPLING = tuple(o for o in options.QUERY if o.wire.startswith("sampling."))


def encode_query(request_id: int, server_session: int, spec: QuerySpec) -> bytes:
    b = flatbuffers.Builder(256 + strings_bytes(spec, options.QUERY))
    strings = _strings(b, Query, spec, _QUERY_OWN)
    Sampling.Start(b)
    _add_fields(b, Sampling, spec, _QUERY_SAMPLING, {})
    sampling = Sampling.End(b)
    Query.Start(b)
    Query.AddSessionId(b, server_session)
    Query.AddSampling(b, sampling)
    _add_fields(b, Query, spec, _QUERY_OWN, strings)
    return _finish(b, request_id, _B.Query, Query.End(b))


def encode_stats(request_id: int) -> bytes:
    b = flatbuffers.Builder(64)
    StatsRequest.Start(b)
    return _finish(b, request_id, _B.StatsRequest, StatsRequest.End(b))


def encode_ping(request_id: int) -> bytes:
    b = flatbuffers.Builder(32)
    Ping.Start(b)
    return _finish(b, request_id, _B.Ping, Ping.End(b))


# ---- decoding --------------------------------------------------------------------


class Reply:
    """A decoded reply: its request id, body type and the body's generated accessor object."""

    __slots__ = ("request_id", "body_type", "body")

    def __init__(self, request_id: int, body_type: int, body: Any) -> None:
        self.request_id = request_id
        self.body_type = body_type
        self.body = body


_BODY_CLASSES = {
    _B.HelloReply: HelloReply.HelloReply,
    _B.SessionOpened: SessionOpened.SessionOpened,
    _B.SessionClosed: SessionClosed.SessionClosed,
    _B.FrameAck: FbFrameAck.FrameAck,
    _B.Chunk: FbChunk.Chunk,
    _B.Result: FbResult.Result,
    _B.Error: FbError.Error,
    _B.Stats: FbStats.Stats,
}


def peek_request_id(buf: bytes) -> int:
    """The request id of a message that may not decode; 0 when even that cannot be read."""
    try:
        return Message.Message.GetRootAs(buf, 0).RequestId()
    except Exception:
        return 0


def decode(buf: bytes) -> Reply:
    """Decodes a reply; raises ValueError (or the reader's own error) when it is not one.

    Uses ``Message.GetRootAs(buf, 0)``: the root table sits where the offset at
    byte 0 points, which ``MessageT.InitFromBuf(buf, 0)`` would miss.
    """
    if len(buf) < 12 or not Message.Message.MessageBufferHasIdentifier(buf, 0):
        raise ValueError(f"not a kvframe message ({len(buf)} bytes, no {FILE_IDENTIFIER!r} identifier)")
    msg = Message.Message.GetRootAs(buf, 0)
    body_type = msg.BodyType()
    cls = _BODY_CLASSES.get(body_type)
    table = msg.Body()
    if cls is None or table is None:
        raise ValueError(f"a reply with body type {body_type} is not one a client expects")
    body = cls()
    body.Init(table.Bytes, table.Pos)
    return Reply(msg.RequestId(), body_type, body)


def _text(value: Optional[bytes]) -> str:
    return value.decode("utf-8", "replace") if value else ""


def hello_info(body: Any) -> t.ServerInfo:
    return t.ServerInfo(
        server_version=_text(body.ServerVersion()),
        model=_text(body.Model()),
        modes=tuple(t._enum(t.Mode, body.Modes(i)) for i in range(body.ModesLength())),
        default_mode=t._enum(t.Mode, body.DefaultMode()),
        max_message_bytes=body.MaxMessageBytes(),
        max_context=body.MaxContext(),
        instance_id=body.InstanceId(),
        adapters=tuple(_text(body.Adapters(i)) for i in range(body.AdaptersLength())),
        default_adapter=_text(body.DefaultAdapter()) or "none",
        session_idle=body.SessionIdleMs() / 1000,
    )


def frame_ack(body: Any, session: int, request_id: int, spec: FrameSpec) -> t.FrameAck:
    return t.FrameAck(session, body.FrameNumber(), bool(body.Superseded()), body.BlocksTotal(),
                      body.BlocksChanged(), body.BlocksRemoved(), request_id, t.FrameFormat(spec.format),
                      len(spec.json))


def chunk(body: Any, request_id: int) -> t.Chunk:
    return t.Chunk(_text(body.Text()), body.Seq(), bool(body.SentenceEnd()), request_id)


def report(body: Optional[Any], round_trip_ms: float) -> t.Report:
    if body is None:
        return t.Report(round_trip_ms=round_trip_ms)
    return t.Report(
        mode=t._enum(t.Mode, body.Mode()), blocks_total=body.BlocksTotal(), blocks_reused=body.BlocksReused(),
        blocks_encoded=body.BlocksEncoded(), cache_hits=body.CacheHits(),
        blocks_repositioned=body.BlocksRepositioned(), tokens_encoded=body.TokensEncoded(),
        context_tokens=body.ContextTokens(), query_tokens=body.QueryTokens(),
        generated_tokens=body.GeneratedTokens(), partition_ms=body.PartitionMs(), tokenize_ms=body.TokenizeMs(),
        encode_ms=body.EncodeMs(), reposition_ms=body.RepositionMs(), query_prefill_ms=body.QueryPrefillMs(),
        first_token_ms=body.FirstTokenMs(), decode_ms=body.DecodeMs(), engine_ms=body.EngineMs(),
        queue_ms=body.QueueMs(), server_ms=body.ServerMs(), first_chunk_ms=body.FirstChunkMs(),
        mask_ms=body.MaskMs(), batch_size=body.BatchSize(),
        tokens_encoded_superseded=body.TokensEncodedSuperseded(), round_trip_ms=round_trip_ms,
    )


def _action_bytes(body: Any) -> bytes:
    """Result.action (a [ubyte] holding a FlexBuffer) as bytes, without numpy."""
    tab = body._tab
    o = tab.Offset(16)  # the 7th field: 4 + 2 * 6
    if o == 0:
        return _EMPTY
    start = tab.Vector(o)
    n = tab.VectorLen(o)
    return bytes(tab.Bytes[start:start + n])


def result_fields(body: Any) -> Tuple[str, str, Any, bytes, t.StopReason, Optional[Any], int]:
    """(text, action_json, action, action_flexbuffer, stop, report table, frame_number) of a Result."""
    action_json = _text(body.ActionJson())
    action = None
    if action_json:
        try:
            action = json.loads(action_json)
        except ValueError:
            action = None
    return (_text(body.Text()), action_json, action, _action_bytes(body), t._enum(t.StopReason, body.Stop()),
            body.Report(), body.FrameNumber())


def error_fields(body: Any) -> Tuple[int, str, int]:
    """(code, message, session_id) of an Error."""
    return body.Code(), _text(body.Message()), body.SessionId()


def stats(body: Any) -> t.Stats:
    stages = []
    for i in range(body.StagesLength()):
        s = body.Stages(i)
        stages.append(t.StageStats(_text(s.Name()), s.Count(), s.P50Ms(), s.P99Ms()))
    return t.Stats(
        uptime_s=body.UptimeS(), sessions=body.Sessions(), frames=body.Frames(),
        frames_superseded=body.FramesSuperseded(), queries=body.Queries(), deadline_missed=body.DeadlineMissed(),
        errors=body.Errors(), busy_rejected=body.BusyRejected(), queue_depth=body.QueueDepth(),
        queue_high_water=body.QueueHighWater(), cache_hits=body.CacheHits(), cache_misses=body.CacheMisses(),
        cache_bytes=body.CacheBytes(), stages=tuple(stages), undeliverable=body.Undeliverable(),
        server_wide=bool(body.ServerWide()), sessions_expired=body.SessionsExpired(),
        weights_bytes=body.WeightsBytes(), session_kv_bytes=body.SessionKvBytes(),
        resident_bytes=body.ResidentBytes(), scratch_bytes=body.ScratchBytes(),
    )

