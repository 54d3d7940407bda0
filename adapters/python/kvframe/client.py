"""The threaded client: :class:`Client`, :class:`Session`, :class:`Query`.

Like the native client (adapters/native), one background thread per client
owns the ZeroMQ DEALER socket; calls on any thread hand their request to it
and return at once (frames, queries) or wait for the reply (open, close,
stats). Callbacks (``on_ack``, ``on_chunk``) run on that background thread:
keep them short, and do not call the blocking methods from them.

    with kvframe.Client.connect("tcp://127.0.0.1:5555") as client:
        session = client.open_session("holdem")
        session.send_frame({"state": {...}})
        answer = session.ask("What does p3 do?")
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import secrets
import threading
import time
from typing import Any, Callable, Iterator, Optional, Union

import zmq

from ._common import (END, ClientBase, JsonLike, QueryBase, Schema, SessionBase, check_size, connect_keys,
                      next_request_id, sized_open_spec)
from ._core import CLOSE, OPEN, STATS, Request
from .errors import ClosedError, ConnectError, ErrorCode, KvframeError, error_for
from .messages import Answer, Chunk, FrameAck, FrameFormat, Mode, Stats, TaskKind

log = logging.getLogger("kvframe")

__all__ = ["Client", "Session", "Query", "configure_socket", "MONITOR_EVENTS"]

# Socket settings, as the native client's (adapters/native/link.cpp): heartbeats notice a
# server that vanished without closing the connection; reconnects are quick because a game
# wants its NPCs back within a second of the server restarting.
HEARTBEAT_IVL_MS = 1000
HEARTBEAT_TIMEOUT_MS = 3000
HEARTBEAT_TTL_MS = 6000
RECONNECT_IVL_MS = 50
RECONNECT_IVL_MAX_MS = 1000
EXPIRY_SCAN_S = 0.01  # request timeouts are checked this often while requests are pending
MONITOR_EVENTS = (zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_FAILED_AUTH
                  | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)


def _settle(future: concurrent.futures.Future, event: Any) -> None:
    """Completes a future with an event (an exception for a KvframeError); a future its
    owner cancelled stays cancelled."""
    try:
        if isinstance(event, KvframeError):
            future.set_exception(event)
        else:
            future.set_result(event)
    except concurrent.futures.InvalidStateError:
        pass


def configure_socket(socket: zmq.Socket, identity: bytes, keys) -> None:
    """The DEALER's options: routing id, no linger, no high-water marks, heartbeats, CURVE."""
    socket.setsockopt(zmq.ROUTING_ID, identity)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.IMMEDIATE, 0)
    socket.setsockopt(zmq.SNDHWM, 0)  # never refuse a send: requests are bounded by the game
    socket.setsockopt(zmq.RCVHWM, 0)
    socket.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
    socket.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
    socket.setsockopt(zmq.HEARTBEAT_TTL, HEARTBEAT_TTL_MS)
    socket.setsockopt(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
    socket.setsockopt(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)
    if keys:
        socket.setsockopt(zmq.CURVE_SERVERKEY, keys[0])
        socket.setsockopt(zmq.CURVE_PUBLICKEY, keys[1])
        socket.setsockopt(zmq.CURVE_SECRETKEY, keys[2])


class _FrameFuture(concurrent.futures.Future):
    """A frame's ack. An error nobody asked about by the time it comes is logged."""

    _observed = False

    def result(self, timeout=None):
        self._observed = True
        return super().result(timeout)

    def exception(self, timeout=None):
        self._observed = True
        return super().exception(timeout)

    def add_done_callback(self, fn):
        self._observed = True
        super().add_done_callback(fn)


class Query(QueryBase):
    """A query in flight: wait for its :class:`Answer`, or iterate its chunks as they come.

    ::

        q = session.query("Comment on the hand.", kind=TaskKind.COMMENTARY, stream=True)
        for chunk in q:            # Chunk objects, in order; raises the query's error, if any
            print(chunk.text, end="", flush=True)
        answer = q.result()        # the whole Answer (chunks included)
    """

    def __init__(self, on_chunk: Optional[Callable[[Chunk], None]]) -> None:
        super().__init__(on_chunk)
        self._future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue: "queue.SimpleQueue[Any]" = queue.SimpleQueue()

    @property
    def future(self) -> "concurrent.futures.Future[Answer]":
        """A :class:`concurrent.futures.Future` of the Answer (its exception: a KvframeError)."""
        return self._future

    def result(self, timeout: Optional[float] = None) -> Answer:
        """Waits for the answer (the client's request timeout bounds it); raises the query's KvframeError."""
        return self._future.result(timeout)

    def __iter__(self) -> Iterator[Chunk]:
        if self._drained:
            yield from list(self._chunks)
        else:
            while True:
                item = self._queue.get()
                if item is END:
                    self._drained = True
                    break
                yield item
        error = self._future.exception()
        if error is not None:
            raise error

    def _finish(self, outcome: Union[Answer, KvframeError]) -> None:
        _settle(self._future, outcome)


class Session(SessionBase[Query]):
    """One game state on the server: frames in, queries about them.

    Made by :meth:`Client.open_session`; a context manager that closes it.
    The session's :attr:`id` is the client's handle and stays the same when the
    client re-opens the session on a restarted server (:attr:`server_id` changes).
    Its ids, :meth:`query` and :meth:`stream` are shared with the asyncio session
    (``kvframe._common.SessionBase``).
    """

    def __init__(self, client: "Client", handle: int) -> None:
        super().__init__(client, handle)
        self._frame_lock = threading.RLock()

    def send_frame(self, frame: JsonLike, format: FrameFormat = FrameFormat.WHOLE, *,
                   frame_number: Optional[int] = None, base_frame: Optional[int] = None,
                   on_ack: Optional[Callable[[Union[FrameAck, KvframeError]], None]] = None
                   ) -> "concurrent.futures.Future[FrameAck]":
        """Sends a frame: the whole gamecore JSON, or a patch against the previous frame.

        Args:
            frame: JSON text (str or UTF-8 bytes, sent as it is) or a dict / list (serialized
                compactly): the state for ``WHOLE``, a merge patch (an object) for
                ``MERGE_PATCH``, a list of ops for ``JSON_PATCH``.
            format: :class:`FrameFormat`.
            frame_number: must increase per session; default: the last one plus 1.
            base_frame: a patch's base, the frame it was made against; default: the frame
                sent before it. The server applies a patch only to its base and refuses it
                otherwise (:class:`~kvframe.StaleBaseError`, nothing changed).
            on_ack: called on the client's thread with the :class:`FrameAck` or the error.

        Returns at once with a Future of the :class:`FrameAck` (``.result()`` waits; a rejected
        frame raises e.g. :class:`~kvframe.BadJsonError`). Errors of frames nobody waits for are
        logged on the ``kvframe`` logger. Raises :class:`~kvframe.TooLargeError` (nothing sent)
        when the frame exceeds the server's message size.
        """
        return self._frame_future(frame, format, frame_number, on_ack, None, base_frame)

    def _frame_future(self, frame: JsonLike, format: FrameFormat, frame_number: Optional[int],
                      on_ack: Optional[Callable[[Union[FrameAck, KvframeError]], None]],
                      state: Optional[bytes], base_frame: Optional[int] = None
                      ) -> "concurrent.futures.Future[FrameAck]":
        future = _FrameFuture()

        def sink(event: Any) -> None:
            if isinstance(event, KvframeError) and on_ack is None and not future._observed:
                log.warning("kvframe: frame of session %d failed: %s", self._handle, event)
            _settle(future, event)
            if on_ack is not None:
                on_ack(event)

        self._send_frame(frame, format, frame_number, sink, state, base_frame)
        return future

    def send_state(self, state: Any, *, patch: Optional[str] = "merge", whole_every: int = 0,
                   frame_number: Optional[int] = None,
                   on_ack: Optional[Callable[[Union[FrameAck, KvframeError]], None]] = None
                   ) -> "concurrent.futures.Future[FrameAck]":
        """Sends the game's state, as a patch against the state sent before when one is smaller.

        The first state goes whole; later ones as an RFC 7386 merge patch (``patch="merge"``)
        or an RFC 6902 JSON Patch (``"json"``) computed by :mod:`kvframe.patch`, or whole when
        no patch gives exactly ``state`` (key order included) or the patch is not smaller. A
        patch names the frame it was made against, and the server applies it to no other; after
        a refused frame (or one whose reply never came) the next state goes whole, so the
        server never holds a state the game did not send. A NaN or infinity in ``state`` raises
        :class:`~kvframe.BadJsonError` naming its path, with nothing sent.
        ``whole_every=N`` sends every N+1-th frame whole (bounds what the client keeps to
        re-send after a server restart). ``state`` is copied: change it freely afterwards.
        """
        with self._frame_lock:
            fmt, payload, whole = self._delta.next_frame(state, patch, whole_every)
            return self._frame_future(payload, fmt, frame_number, on_ack, whole)

    def ask(self, instruction: str, *, timeout: Optional[float] = None, **kwargs: Any) -> Answer:
        """Sends a query and waits for its :class:`Answer` (keywords as :meth:`query`)."""
        return self.query(instruction, **kwargs).result(timeout)

    def act(self, instruction: str, schema: Schema, **kwargs: Any) -> Any:
        """An NPC action valid against ``schema``, parsed (a dict for an object schema)."""
        kwargs.setdefault("kind", TaskKind.NPC_ACTION)
        return self.ask(instruction, schema=schema, **kwargs).action

    def close(self) -> None:
        """Closes the session on the server (waits for it; idempotent). Its pending requests fail
        with :class:`~kvframe.ClosedError`."""
        if self._closed:
            return
        self._closed = True
        self._client._close_session(self._handle)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.close()
        except KvframeError as e:
            log.debug("kvframe: closing session %d: %s", self._handle, e)

    def _new_query(self, on_chunk: Optional[Callable[[Chunk], None]]) -> Query:
        return Query(on_chunk)

    def __repr__(self) -> str:
        return f"<kvframe.Session {self._handle} server_id={self.server_id} frames={self._last_frame}>"


class Client(ClientBase):
    """A connection to kvframe-serve: opens sessions, reconnects and recovers by itself.

    Use :meth:`connect`; a context manager that closes it. All methods may be called from any
    thread. See the module docstring.
    """

    def __init__(self, endpoint: str, *, client_name: str, request_timeout: Optional[float], keys,
                 context: Optional[zmq.Context]) -> None:
        super().__init__(endpoint, client_name, request_timeout, context, zmq.Context)
        self._lock = threading.Lock()          # commands, wake socket, flags
        self._commands: list = []
        self._wake_pending = False
        self._close_requested = False
        self._stopped = False
        self._info_cv = threading.Condition()
        self._link_generation = 0
        token = secrets.token_hex(8)
        self._dealer = self._ctx.socket(zmq.DEALER)
        self._monitor = None
        self._wake_recv = self._ctx.socket(zmq.PAIR)
        self._wake_send = self._ctx.socket(zmq.PAIR)
        try:
            configure_socket(self._dealer, self._routing_id, keys)
            self._wake_recv.bind(f"inproc://kvframe-py-wake-{token}")
            self._wake_send.connect(f"inproc://kvframe-py-wake-{token}")
            # The monitor is connected before the DEALER so no connection event is missed.
            self._monitor = self._dealer.get_monitor_socket(MONITOR_EVENTS, f"inproc://kvframe-py-monitor-{token}")
            self._dealer.connect(endpoint)
        except zmq.ZMQError as e:
            self._close_sockets()
            self._wake_send.close(0)
            if self._own_context:
                self._ctx.term()
            raise ConnectError(f"cannot connect to {endpoint}: {e}") from None
        self._thread = threading.Thread(target=self._run, name="kvframe-client", daemon=True)
        self._thread.start()

    @classmethod
    def connect(cls, endpoint: str = "tcp://127.0.0.1:5555", *, client_name: str = "kvframe-python",
                connect_timeout: Optional[float] = 5.0, request_timeout: Optional[float] = 30.0,
                server_public_key: Union[str, bytes, None] = None, client_public_key: Union[str, bytes, None] = None,
                client_secret_key: Union[str, bytes, None] = None, context: Optional[zmq.Context] = None
                ) -> "Client":
        """Connects to ``endpoint`` and (unless ``connect_timeout`` is 0/None) waits for the server's Hello reply.

        Args:
            endpoint: the server's ``--bind`` (``tcp://host:port``, or ``inproc://`` with a shared ``context``).
            client_name: shown in the server's log.
            connect_timeout: seconds to wait for the server; 0 or None: do not wait (requests wait instead).
            request_timeout: seconds after which a request with no reply fails with
                :class:`~kvframe.RequestTimeoutError`; 0 or None: never.
            server_public_key, client_public_key, client_secret_key: CURVE keys (Z85, 40 characters; all or
                none): the server's ``--curve-secret`` pair's public key, and this client's pair
                (listed in the server's ``--curve-allow``).
            context: a :class:`zmq.Context` to make the sockets in (default: the client's own).

        Raises:
            ConnectError: the endpoint or keys were refused (bad endpoint, failed CURVE handshake).
            RequestTimeoutError: no answer within ``connect_timeout``.
        """
        keys = connect_keys(endpoint, server_public_key, client_public_key, client_secret_key)
        client = cls(endpoint, client_name=client_name, request_timeout=request_timeout, keys=keys, context=context)
        if connect_timeout:
            try:
                client._wait_for_hello(connect_timeout)
            except BaseException:
                client.close()
                raise
        return client

    # ---- public (and ClientBase's endpoint, routing_id, server_info) --------------

    def open_session(self, game_id: str = "", *, rules: Union[str, dict, None] = None, **options: Any) -> Session:
        """Opens a session (waits for the server).

        Args:
            game_id: free text for the server's logs and stats ("holdem").
            rules: json_blocker rules (docs/json_blocker.md) as a dict or JSON text; None: the defaults.
            **options: the session's other options by name, each as protocol/options.json defines it
                (:data:`kvframe.options.SESSION`, docs/protocol.md): ``mode`` (:class:`Mode`, default
                BLOCK), ``system_prompt``, ``context_tokens``, block mode's fidelity knobs
                (docs/block_attention.md; -1: the server's default), ``adapter`` (a name the server loaded,
                :attr:`ServerInfo.adapters`; an unknown one raises :class:`~kvframe.UnknownAdapterError`).
                A value out of its range raises ValueError, an unknown name TypeError.
        """
        spec = sized_open_spec(self._core.max_message_bytes, game_id, rules, **options)
        handle = next(self._session_ids)
        self._blocking(handle, OPEN, spec)
        with self._lock:
            self._open_sessions.add(handle)
        return Session(self, handle)

    def stats(self) -> Stats:
        """The server's :class:`Stats` (this client's own figures, or the whole server's; see ``server_wide``)."""
        return self._blocking(0, STATS, None)

    def close(self) -> None:
        """Closes the sessions on the server (bounded by half a second), stops the background thread;
        pending requests fail with :class:`~kvframe.ClosedError`. Idempotent."""
        with self._lock:
            if self._close_requested:
                already = True
            else:
                already = False
                self._close_requested = True
                if not self._stopped:
                    self._wake_locked()
        if already:
            return
        if threading.current_thread() is not self._thread:
            self._thread.join(5.0)
        with self._lock:
            self._wake_send.close(0)
        if self._own_context and not self._thread.is_alive():
            self._ctx.term()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<kvframe.Client {self._endpoint}>"

    # ---- API threads -> background thread -----------------------------------------

    def _wake_locked(self) -> None:
        if not self._wake_pending:
            self._wake_send.send(b"", zmq.NOBLOCK)
            self._wake_pending = True

    def _submit(self, handle: int, kind: int, spec: Any, sink: Optional[Callable[[Any], None]],
                check_open: bool = False, rid: int = 0) -> int:
        rid = rid or next_request_id()
        request = Request(rid, kind, handle, spec, sink, self._core.deadline_after(self._request_timeout))
        with self._lock:
            if self._close_requested or self._stopped:
                raise ClosedError("the client is closed")
            if check_open and handle not in self._open_sessions:
                raise error_for(ErrorCode.UNKNOWN_SESSION, f"session {handle} is not open on this client")
            self._commands.append(request)
            self._wake_locked()
        return rid

    def _blocking(self, handle: int, kind: int, spec: Any) -> Any:
        if threading.current_thread() is self._thread:
            raise RuntimeError("a blocking call (open/close a session, stats) from a kvframe callback would wait "
                               "for itself: hand it to another thread")
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._submit(handle, kind, spec, lambda event: _settle(future, event))
        return future.result()  # the background thread enforces the request timeout

    def _close_session(self, handle: int) -> None:
        with self._lock:
            if handle not in self._open_sessions or self._close_requested or self._stopped:
                return  # closing the client closes its sessions
            self._open_sessions.discard(handle)
        self._blocking(handle, CLOSE, None)

    def _wait_for_hello(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._info_cv:
            while self._core.info is None and not self._core.link_problem:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopped:
                    break
                self._info_cv.wait(left)
            self._check_hello(timeout)

    # ---- core hooks (background thread) -------------------------------------------

    def _on_link_change(self) -> None:
        with self._info_cv:
            self._link_generation += 1
            self._info_cv.notify_all()

    # ---- the background thread ----------------------------------------------------

    def _run(self) -> None:
        code, why = ErrorCode.CLOSED, "the client was closed before the reply came"
        try:
            self._loop()
        except Exception as e:  # noqa: BLE001 - ZeroMQ failed (out of file descriptors, ...)
            log.exception("kvframe: the client's background thread failed")
            code, why = ErrorCode.INTERNAL, f"the client's background thread failed: {e!r}"
        with self._lock:
            self._stopped = True
            commands, self._commands = self._commands, []
        for request in commands:
            self._core.requests[request.id] = request
        self._core.fail_all(code, why)
        self._close_sockets()
        with self._info_cv:
            self._info_cv.notify_all()

    def _close_sockets(self) -> None:
        super()._close_sockets()
        self._wake_recv.close(0)

    def _flush(self) -> None:
        for message in self._take_outbox():
            try:
                self._dealer.send(message, zmq.NOBLOCK, copy=False)
            except zmq.Again:  # no high-water mark: only while the context is terminating
                log.warning("kvframe: a request could not be queued for sending")

    def _take_commands(self) -> bool:
        with self._lock:
            while True:
                try:
                    self._wake_recv.recv(zmq.NOBLOCK)
                except zmq.Again:
                    break
            self._wake_pending = False
            commands, self._commands = self._commands, []
            close = self._close_requested
        for request in commands:
            self._core.submit(request)
        return close

    def _on_monitor(self) -> None:
        while True:
            try:
                frames = self._monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            self._on_monitor_event(frames)

    def _loop(self) -> None:
        core = self._core
        dealer, monitor, wake = self._dealer, self._monitor, self._wake_recv
        poller = zmq.Poller()
        poller.register(dealer, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        poller.register(wake, zmq.POLLIN)
        # An inproc pipe has no handshake: the link is connected at once (the Hello is retried
        # until a server is bound there).
        if self._endpoint.startswith("inproc://"):
            core.on_connected()
        last_scan = time.monotonic()
        while True:
            self._flush()
            wait = core.wait_s(EXPIRY_SCAN_S)
            ready = dict(poller.poll(None if wait is None else wait * 1000))
            if wake in ready and self._take_commands() and not core.closing:
                core.begin_close()
            if monitor in ready:
                self._on_monitor()
            if dealer in ready:
                while True:
                    try:
                        message = dealer.recv(zmq.NOBLOCK, copy=True)
                    except zmq.Again:
                        break
                    core.on_message(message)
            now = time.monotonic()
            if now - last_scan >= EXPIRY_SCAN_S:
                last_scan = now
                core.expire(now)
            core.keep_alive(now)
            self._flush()
            if core.close_done(now):
                return
