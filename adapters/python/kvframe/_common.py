"""What the threaded and the asyncio client share: argument checks, specs, answers, and the base
classes of their queries, sessions and clients (the I/O, blocking or awaited, stays in each)."""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import secrets
import time
from typing import Any, Callable, Dict, Generic, Iterable, List, Optional, Tuple, TypeVar, Union

import zmq

from . import patch as _patch
from . import options, wire
from .errors import BadJsonError, ConnectError, ErrorCode, KvframeError, RequestTimeoutError, TooLargeError
from .messages import Answer, Chunk, FrameFormat, ServerInfo, TaskKind
from ._core import FRAME, QUERY, Core, ResultEvent

JsonLike = Union[str, bytes, bytearray, memoryview, dict, list]
Schema = Union[str, dict]

next_request_id = itertools.count(1).__next__  # request ids of all clients; atomic under the GIL
END = object()  # queued after a query's last chunk


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
        try:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
        except ValueError:
            path = non_finite_path(value)
            if path is None:
                raise
            raise BadJsonError(f"{path or '/'} is {value_at(value, path)!r}: JSON has no NaN or Infinity, so the "
                               "server could not read it (nothing was sent): send a finite number, or null") from None
    raise TypeError(f"a frame is JSON text (str/bytes) or a dict/list, not {type(value).__name__}")


def non_finite_path(value: Any, path: str = "") -> Optional[str]:
    """The JSON Pointer of the first NaN or infinity in ``value``, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, dict):
        items: Iterable[Tuple[Any, Any]] = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = non_finite_path(item, f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}")
        if found is not None:
            return found
    return None


def value_at(value: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        value = value[int(key)] if isinstance(value, (list, tuple)) else value[key]
    return value


def schema_text(schema: Optional[Schema]) -> str:
    if schema is None:
        return ""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, dict):
        return json.dumps(schema, separators=(",", ":"))
    raise TypeError(f"schema is a JSON Schema as a dict or JSON text, not {type(schema).__name__}")


def connect_keys(endpoint: str, server_public_key, client_public_key,
                 client_secret_key) -> Optional[Tuple[bytes, bytes, bytes]]:
    """Checks connect()'s endpoint and CURVE keys; the keys as bytes (None: no CURVE)."""
    if not endpoint:
        raise ValueError("endpoint is empty")
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


def _checked(group: Tuple[options.Option, ...], own: Dict[str, Any], more: Dict[str, Any], call: str,
             spelled: Dict[str, str]) -> Dict[str, Any]:
    """The options of `group` (protocol/options.json) `call` was given, checked: `own`, its own
    arguments by option name, and `more`, the rest by name; a name it does not take (an option
    `spelled` renames, under its option name) is a TypeError naming those it takes."""
    known = {o.name: o for o in group}
    unknown = sorted(name for name in more if name not in known or name in spelled)
    if unknown:
        takes = sorted(spelled.get(name, name) for name in known)
        raise TypeError(f"{call}() got unknown options {unknown}; it takes {takes}")
    return {name: known[name].check(value) for name, value in dict(more, **own).items()}


def open_spec(game_id: str, rules: Optional[Union[str, dict]], **more: Any) -> wire.OpenSpec:
    """An OpenSession's fields, each checked against protocol/options.json (kvframe.options.SESSION):
    ``more`` takes the rest by name (mode, adapter="holdem", a fidelity knob); None: the option's default."""
    rules_json = None if rules is None else (rules if isinstance(rules, str) else json.dumps(rules))
    return wire.OpenSpec(**_checked(options.SESSION, dict(game_id=game_id, rules_json=rules_json), more,
                                    "open_session", {"rules_json": "rules"}))


def sized_open_spec(max_message_bytes: int, game_id: str, rules: Optional[Union[str, dict]],
                    **more: Any) -> wire.OpenSpec:
    """open_spec, refused with TooLargeError when the message would exceed the server's limit."""
    spec = open_spec(game_id, rules, **more)
    check_size(wire.strings_bytes(spec, options.SESSION), max_message_bytes, "session's parameters")
    return spec


