"""What the client hands back: enums and plain dataclasses of the protocol's replies.

Field names follow protocol/kvframe.fbs (snake_case). Every dataclass here is
a copy of a reply, independent of the bytes it came from: keep, pickle or
compare them freely.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple


class Mode(enum.IntEnum):
    """Attention mode of a session (``AttentionMode``)."""

    FULL = 0
    """The whole prompt is prefilled every query (the baseline)."""
    PREFIX = 1
    """Reuse the longest unchanged token prefix (llama.cpp's prompt cache)."""
    BLOCK = 2
    """Block attention: only the blocks that changed are encoded (the default)."""


class FrameFormat(enum.IntEnum):
    """How a frame's JSON is to be read (``FrameFormat``)."""

    WHOLE = 0
    """The whole gamecore JSON."""
    MERGE_PATCH = 1
    """An RFC 7386 merge patch against the session's previous frame (``null`` deletes a key)."""
    JSON_PATCH = 2
    """An RFC 6902 JSON Patch (a list of ops) against the session's previous frame."""


class TaskKind(enum.IntEnum):
    """What a query asks for (``TaskKind``)."""

    TEXT = 0
    """Free text, returned whole in :attr:`Answer.text`."""
    NPC_ACTION = 1
    """An action as JSON, constrained by the query's output schema (:attr:`Answer.action`)."""
    COMMENTARY = 2
    """Text meant to be streamed (chunks with sentence ends), then the whole answer."""


class StopReason(enum.IntEnum):
    """Why an answer ended (``StopReason``)."""

    STOP_TOKEN = 0
    """The model's end-of-turn token."""
    MAX_TOKENS = 1
    """``max_tokens`` were generated."""
    CONTEXT_FULL = 2
    """The session's context ran out."""
    STOP_STRING = 3
    """A stop string came (it is not part of the text)."""
    COMPLETE = 4
    """The output schema's JSON value is whole (an NPC action)."""


def _enum(kind, value):
    try:
        return kind(value)
    except ValueError:  # a value from a newer server
        return value


@dataclass(frozen=True)
class ServerInfo:
    """What the server said in its ``HelloReply`` (refreshed after every reconnect).

    Attributes:
        server_version: kvframe-serve's version string.
        model: the name of the model it serves.
        modes: the attention modes it serves (``--mode``).
        default_mode: the mode it prefers.
        max_message_bytes: larger requests get :class:`~kvframe.TooLargeError`
            (the client refuses them before sending).
        max_context: the most context tokens a session may ask for.
        instance_id: random per server process; a new value after a reconnect
            means the server restarted (the client then re-opens its sessions).
        adapters: the LoRA adapters a session may name (``open_session(adapter=)``).
        default_adapter: the one a session naming none gets; ``"none"``: the base model.
        session_idle: seconds after which the server closes the sessions of a client it has
            heard nothing from (``--session-idle-s``; 0: never). While the client holds
            sessions it pings well within that, so a quiet game keeps them.
    """

    server_version: str
    model: str
    modes: Tuple[Mode, ...]
    default_mode: Mode
    max_message_bytes: int
    max_context: int
    instance_id: int
    adapters: Tuple[str, ...] = ()
    default_adapter: str = "none"
    session_idle: float = 0.0


@dataclass(frozen=True)
class FrameAck:
    """The server's reply to a frame (``FrameAck``).

    Attributes:
        session: the client's session handle (:attr:`kvframe.Session.id`).
        frame_number: the frame acked.
        superseded: True when a newer whole frame of the session arrived
            while this one waited (no query between them), so this one was
            never applied: latest state wins. Patches are never superseded.
        blocks_total: blocks of the frame after partitioning (json_blocker).
        blocks_changed: blocks changed, added or moved against the frame
            applied before (these are re-encoded by the next block-mode query).
        blocks_removed: blocks of the previous frame that are gone.
        request_id: the frame's request id.
        format: how the frame was sent (the client's record: whole or a patch).
        json_bytes: the size of the JSON (or patch) sent, in bytes (the client's record).
    """

    session: int
    frame_number: int
    superseded: bool
    blocks_total: int
    blocks_changed: int
    blocks_removed: int
    request_id: int = 0
    format: FrameFormat = FrameFormat.WHOLE
    json_bytes: int = 0


@dataclass(frozen=True)
class Chunk:
    """One piece of a streamed answer (``Chunk``), in order.

    Attributes:
        text: the text; never splits a UTF-8 character.
        seq: its position among the query's chunks, from 0.
        sentence_end: the chunk ends a sentence (after ``.``, ``!``, ``?``,
            ``…``, CJK full stops, or a line break): text-to-speech can start.
        request_id: the query's request id.
    """

    text: str
    seq: int
    sentence_end: bool
    request_id: int = 0


@dataclass(frozen=True)
class Report:
    """Where one query's time went and what was reused (``Report``; the engine's QueryReport).

    Times are milliseconds. The engine's stages add up roughly as
    ``first_token_ms`` (partition + tokenize + encode + reposition +
    query prefill + the first token) then ``decode_ms``; ``engine_ms`` is the
    engine end to end, ``server_ms`` the server's time from receipt to the
    reply, and ``round_trip_ms`` (measured by this client) adds the network
    and the client itself.

    Attributes:
        mode: the attention mode that answered.
        blocks_total: blocks of the frame answered.
        blocks_reused: blocks already in this session's KV, unchanged.
        blocks_encoded: blocks run through the model for this query.
        cache_hits: blocks not in the session but found in the block store
            (this client's cache scope).
        blocks_repositioned: reused blocks placed at a new position (keys re-rotated).
        tokens_encoded: tokens run through the model up to the first token, final block included.
        context_tokens: tokens of the context: system prefix plus blocks.
        query_tokens: tokens of the final block (the instruction and the assistant header).
        generated_tokens: tokens of the answer.
        partition_ms: json_blocker: parse, partition and diff of the frames since the last query.
        tokenize_ms: tokenizing new block texts and the final block.
        encode_ms: encoding blocks (block mode) or the prompt (full, prefix modes).
        reposition_ms: placing reused blocks' KV at their positions (kv_diff).
        query_prefill_ms: the final block's forward pass.
        first_token_ms: time to the first token, partition included.
        decode_ms: generating the remaining tokens.
        engine_ms: the engine end to end.
        queue_ms: from the server's receipt until the engine thread took the query.
        server_ms: from the server's receipt until the result was handed to its socket.
        first_chunk_ms: time to the first streamed chunk (0: nothing was streamed).
        mask_ms: keeping tokens within the output schema (part of first token and decode).
        batch_size: queries of this session decoded together with this one (NPCs asking
            about the same frame are answered in one batch).
        tokens_encoded_superseded: tokens encoded ahead, since the session's last query,
            for frames superseded before any query asked them (not in tokens_encoded).
        round_trip_ms: measured by this client: from sending the query to its result.
    """

    mode: Mode = Mode.BLOCK
    blocks_total: int = 0
    blocks_reused: int = 0
    blocks_encoded: int = 0
    cache_hits: int = 0
    blocks_repositioned: int = 0
    tokens_encoded: int = 0
    context_tokens: int = 0
    query_tokens: int = 0
    generated_tokens: int = 0
    partition_ms: float = 0.0
    tokenize_ms: float = 0.0
    encode_ms: float = 0.0
    reposition_ms: float = 0.0
    query_prefill_ms: float = 0.0
    first_token_ms: float = 0.0
    decode_ms: float = 0.0
    engine_ms: float = 0.0
    queue_ms: float = 0.0
    server_ms: float = 0.0
    first_chunk_ms: float = 0.0
    mask_ms: float = 0.0
    batch_size: int = 1
    tokens_encoded_superseded: int = 0
    round_trip_ms: float = 0.0


@dataclass(frozen=True)
class Answer:
    """A query's whole answer (``Result``), with the chunks it was streamed in.

    Attributes:
        text: the answer's text (for an NPC action, the action's JSON text).
        action_json: an NPC action query's answer as JSON text, valid against
            the query's output schema ("" when there is none; without a
            schema, filled only when the text happens to be a JSON object).
        action: ``action_json`` parsed (a dict for an object schema); None when
            there is no action.
        action_flexbuffer: the same action as the server parsed it, as
            FlexBuffers bytes (``flatbuffers.flexbuffers.Loads`` reads it); b"" when none.
        stop: why the answer ended (:attr:`StopReason.COMPLETE` for a whole action).
        report: the engine's and server's report (:class:`Report`).
        chunks: the streamed pieces, in order (empty unless the query streamed).
        frame_number: the frame that was answered.
        request_id: the query's request id.
        first_chunk_at: ``time.monotonic()`` when the first chunk arrived (None without chunks).
    """

    text: str
    action_json: str
    action: Any
    action_flexbuffer: bytes
    stop: StopReason
    report: Report
    chunks: List[Chunk] = field(default_factory=list)
    frame_number: int = 0
    request_id: int = 0
    first_chunk_at: Optional[float] = None


@dataclass(frozen=True)
class StageStats:
    """One stage's latency percentiles in :class:`Stats` (whole-server stats only).

    Attributes:
        name: "queue", "partition", ..., "decode", "engine", "server".
        count: how many requests the percentiles cover.
        p50_ms: median, milliseconds.
        p99_ms: 99th percentile, milliseconds.
    """

    name: str
    count: int
    p50_ms: float
    p99_ms: float


@dataclass(frozen=True)
class Stats:
    """The server's counters (``Stats``): this client's own, or the whole server's.

    Attributes:
        uptime_s: seconds since the server started.
        sessions: open sessions.
        frames: frames applied.
        frames_superseded: frames acked as superseded (latest state won).
        queries: queries answered with a result.
        deadline_missed: queries answered with a Deadline error.
        errors: all error replies.
        busy_rejected: requests answered with a Busy error.
        queue_depth: requests waiting for the engine thread now.
        queue_high_water: the most that ever waited.
        cache_hits: block store hits (this client's cache scope unless ``server_wide``).
        cache_misses: block store misses.
        cache_bytes: bytes the block store holds.
        stages: per-stage latency percentiles (empty unless ``server_wide``).
        undeliverable: replies to clients that had gone away.
        server_wide: True when the figures are the whole server's (an operator
            key, or a loopback server without CURVE); False: only this client's
            sessions, queue and cache scope.
        sessions_expired: sessions closed because their client sent nothing for the
            server's ``--session-idle-s``.
        weights_bytes: what the model's weights take (the same for every client).
        session_kv_bytes: the most KV the open sessions may come to hold (this
            client's own unless ``server_wide``), as ``--max-memory-mb`` counts them.
        resident_bytes: the server process's resident memory (0 unless ``server_wide``).
        scratch_bytes: its anonymous memory that is neither dense weights, sessions'
            KV nor the block store: activations and kernels' scratch the allocator
            keeps, the runtime's own (0 unless ``server_wide``).
    """

    uptime_s: float
    sessions: int
    frames: int
    frames_superseded: int
    queries: int
    deadline_missed: int
    errors: int
    busy_rejected: int
    queue_depth: int
    queue_high_water: int
    cache_hits: int
    cache_misses: int
    cache_bytes: int
    stages: Tuple[StageStats, ...]
    undeliverable: int
    server_wide: bool
    sessions_expired: int = 0
    weights_bytes: int = 0
    session_kv_bytes: int = 0
    resident_bytes: int = 0
    scratch_bytes: int = 0
