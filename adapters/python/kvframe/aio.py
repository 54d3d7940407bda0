"""The asyncio client: :class:`AsyncClient`, :class:`AsyncSession`, :class:`AsyncQuery`.

The same protocol logic as :class:`kvframe.Client` (reconnects, re-opens
sessions after a server restart, typed errors), driven by the event loop over
``zmq.asyncio`` instead of a background thread: use it from one event loop.

    async with await kvframe.aio.AsyncClient.connect("tcp://127.0.0.1:5555") as client:
        session = await client.open_session("holdem")
        session.send_frame(state)                        # returns at once (await it for the ack)
        answer = await session.ask("What does p3 do?")
        async for chunk in session.stream("Comment.", kind=kvframe.TaskKind.COMMENTARY):
            print(chunk.text, end="")
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from typing import Any, AsyncIterator, Callable, Dict, Generator, Iterable, Optional, Union

import zmq
import zmq.asyncio

from . import wire
from ._common import (JsonLike, QueryEvents, Schema, StateDelta, check_keys, check_size, json_bytes, open_spec,
                      query_spec, routing_id)
from ._core import CLOSE, FRAME, OPEN, QUERY, STATS, Core, Request
from .client import EXPIRY_SCAN_S, MONITOR_EVENTS, _next_request_id, configure_socket
from .errors import ClosedError, ConnectError, ErrorCode, KvframeError, RequestTimeoutError, error_for
from .messages import Answer, Chunk, FrameAck, FrameFormat, Mode, ServerInfo, Stats, TaskKind

log = logging.getLogger("kvframe")

__all__ = ["AsyncClient", "AsyncSession", "AsyncQuery"]

_END = object()


def _settle(future: "asyncio.Future[Any]", event: Any) -> None:
    if future.done():  # cancelled by its awaiter
        return
    if isinstance(event, KvframeError):
        future.set_exception(event)
    else:
        future.set_result(event)


class AsyncQuery:
    """A query in flight: ``await`` it for the :class:`Answer`, or ``async for`` its chunks.

    ::

        q = session.stream("Comment on the hand.", kind=TaskKind.COMMENTARY)
        async for chunk in q:
            print(chunk.text, end="")
        answer = await q
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, on_chunk: Optional[Callable[[Chunk], None]]) -> None:
        self._events = QueryEvents(on_chunk)
        self._future: "asyncio.Future[Answer]" = loop.create_future()
        self._queue: "asyncio.Queue[Any]" = asyncio.Queue()
        self._drained = False

    @property
    def request_id(self) -> int:
        return self._events.request_id

    @property
    def future(self) -> "asyncio.Future[Answer]":
        return self._future

    def done(self) -> bool:
        return self._future.done()

    def __await__(self) -> Generator[Any, None, Answer]:
        return asyncio.shield(self._future).__await__()

    async def result(self) -> Answer:
        return await self

    def __aiter__(self) -> AsyncIterator[Chunk]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Chunk]:
        if self._drained:
            for chunk in list(self._events.chunks):
                yield chunk
        else:
            while True:
                item = await self._queue.get()
                if item is _END:
                    self._drained = True
                    break
                yield item
        if not self._future.cancelled() and self._future.exception() is not None:
            raise self._future.exception()  # type: ignore[misc]

    def _on_event(self, event: Any) -> None:
        if isinstance(event, Chunk):
            self._events.chunk(event)
            self._queue.put_nowait(event)
            if self._events.on_chunk is not None:
                self._events.on_chunk(event)
            return
        _settle(self._future, self._events.final(event))
        self._queue.put_nowait(_END)