def query_spec(instruction: str, schema: Optional[Schema] = None, **more: Any) -> wire.QuerySpec:
    """A Query's fields, each checked against protocol/options.json (kvframe.options.QUERY): ``more``
    takes the rest by name (kind, npc_id, max_tokens, stop...); None: the option's default. A schema
    (a dict or JSON text, sent as output_schema) makes a TEXT query an NPC_ACTION."""
    if not isinstance(instruction, str) or not instruction:
        raise ValueError("instruction is empty: say what the model should do now")
    own = dict(instruction=instruction, output_schema=schema_text(schema))
    fields = _checked(options.QUERY, own, more, "query", {"output_schema": "schema"})
    if fields["output_schema"] and fields.get("kind", TaskKind.TEXT) == TaskKind.TEXT:
        fields["kind"] = TaskKind.NPC_ACTION  # a schema means an action
    return wire.QuerySpec(**fields)


def sized_query_spec(max_message_bytes: int, instruction: str, schema: Optional[Schema] = None,
                     **more: Any) -> wire.QuerySpec:
    """query_spec, refused with TooLargeError when the message would exceed the server's limit."""
    spec = query_spec(instruction, schema, **more)
    check_size(wire.strings_bytes(spec, options.QUERY), max_message_bytes, "query")
    return spec


def check_size(payload_bytes: int, limit: int, what: str) -> None:
    bound = payload_bytes + wire.ENVELOPE_BYTES
    if bound > limit:
        raise TooLargeError(f"the {what} needs up to {bound} bytes on the wire; the server takes at most {limit} per "
                            "message (nothing was sent: send patches, drop fields with block rules, or raise the "
                            "server's --max-message-mb)")


class StateDelta:
    """The state a session last sent, the base of its next patch, and how to send the next one.

    A state becomes the base only once it is handed to the client, and stops being one when the
    server refuses it, or any frame after the last whole one (the server then holds a state the
    patches were not made against, and refuses them too): the next state goes whole.
    """

    __slots__ = ("last", "whole_number", "since_whole")

    def __init__(self) -> None:
        self.last: Any = None
        self.whole_number = 0  # the number of the last whole frame sent
        self.since_whole = 0

    def next_frame(self, state: Any, patch: Optional[str], whole_every: int) -> Tuple[FrameFormat, bytes, bytes]:
        """How to send ``state``: (format, payload, the state whole); changes nothing until :meth:`sent`."""
        if patch not in (None, "merge", "json"):
            raise ValueError('patch is "merge", "json" or None (always whole)')
        whole = json_bytes(state)
        delta: Any = None
        if self.last is not None and patch and not (whole_every and self.since_whole >= whole_every):
            delta = _patch.merge_patch(self.last, state) if patch == "merge" else _patch.json_patch(self.last, state)
        if delta is not None:
            patched = json_bytes(delta)
            if len(patched) < len(whole):
                return (FrameFormat.MERGE_PATCH if patch == "merge" else FrameFormat.JSON_PATCH), patched, whole
        return FrameFormat.WHOLE, whole, whole

    def sent(self, whole: Optional[bytes], fmt: FrameFormat, number: int) -> None:
        """A frame was handed to the client; ``whole`` is its state (None: a frame send_state did not
        make, so the state is not known here and the next one goes whole)."""
        # A private copy: the caller may change its dict in place for the next frame.
        self.last = None if whole is None else json.loads(whole)
        if fmt == FrameFormat.WHOLE:
            self.whole_number = number
            self.since_whole = 0
        else:
            self.since_whole += 1

    def refused(self, number: int) -> None:
        """Frame ``number`` was refused (or its fate is unknown: a timeout, a dropped connection)."""
        if number >= self.whole_number:
            self.last = None


class QueryBase:
    """What :class:`kvframe.Query` and :class:`kvframe.aio.AsyncQuery` share: a query's chunks (queued for
    its iterator, passed to ``on_chunk``) and its final event, turned into an :class:`Answer` or an error.

    A subclass makes ``_future`` and ``_queue`` (anything with ``put_nowait``) and settles the
    future in :meth:`_finish`.
    """

    _future: Any
    _queue: Any

    def __init__(self, on_chunk: Optional[Callable[[Chunk], None]]) -> None:
        self._request_id = 0
        self._chunks: List[Chunk] = []
        self._first_chunk_at: Optional[float] = None
        self._on_chunk = on_chunk
        self._drained = False  # the iterator has seen the end: iterating again replays the chunks

    @property
    def request_id(self) -> int:
        """The query's request id (replies and reports carry it)."""
        return self._request_id

    def done(self) -> bool:
        """Whether the answer (or the query's error) has come."""
        return self._future.done()

    def _on_event(self, event: Any) -> None:
        """A reply's event, on the client's thread (or its event loop): a Chunk, or the end."""
        if isinstance(event, Chunk):
            if not self._chunks:
                self._first_chunk_at = time.monotonic()
            self._chunks.append(event)
            self._queue.put_nowait(event)
            if self._on_chunk is not None:
                self._on_chunk(event)
            return
        self._finish(self._answer(event))
        self._queue.put_nowait(END)

    def _answer(self, event: Any) -> Union[Answer, KvframeError]:
        if isinstance(event, KvframeError):
            return event
        if not isinstance(event, ResultEvent):
            return KvframeError(f"unexpected event {event!r}", code=ErrorCode.INTERNAL, request_id=self._request_id)
        return Answer(text=event.text, action_json=event.action_json, action=event.action,
                      action_flexbuffer=event.action_flexbuffer, stop=event.stop, report=event.report,
                      chunks=list(self._chunks), frame_number=event.frame_number, request_id=event.request_id,
                      first_chunk_at=self._first_chunk_at)

    def _finish(self, outcome: Union[Answer, KvframeError]) -> None:
        """Settles the future with the Answer, or the error."""
        raise NotImplementedError


