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
import logging
import secrets
import time
from typing import Any, AsyncIterator, Callable, Generator, Optional, Union

import zmq
import zmq.asyncio

from ._common import (END, ClientBase, JsonLike, QueryBase, Schema, SessionBase, check_size, connect_keys,
                      next_request_id, sized_open_spec)
from ._core import CLOSE, OPEN, STATS, Request
from .client import EXPIRY_SCAN_S, MONITOR_EVENTS, configure_socket
from .errors import ClosedError, ConnectError, ErrorCode, KvframeError, error_for
from .messages import Answer, Chunk, FrameAck, FrameFormat, Mode, Stats, TaskKind

log = logging.getLogger("kvframe")

__all__ = ["AsyncClient", "AsyncSession", "AsyncQuery"]


def _settle(future: "asyncio.Future[Any]", event: Any) -> None:
    if future.done():  # cancelled by its awaiter
        return
    if isinstance(event, KvframeError):
        future.set_exception(event)
    else:
        future.set_result(event)


class AsyncQuery(QueryBase):
    """A query in flight: ``await`` it for the :class:`Answer`, or ``async for`` its chunks.

    ::

        q = session.stream("Comment on the hand.", kind=TaskKind.COMMENTARY)
        async for chunk in q:
            print(chunk.text, end="")
        answer = await q
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, on_chunk: Optional[Callable[[Chunk], None]]) -> None:
        super().__init__(on_chunk)
        self._future: "asyncio.Future[Answer]" = loop.create_future()
        self._queue: "asyncio.Queue[Any]" = asyncio.Queue()

    @property
    def future(self) -> "asyncio.Future[Answer]":
        return self._future

    def __await__(self) -> Generator[Any, None, Answer]:
        return asyncio.shield(self._future).__await__()

    async def result(self) -> Answer:
        return await self

    def __aiter__(self) -> AsyncIterator[Chunk]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Chunk]:
        if self._drained:
            for chunk in list(self._chunks):
                yield chunk
        else:
            while True:
                item = await self._queue.get()
                if item is END:
                    self._drained = True
                    break
                yield item
        if not self._future.cancelled() and self._future.exception() is not None:
            raise self._future.exception()  # type: ignore[misc]

    def _finish(self, outcome: Union[Answer, KvframeError]) -> None:
        _settle(self._future, outcome)


class AsyncSession(SessionBase[AsyncQuery]):
    """One game state on the server (see :class:`kvframe.Session`); made by :meth:`AsyncClient.open_session`.

    :meth:`query` (arguments as :meth:`kvframe.Session.query`) and :meth:`stream` send at once and
    return an :class:`AsyncQuery`.
    """

    def send_frame(self, frame: JsonLike, format: FrameFormat = FrameFormat.WHOLE, *,
                   frame_number: Optional[int] = None, base_frame: Optional[int] = None
                   ) -> "asyncio.Future[FrameAck]":
        """Sends a frame at once (as :meth:`kvframe.Session.send_frame`); returns a Future of its
        :class:`FrameAck` (await it to wait, and to see a rejected frame's error)."""
        return self._frame_future(frame, format, frame_number, None, base_frame)

    def send_state(self, state: Any, *, patch: Optional[str] = "merge", whole_every: int = 0,
                   frame_number: Optional[int] = None) -> "asyncio.Future[FrameAck]":
        """The state whole first, then as patches against the last state sent and not refused (as
        :meth:`kvframe.Session.send_state`)."""
        fmt, payload, whole = self._delta.next_frame(state, patch, whole_every)
        return self._frame_future(payload, fmt, frame_number, whole)

    def _frame_future(self, frame: JsonLike, format: FrameFormat, frame_number: Optional[int],
                      state: Optional[bytes], base_frame: Optional[int] = None) -> "asyncio.Future[FrameAck]":
        future = self._client._loop.create_future()
        # A failed frame nobody awaits is reported by asyncio ("Future exception was never retrieved").
        self._send_frame(frame, format, frame_number, lambda event: _settle(future, event), state, base_frame)
        return future

    async def ask(self, instruction: str, **kwargs: Any) -> Answer:
        """Sends a query and returns its :class:`Answer`."""
        return await self.query(instruction, **kwargs)

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

    def _new_query(self, on_chunk: Optional[Callable[[Chunk], None]]) -> AsyncQuery:
        return AsyncQuery(self._client._loop, on_chunk)


class AsyncClient(ClientBase):
    """The asyncio counterpart of :class:`kvframe.Client`; make it with ``await AsyncClient.connect(...)``."""

    def __init__(self, endpoint: str, *, client_name: str, request_timeout: Optional[float], keys,
                 context: Optional[zmq.asyncio.Context]) -> None:
        self._loop = asyncio.get_running_loop()
        super().__init__(endpoint, client_name, request_timeout, context, zmq.asyncio.Context)
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
        keys = connect_keys(endpoint, server_public_key, client_public_key, client_secret_key)
        client = cls(endpoint, client_name=client_name, request_timeout=request_timeout, keys=keys, context=context)
        if connect_timeout:
            try:
                await client._wait_for_hello(connect_timeout)
            except BaseException:
                await client.close()
                raise
        return client

    async def open_session(self, game_id: str = "", *, rules: Union[str, dict, None] = None,
                           **options: Any) -> AsyncSession:
        """Opens a session (arguments as :meth:`kvframe.Client.open_session`)."""
        spec = sized_open_spec(self._core.max_message_bytes, game_id, rules, **options)
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
                check_open: bool = False, rid: int = 0) -> int:
        if self._closed:
            raise ClosedError("the client is closed")
        if check_open and handle not in self._open_sessions:
            raise error_for(ErrorCode.UNKNOWN_SESSION, f"session {handle} is not open on this client")
        rid = rid or next_request_id()
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
        self._check_hello(timeout)

    def _on_link_change(self) -> None:
        self._link_event.set()

    def _flush(self) -> None:
        for message in self._take_outbox():
            sent = self._dealer.send(message, zmq.NOBLOCK, copy=False)
            sent.add_done_callback(_log_send_failure)

    async def _read(self) -> None:
        core = self._core
        while True:
            message = await self._dealer.recv()
            core.on_message(message)
            self._flush()

    async def _watch(self) -> None:
        while True:
            self._on_monitor_event(await self._monitor.recv_multipart())
            self._flush()

    async def _tick(self) -> None:
        core = self._core
        while True:
            # A request submitted meanwhile sets the event: its timeout is then scanned for.
            self._timer_event.clear()
            try:
                await asyncio.wait_for(self._timer_event.wait(), core.wait_s(EXPIRY_SCAN_S))
            except asyncio.TimeoutError:
                pass
            now = time.monotonic()
            core.expire(now)
            core.keep_alive(now)
            self._flush()


def _log_send_failure(future: "asyncio.Future[Any]") -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("kvframe: a request could not be queued for sending: %s", future.exception())