class AsyncSession:
    """One game state on the server (see :class:`kvframe.Session`); made by :meth:`AsyncClient.open_session`."""

    def __init__(self, client: "AsyncClient", handle: int) -> None:
        self._client = client
        self._handle = handle
        self._last_frame = 0
        self._delta = StateDelta()
        self._closed = False

    @property
    def id(self) -> int:
        return self._handle

    @property
    def server_id(self) -> int:
        return self._client._server_ids.get(self._handle, 0)

    @property
    def last_frame_number(self) -> int:
        return self._last_frame

    def send_frame(self, frame: JsonLike, format: FrameFormat = FrameFormat.WHOLE, *,
                   frame_number: Optional[int] = None) -> "asyncio.Future[FrameAck]":
        """Sends a frame at once (as :meth:`kvframe.Session.send_frame`); returns a Future of its
        :class:`FrameAck` (await it to wait, and to see a rejected frame's error)."""
        if int(format) not in (0, 1, 2):
            raise ValueError(f"format {format!r} is not a kvframe.FrameFormat")
        payload = json_bytes(frame)
        check_size(len(payload), self._client._core.max_message_bytes, "frame")
        number = self._last_frame + 1 if frame_number is None else int(frame_number)
        future = self._client._loop.create_future()
        # A failed frame nobody awaits is reported by asyncio ("Future exception was never retrieved").
        self._client._submit(self._handle, FRAME, wire.FrameSpec(number, FrameFormat(int(format)), payload),
                             lambda event: _settle(future, event), check_open=True)
        self._last_frame = max(self._last_frame, number)
        return future

    def send_state(self, state: Any, *, patch: Optional[str] = "merge", whole_every: int = 0,
                   frame_number: Optional[int] = None) -> "asyncio.Future[FrameAck]":
        """The state whole first, then as patches (as :meth:`kvframe.Session.send_state`)."""
        fmt, payload = self._delta.next_frame(state, patch, whole_every)
        return self.send_frame(payload, fmt, frame_number=frame_number)

    def query(self, instruction: str, *, kind: Union[TaskKind, int] = TaskKind.TEXT, npc_id: str = "",
              schema: Optional[Schema] = None, max_tokens: int = 64, temperature: float = 0.0, top_k: int = 0,
              top_p: float = 1.0, seed: int = 0, stop: Iterable[str] = (), stream: bool = False,
              frame_number: int = 0, deadline_ms: int = 0, deadline_frame: int = 0,
              on_chunk: Optional[Callable[[Chunk], None]] = None) -> AsyncQuery:
        """Sends a query at once (arguments as :meth:`kvframe.Session.query`)."""
        spec = query_spec(instruction, kind=kind, npc_id=npc_id, schema=schema, max_tokens=max_tokens,
                          temperature=temperature, top_k=top_k, top_p=top_p, seed=seed, stop=stop,
                          stream=stream or on_chunk is not None, frame_number=frame_number,
                          deadline_ms=deadline_ms, deadline_frame=deadline_frame)
        check_size(spec.size_bound(), self._client._core.max_message_bytes, "query")
        q = AsyncQuery(self._client._loop, on_chunk)
        q._events.request_id = self._client._submit(self._handle, QUERY, spec, q._on_event, check_open=True)
        return q

    async def ask(self, instruction: str, **kwargs: Any) -> Answer:
        """Sends a query and returns its :class:`Answer`."""
        return await self.query(instruction, **kwargs)

    def stream(self, instruction: str, **kwargs: Any) -> AsyncQuery:
        """A streamed query: ``async for`` its chunks, then ``await`` it."""
        kwargs["stream"] = True
        return self.query(instruction, **kwargs)

    async def act(self, instruction: str, schema: Schema, **kwargs: Any) -> Any:
        """An NPC action valid against ``schema``, parsed."""
        kwargs.setdefault("kind", TaskKind.NPC_ACTION)
        return (await self.ask(instruction, schema=schema, **kwargs)).action

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._client._close_session(self._handle)

    async def __aenter__(self) -> "AsyncSession":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.close()
        except KvframeError as e:
            log.debug("kvframe: closing session %d: %s", self._handle, e)