Q = TypeVar("Q", bound=QueryBase)


class SessionBase(Generic[Q]):
    """What :class:`kvframe.Session` and :class:`kvframe.aio.AsyncSession` share: the ids, frame
    numbering, and checking and sending frames and queries. ``Q``: the session's query class."""

    _frame_lock: Any = contextlib.nullcontext()  # Session's is an RLock: frames come from any thread

    def __init__(self, client: Any, handle: int) -> None:
        self._client = client
        self._handle = handle
        self._last_frame = 0
        self._base: Optional[int] = None  # the number of the last frame sent: the next patch's base
        self._delta = StateDelta()
        self._closed = False

    @property
    def id(self) -> int:
        """The client's handle of the session (stable across re-opens)."""
        return self._handle

    @property
    def server_id(self) -> int:
        """The server's id of the session now (changes when the client re-opens it after a restart)."""
        return self._client._server_ids.get(self._handle, 0)

    @property
    def last_frame_number(self) -> int:
        """The number of the last frame sent (0: none yet)."""
        return self._last_frame

    def query(self, instruction: str, *, schema: Optional[Schema] = None,
              on_chunk: Optional[Callable[[Chunk], None]] = None, **options: Any) -> Q:
        """Sends a query about the session's latest frame (or ``frame_number``); returns at once with
        the query in flight (a :class:`kvframe.Query`, or a :class:`kvframe.aio.AsyncQuery` to await).

        Args:
            instruction: what the model should do now (the prompt's final block).
            schema: a JSON Schema (dict or text) the answer must satisfy: decoding is
                constrained to it, the kind becomes ``NPC_ACTION`` and :attr:`Answer.action` is the
                parsed value.
            on_chunk: called with each :class:`Chunk`, on the client's thread (or its event loop);
                it makes the query streamed.
            **options: the query's other options by name, each as protocol/options.json defines it
                (:data:`kvframe.options.QUERY`, docs/protocol.md): ``kind`` (:class:`TaskKind`),
                ``npc_id`` (only labels the server's debug log line), ``max_tokens``, sampling
                (``temperature`` 0: greedy, ``top_k``, ``top_p``, ``seed``), ``stop`` (up to 16
                strings), ``stream`` (iterate the query for its chunks), ``frame_number`` (0: the
                latest), ``deadline_ms`` (answer within this many ms of the server receiving it, or
                fail with :class:`~kvframe.DeadlineError` at once; 0: none), ``deadline_frame`` (moot
                once this frame number arrives; 0: none). A value out of its range raises
                ValueError, an unknown name TypeError.
        """
        if on_chunk is not None:
            options["stream"] = True
        spec = sized_query_spec(self._client._core.max_message_bytes, instruction, schema, **options)
        q = self._new_query(on_chunk)
        q._request_id = next_request_id()  # before the client's thread can answer it
        self._client._submit(self._handle, QUERY, spec, q._on_event, check_open=True, rid=q._request_id)
        return q

    def stream(self, instruction: str, **kwargs: Any) -> Q:
        """A streamed query: iterate it for the :class:`Chunk` s (``async for`` in asyncio), then take
        its Answer (``.result()``, or ``await`` it)."""
        kwargs["stream"] = True
        return self.query(instruction, **kwargs)

    def _new_query(self, on_chunk: Optional[Callable[[Chunk], None]]) -> Q:
        raise NotImplementedError

    def _send_frame(self, frame: JsonLike, format: FrameFormat, frame_number: Optional[int],
                    sink: Callable[[Any], None], state: Optional[bytes] = None,
                    base_frame: Optional[int] = None) -> None:
        """Checks a frame, numbers it and hands it to the client (``sink`` gets its ack or error).

        A patch names the frame sent before it as its base: the server applies it only to that
        frame. ``state``: the whole state when :meth:`send_state` made the frame.
        """
        if int(format) not in (0, 1, 2):
            raise ValueError(f"format {format!r} is not a kvframe.FrameFormat")
        payload = json_bytes(frame)
        check_size(len(payload), self._client._core.max_message_bytes, "frame")
        fmt = FrameFormat(int(format))
        with self._frame_lock:
            number = self._last_frame + 1 if frame_number is None else int(frame_number)
            base = None if fmt == FrameFormat.WHOLE else self._base if base_frame is None else int(base_frame)

            def on_reply(event: Any) -> None:
                if isinstance(event, KvframeError):
                    with self._frame_lock:
                        self._delta.refused(number)
                sink(event)

            spec = wire.FrameSpec(number, fmt, payload, base)
            self._delta.sent(state, fmt, number)  # before: a refusal may come back at once
            try:
                self._client._submit(self._handle, FRAME, spec, on_reply, check_open=True)
            except BaseException:
                self._delta.refused(number)
                raise
            self._last_frame = max(self._last_frame, number)
            self._base = number


class ClientBase:
    """What :class:`kvframe.Client` and :class:`kvframe.aio.AsyncClient` share: the protocol core, the
    sessions' ids, the properties, and the sockets' upkeep. A subclass makes ``_dealer`` and
    ``_monitor`` (its monitor socket, or None) and drives the core from its thread or event loop."""

    _dealer: Any
    _monitor: Any

    def __init__(self, endpoint: str, client_name: str, request_timeout: Optional[float], context: Any,
                 new_context: Callable[[], Any]) -> None:
        self._endpoint = endpoint
        self._own_context = context is None
        self._ctx = context if context is not None else new_context()
        self._routing_id = routing_id()
        self._request_timeout = request_timeout if request_timeout and request_timeout > 0 else None
        self._core = Core(endpoint, client_name, self._request_timeout, next_request_id)
        self._core.on_link_change = self._on_link_change
        self._core.on_session_opened = self._on_session_opened
        self._server_ids: Dict[int, int] = {}
        self._open_sessions: set = set()
        self._session_ids = itertools.count(1)

    @property
    def endpoint(self) -> str:
        """The server's endpoint, as given to ``connect``."""
        return self._endpoint

    @property
    def routing_id(self) -> bytes:
        """This client's ZeroMQ routing id: 16 random bytes, first byte >= 0x80, kept across reconnects.
        Without CURVE the server knows the client (and who owns a session) by it."""
        return self._routing_id

    @property
    def server_info(self) -> Optional[ServerInfo]:
        """What the server said in its last Hello reply (None before it answered)."""
        return self._core.info

    def _on_link_change(self) -> None:
        """A core hook: the link came up or went down, or the server said Hello."""
        raise NotImplementedError

    def _on_session_opened(self, handle: int, server_id: int) -> None:
        self._server_ids[handle] = server_id

    def _check_hello(self, timeout: float) -> None:
        """After waiting for the server's Hello: raises why it did not come, if it did not."""
        if self._core.info is not None:
            return
        if self._core.link_problem:
            raise ConnectError(self._core.link_problem)
        raise RequestTimeoutError(f"no answer from {self._endpoint} within {timeout:g} s (connect_timeout): "
                                  "is kvframe-serve running there?")

    def _take_outbox(self) -> List[bytes]:
        """What the core has left to send, taken from it."""
        core = self._core
        if not core.outbox:
            return []
        out, core.outbox = core.outbox, []
        return out

    def _on_monitor_event(self, frames: List[bytes]) -> None:
        """An event of the DEALER's monitor socket, told to the core."""
        event = int.from_bytes(frames[0][:2], "little") if frames and len(frames[0]) >= 2 else 0
        if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            self._core.on_connected()
        elif event == zmq.EVENT_DISCONNECTED:
            self._core.on_disconnected()
        elif event & (zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                      | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL):
            self._core.on_handshake_failed()

    def _close_sockets(self) -> None:
        if self._monitor is not None:
            try:
                self._dealer.disable_monitor()
            except zmq.ZMQError:
                pass
            self._monitor.close(0)
        self._dealer.close(0)