class AsyncClient:
    """The asyncio counterpart of :class:`kvframe.Client`; make it with ``await AsyncClient.connect(...)``."""

    def __init__(self, endpoint: str, *, client_name: str, request_timeout: Optional[float], keys,
                 context: Optional[zmq.asyncio.Context]) -> None:
        self._loop = asyncio.get_running_loop()
        self._endpoint = endpoint
        self._own_context = context is None
        self._ctx = context if context is not None else zmq.asyncio.Context()
        self._routing_id = routing_id()
        self._request_timeout = request_timeout if request_timeout and request_timeout > 0 else None
        self._core = Core(endpoint, client_name, self._request_timeout, _next_request_id)
        self._core.on_link_change = self._on_link_change
        self._core.on_session_opened = self._on_session_opened
        self._server_ids: Dict[int, int] = {}
        self._open_sessions: set = set()
        self._session_ids = itertools.count(1)
        self._link_event = asyncio.Event()
        self._timer_event = asyncio.Event()
        self._closed = False
        self._dealer = self._ctx.socket(zmq.DEALER)
        self._monitor = None
        try:
            configure_socket(self._dealer, self._routing_id, keys)
            self._monitor = self._dealer.get_monitor_socket(
                MONITOR_EVENTS, f"inproc://kvframe-py-amonitor-{secrets.token_hex(8)}")
            self._dealer.connect(endpoint)
        except zmq.ZMQError as e:
            self._close_sockets()
            raise ConnectError(f"cannot connect to {endpoint}: {e}") from None
        self._tasks = [self._loop.create_task(self._read()), self._loop.create_task(self._watch()),
                       self._loop.create_task(self._tick())]
        if endpoint.startswith("inproc://"):
            self._core.on_connected()
            self._flush()

    @classmethod
    async def connect(cls, endpoint: str = "tcp://127.0.0.1:5555", *, client_name: str = "kvframe-python-asyncio",
                      connect_timeout: Optional[float] = 5.0, request_timeout: Optional[float] = 30.0,
                      server_public_key: Union[str, bytes, None] = None,
                      client_public_key: Union[str, bytes, None] = None,
                      client_secret_key: Union[str, bytes, None] = None,
                      context: Optional[zmq.asyncio.Context] = None) -> "AsyncClient":
        """Connects (arguments and errors as :meth:`kvframe.Client.connect`)."""
        if not endpoint:
            raise ValueError("endpoint is empty")
        keys = check_keys(server_public_key, client_public_key, client_secret_key)
        client = cls(endpoint, client_name=client_name, request_timeout=request_timeout, keys=keys, context=context)
        if connect_timeout:
            try:
                await client._wait_for_hello(connect_timeout)
            except BaseException:
                await client.close()
                raise
        return client

    @property
    def endpoint(self) -> str:
        return self._endpoint

    @property
    def routing_id(self) -> bytes:
        return self._routing_id

    @property
    def server_info(self) -> Optional[ServerInfo]:
        return self._core.info

    async def open_session(self, game_id: str = "", *, rules: Union[str, dict, None] = None,
                           mode: Union[Mode, int] = Mode.BLOCK, system_prompt: str = "",
                           context_tokens: int = 0) -> AsyncSession:
        """Opens a session (arguments as :meth:`kvframe.Client.open_session`)."""
        spec = open_spec(game_id, rules, mode, system_prompt, context_tokens)
        check_size(len(spec.rules_json) + len(spec.system_prompt) + len(spec.game_id),
                   self._core.max_message_bytes, "session's parameters")
        handle = next(self._session_ids)
        await self._request(handle, OPEN, spec)
        self._open_sessions.add(handle)
        return AsyncSession(self, handle)

    async def stats(self) -> Stats:
        return await self._request(0, STATS, None)

    async def close(self) -> None:
        """Closes the sessions on the server (bounded by half a second); pending requests fail
        with :class:`~kvframe.ClosedError`. Idempotent."""
        if self._closed:
            return
        self._closed = True
        core = self._core
        core.begin_close()
        self._flush()
        while not core.close_done(time.monotonic()):
            self._timer_event.set()
            await asyncio.sleep(EXPIRY_SCAN_S)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        core.fail_all(ErrorCode.CLOSED, "the client was closed before the reply came")
        self._close_sockets()
        if self._own_context:
            self._ctx.term()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # ---- internals ----------------------------------------------------------------

    def _submit(self, handle: int, kind: int, spec: Any, sink: Optional[Callable[[Any], None]],
                check_open: bool = False) -> int:
        if self._closed:
            raise ClosedError("the client is closed")
        if check_open and handle not in self._open_sessions:
            raise error_for(ErrorCode.UNKNOWN_SESSION, f"session {handle} is not open on this client")
        rid = _next_request_id()
        self._core.submit(Request(rid, kind, handle, spec, sink, self._core.deadline_after(self._request_timeout)))
        self._flush()
        self._timer_event.set()
        return rid

    async def _request(self, handle: int, kind: int, spec: Any) -> Any:
        future = self._loop.create_future()
        self._submit(handle, kind, spec, lambda event: _settle(future, event))
        return await future

    async def _close_session(self, handle: int) -> None:
        if handle not in self._open_sessions or self._closed:
            return  # closing the client closes its sessions
        self._open_sessions.discard(handle)
        await self._request(handle, CLOSE, None)

    async def _wait_for_hello(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self._core.info is None and not self._core.link_problem:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._link_event.clear()
            try:
                await asyncio.wait_for(self._link_event.wait(), left)
            except asyncio.TimeoutError:
                break
        if self._core.info is not None:
            return
        if self._core.link_problem:
            raise ConnectError(self._core.link_problem)
        raise RequestTimeoutError(f"no answer from {self._endpoint} within {timeout:g} s (connect_timeout): "
                                  "is kvframe-serve running there?")

    def _on_link_change(self) -> None:
        self._link_event.set()

    def _on_session_opened(self, handle: int, server_id: int) -> None:
        self._server_ids[handle] = server_id

    def _flush(self) -> None:
        core = self._core
        if not core.outbox:
            return
        out, core.outbox = core.outbox, []
        for message in out:
            sent = self._dealer.send(message, zmq.NOBLOCK, copy=False)
            sent.add_done_callback(_log_send_failure)

    def _close_sockets(self) -> None:
        if self._monitor is not None:
            try:
                self._dealer.disable_monitor()
            except zmq.ZMQError:
                pass
            self._monitor.close(0)
        self._dealer.close(0)

    async def _read(self) -> None:
        core = self._core
        while True:
            message = await self._dealer.recv()
            core.on_message(message)
            self._flush()

    async def _watch(self) -> None:
        core = self._core
        while True:
            frames = await self._monitor.recv_multipart()
            event = int.from_bytes(frames[0][:2], "little") if frames and len(frames[0]) >= 2 else 0
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                core.on_connected()
            elif event == zmq.EVENT_DISCONNECTED:
                core.on_disconnected()
            elif event & (zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                          | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL):
                core.on_handshake_failed()
            self._flush()

    async def _tick(self) -> None:
        core = self._core
        while True:
            if core.has_timers():
                await asyncio.sleep(EXPIRY_SCAN_S)
            else:
                self._timer_event.clear()
                await self._timer_event.wait()
            core.expire(time.monotonic())
            self._flush()


def _log_send_failure(future: "asyncio.Future[Any]") -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("kvframe: a request could not be queued for sending: %s", future.exception())
