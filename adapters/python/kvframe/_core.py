"""The client's protocol logic, without I/O: requests, replies, recovery.

A port of the native client's ``Link`` (adapters/native/link.cpp and
link_recovery.cpp) to plain Python that owns no socket and no thread. The
threaded :class:`kvframe.Client` and the asyncio :class:`kvframe.aio.AsyncClient`
drive one each: they feed it what happened (a request, a reply's bytes, a
connection event, the time) and send what it leaves in :attr:`Core.outbox`.
Every method runs on the driver's one I/O thread (or event loop).

Recovery, as in the native client:

1. Disconnected: requests in flight fail with DisconnectedError, except frames
   a session keeps for re-sending, whose fate waits for step 2.
2. The server's HelloReply after every handshake: a changed ``instance_id`` is
   a new server process. Each open session is re-opened with its original
   parameters (its server id changes, its handle does not), then its last whole
   frame and the patches after it are re-sent with their original frame
   numbers (a frame that was in flight under its own request id, so its caller
   still gets its one ack), and only then the requests that waited.
   The same instance id (a network drop) leaves the sessions as they are.
3. Backstop: an UnknownSession error for a session the client believes open
   starts the same re-open for that session.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

from . import wire
from .errors import ErrorCode, KvframeError, error_for
from .messages import FrameFormat, ServerInfo

log = logging.getLogger("kvframe")

HELLO, OPEN, CLOSE, FRAME, QUERY, STATS = range(6)
_KIND_NAMES = ("Hello", "OpenSession", "CloseSession", "Frame", "Query", "StatsRequest")

# Session phases.
OPENING, OPEN_, REOPENING, LOST = range(4)

HELLO_RETRY_S = 1.0        # a Hello with no answer (a server still starting) is sent again
# A client holding sessions pings after a third of the server's session_idle without sending
# anything: two pings may come late (a reconnect, a loaded machine) before the server's clock runs
# out. Never more often than the floor, whatever a server says. (link.cpp's kPingsPerIdle.)
PINGS_PER_IDLE = 3
MIN_PING_INTERVAL_S = 0.05
CLOSE_GRACE_S = 0.5        # closing waits this long for the server to close the sessions
MAX_REPLAY_BYTES = 64 << 20  # what a session keeps for re-sending after a restart
MAX_REPLAY_FRAMES = 4096
DEFAULT_MAX_MESSAGE_BYTES = 16 << 20

Sink = Callable[[Any], None]


class ResultEvent:
    """A Result's fields, before the query handle adds its chunks (an :class:`~kvframe.Answer`)."""

    __slots__ = ("text", "action_json", "action", "action_flexbuffer", "stop", "report", "frame_number", "request_id")

    def __init__(self, text, action_json, action, action_flexbuffer, stop, report, frame_number, request_id):
        self.text = text
        self.action_json = action_json
        self.action = action
        self.action_flexbuffer = action_flexbuffer
        self.stop = stop
        self.report = report
        self.frame_number = frame_number
        self.request_id = request_id


class Request:
    """One request as the core tracks it."""

    __slots__ = ("id", "kind", "session", "spec", "sink", "internal", "deadline", "sent", "sent_to", "first_sent_at")

    def __init__(self, id: int, kind: int, session: int, spec: Any, sink: Optional[Sink], deadline: float,
                 internal: bool = False) -> None:
        self.id = id
        self.kind = kind
        self.session = session    # the client's session handle; 0: not about a session
        self.spec = spec
        self.sink = sink          # gets the events: chunks, then exactly one final one
        self.internal = internal  # the core's own (Hello, re-opens, re-sent frames): replies are consumed
        self.deadline = deadline
        self.sent = False         # on the wire to the current connection
        self.sent_to = 0          # the server session id it was sent for
        self.first_sent_at = 0.0


class SessionState:
    __slots__ = ("params", "phase", "server_id", "reopen_request", "held", "replay", "replay_bytes",
                 "replay_complete", "in_doubt", "lost_reason")

    def __init__(self, params: wire.OpenSpec) -> None:
        self.params = params
        self.phase = OPENING
        self.server_id = 0
        self.reopen_request = 0
        self.held: Deque[int] = deque()      # requests waiting for the re-open, in order
        self.replay: List[Tuple[wire.FrameSpec, int]] = []  # last whole frame, then the patches after it
        self.replay_bytes = 0
        self.replay_complete = True          # False: over the bound, or patches with no whole frame
        self.in_doubt: List[int] = []        # frames in flight when the connection dropped
        self.lost_reason = ""


class Core:
    """The protocol state machine of one client connection (see the module docstring)."""

    def __init__(self, endpoint: str, client_name: str, request_timeout: Optional[float],
                 next_id: Callable[[], int], clock: Callable[[], float] = time.monotonic) -> None:
        self.endpoint = endpoint
        self.client_name = client_name
        self.request_timeout = request_timeout if request_timeout and request_timeout > 0 else None
        self.next_id = next_id
        self.clock = clock
        self.outbox: List[bytes] = []
        self.requests: Dict[int, Request] = {}
        self.sessions: Dict[int, SessionState] = {}
        self.waiting: Deque[int] = deque()  # requests that came while there was no link
        self.connected = False  # the handshake succeeded and no disconnect since
        self.link_up = False    # ... and the server answered our Hello
        self.have_instance = False
        self.instance_id = 0
        self.info: Optional[ServerInfo] = None
        self.link_problem = ""
        self.max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES
        self.closing = False
        self.close_deadline = 0.0
        self.ping_interval = 0.0  # from HelloReply.session_idle_ms; 0: no pings
        self.last_sent = 0.0
        # Driver hooks: the HelloReply (or a failed handshake) changed what connect() waits for;
        # a session's server id changed (opened or re-opened).
        self.on_link_change: Callable[[], None] = lambda: None
        self.on_session_opened: Callable[[int, int], None] = lambda handle, server_id: None

    # ---- what drivers call --------------------------------------------------------

    def deadline_after(self, seconds: Optional[float]) -> float:
        return self.clock() + seconds if seconds else float("inf")

    def submit(self, request: Request) -> None:
        self.requests[request.id] = request
        self.dispatch(request.id)

    def wait_s(self, scan_s: float) -> Optional[float]:
        """How long the driver may wait for input before calling expire() and keep_alive():
        scan_s while requests are pending (their timeouts), until the next Ping is due while
        sessions are held, else for ever (None)."""
        if self.requests or self.closing:
            return scan_s
        if not self.pinging():
            return None
        return max(0.0, self.last_sent + self.ping_interval - self.clock())

    def keep_alive(self, now: float) -> None:
        """A Ping when the client holds sessions and has sent nothing for ping_interval, so the
        server does not take it for gone (its Pong matches no request and is dropped)."""
        if self.pinging() and now - self.last_sent >= self.ping_interval:
            self.put(wire.encode_ping(self.next_id()))

    def on_connected(self) -> None:
        self.connected = True
        self.send_internal(0, HELLO, self.client_name)

    def on_handshake_failed(self) -> None:
        self.link_problem = (f"the handshake with {self.endpoint} failed "
                             "(wrong CURVE keys, or not a kvframe-serve endpoint?)")
        self.on_link_change()

    def on_disconnected(self) -> None:
        if not self.connected:
            return
        self.connected = False
        self.link_up = False
        # Replies to what was in flight would go to the old connection: they are lost.
        for rid in sorted(self.requests):
            request = self.requests.get(rid)
            if request is None or not request.sent:
                continue
            request.sent = False
            session = self.sessions.get(request.session)
            if request.kind == HELLO:
                del self.requests[rid]
                continue
            if session is not None and request.internal and request.kind == OPEN:
                session.reopen_request = 0  # re-opened again once connected
                del self.requests[rid]
                continue
            if session is not None and request.kind == FRAME:
                if any(req_id == rid for _, req_id in session.replay):
                    session.in_doubt.append(rid)  # decided once the server answers Hello
                    continue
            if request.internal:
                del self.requests[rid]
                continue
            if request.kind == OPEN and session is not None:
                del self.sessions[request.session]
            self.fail(rid, ErrorCode.DISCONNECTED,
                      f"the connection to {self.endpoint} dropped while this request was in flight")

    def on_message(self, buf: bytes) -> None:
        try:
            reply = wire.decode(buf)
        except Exception as e:  # noqa: BLE001 - untrusted bytes: any reader error
            rid = wire.peek_request_id(buf)
            if rid in self.requests:
                self.fail(rid, ErrorCode.MALFORMED, f"unreadable reply: {e}")
            return
        request = self.requests.get(reply.request_id)
        if request is None:
            # Timed out or failed already. A session opened too late would leak on the server: close it.
            if reply.body_type == wire._B.SessionOpened:
                self.close_orphan(reply.body.SessionId())
            return
        # Not on the wire now: a frame waiting to be re-sent, whose copy sent just before the
        # connection dropped reached the restarted server and was refused there. The re-sent
        # frame gets the real answer.
        if not request.sent:
            return
        try:
            if request.kind in (FRAME, QUERY):
                self.on_event_reply(request, reply)
            else:
                self.on_session_reply(request, reply)
        except Exception as e:  # noqa: BLE001 - a field that cannot be read
            if reply.request_id in self.requests:
                self.fail(reply.request_id, ErrorCode.MALFORMED, f"unreadable reply: {e!r}")

    def expire(self, now: float) -> None:
        for rid in sorted(self.requests):
            request = self.requests.get(rid)
            if request is None or request.deadline > now:
                continue
            if request.kind == HELLO:
                del self.requests[rid]
                if self.connected and not self.link_up:
                    self.send_internal(0, HELLO, self.client_name)
                continue
            session = self.sessions.get(request.session)
            why = (f"no reply within the request timeout ({self.request_timeout:g} s)"
                   + ("" if self.link_up else ": the server is unreachable"))
            if request.kind == OPEN and session is not None:
                if request.internal:
                    session.reopen_request = 0
                    del self.requests[rid]
                    self.lose(session, ErrorCode.TIMEOUT, "re-opening the session after a server restart timed out")
                    continue
                if session.phase == OPENING:
                    del self.sessions[request.session]
            self.fail(rid, ErrorCode.TIMEOUT, why)

    def begin_close(self) -> None:
        self.closing = True
        self.close_deadline = self.clock() + CLOSE_GRACE_S
        if not self.link_up:
            return
        for handle, session in list(self.sessions.items()):
            if session.phase == OPEN_:
                self.send_internal(handle, CLOSE, None)

    def close_done(self, now: float) -> bool:
        if not self.closing:
            return False
        if now >= self.close_deadline:
            return True
        return not any(r.internal and r.kind == CLOSE for r in self.requests.values())

    def fail_all(self, code: int, message: str) -> None:
        for rid in sorted(self.requests):
            self.fail(rid, code, message)
        self.waiting.clear()
        self.sessions.clear()

    # ---- requests -----------------------------------------------------------------

    def dispatch(self, rid: int) -> None:
        request = self.requests.get(rid)
        if request is None or self.closing:  # timed out while it waited / fails with Closed at the end
            return
        session = self.sessions.get(request.session)
        if request.kind == CLOSE and (not self.link_up or session is None or session.phase == LOST):
            # No server session to close, or no server to tell: a restarted one has forgotten it
            # anyway, and a game shutting down should not wait out the request timeout.
            handle = request.session
            self.finish(rid, None)
            self.forget_session(handle)
            return
        if not self.link_up:
            self.waiting.append(rid)
            return
        if request.kind == OPEN:
            self.sessions[request.session] = SessionState(request.spec)
            self.send(request)
            return
        if request.session == 0:
            self.send(request)
            return
        if session is None:
            self.fail(rid, ErrorCode.UNKNOWN_SESSION, f"session {request.session} is closed")
            return
        if session.phase == REOPENING:
            session.held.append(rid)
            return
        if session.phase == LOST:
            self.fail(rid, ErrorCode.UNKNOWN_SESSION, session.lost_reason)
            return
        if request.kind == FRAME:
            self.remember_frame(session, request.spec, rid)
        self.send(request)

    def encode(self, request: Request, server_session: int) -> bytes:
        kind, spec = request.kind, request.spec
        if kind == FRAME:
            return wire.encode_frame(request.id, server_session, spec)
        if kind == QUERY:
            return wire.encode_query(request.id, server_session, spec)
        if kind == HELLO:
            return wire.encode_hello(request.id, spec)
        if kind == OPEN:
            return wire.encode_open(request.id, spec)
        if kind == CLOSE:
            return wire.encode_close(request.id, server_session)
        return wire.encode_stats(request.id)

    def pinging(self) -> bool:
        return self.ping_interval > 0 and self.link_up and not self.closing and bool(self.sessions)

    def put(self, message: bytes) -> None:
        """Onto the wire (the driver sends the outbox), noting when."""
        self.outbox.append(message)
        self.last_sent = self.clock()

    def send(self, request: Request) -> None:
        session = self.sessions.get(request.session)
        server_session = 0 if (session is None or request.kind == OPEN) else session.server_id
        self.put(self.encode(request, server_session))
        request.sent = True
        request.sent_to = server_session
        if not request.first_sent_at:
            request.first_sent_at = self.clock()

    def send_internal(self, session: int, kind: int, spec: Any) -> int:
        timeout = HELLO_RETRY_S if kind == HELLO else self.request_timeout
        request = Request(self.next_id(), kind, session, spec, None, self.deadline_after(timeout), internal=True)
        self.requests[request.id] = request
        self.send(request)
        return request.id

    def close_orphan(self, server_session: int) -> None:
        self.put(wire.encode_close(self.next_id(), server_session))  # its reply is dropped

    def deliver(self, request: Request, event: Any) -> None:
        if request.internal or request.sink is None:
            if isinstance(event, KvframeError) and request.kind == FRAME and not request.internal:
                log.warning("frame %d of session %d: %s", request.spec.frame_number, request.session, event)
            return
        try:
            request.sink(event)
        except Exception:  # noqa: BLE001 - a user's callback must not stop the client
            log.exception("kvframe: a callback raised")

    def finish(self, rid: int, event: Any) -> None:
        request = self.requests.pop(rid, None)
        if request is not None:
            self.deliver(request, event)

    def fail(self, rid: int, code: int, message: str) -> None:
        request = self.requests.get(rid)
        if request is None:
            return
        session = self.sessions.get(request.session)
        server_id = session.server_id if session is not None else 0
        self.finish(rid, error_for(code, message, session_id=server_id, request_id=rid))
        if request.kind == CLOSE:
            self.forget_session(request.session)  # the handle is invalid after close, whatever came back

    # ---- replies ------------------------------------------------------------------

    def on_session_reply(self, request: Request, reply: wire.Reply) -> None:
        """Replies to Hello, OpenSession, CloseSession and StatsRequest."""
        rid, handle = request.id, request.session
        bt = reply.body_type
        error = None
        if bt == wire._B.Error:
            code, message, server_session = wire.error_fields(reply.body)
            error = error_for(code, message, session_id=server_session, request_id=rid)
        session = self.sessions.get(handle)

        if request.kind == HELLO:
            del self.requests[rid]
            if bt == wire._B.HelloReply:
                self.on_hello(wire.hello_info(reply.body))
            else:
                self.link_problem = f"the server refused Hello: {error.message if error else 'unexpected reply'}"
                self.on_link_change()
            return
        if request.kind == OPEN:
            opened = bt == wire._B.SessionOpened
            if session is None:  # closed meanwhile
                if opened:
                    self.close_orphan(reply.body.SessionId())
                self.fail(rid, ErrorCode.CLOSED, "the session was closed while it was being opened")
                return
            reopen = request.internal
            if reopen:
                session.reopen_request = 0
            if not opened:
                error = error or error_for(ErrorCode.INTERNAL, "unexpected reply to OpenSession", request_id=rid)
                if reopen:
                    del self.requests[rid]
                    self.lose(session, error.code,
                              f"re-opening the session after a server restart failed: {error.message}")
                else:
                    del self.sessions[handle]
                    self.finish(rid, error)
                return
            server_id = reply.body.SessionId()
            if reopen:
                del self.requests[rid]
                self.on_reopened(handle, session, server_id)
                return
            session.phase = OPEN_
            session.server_id = server_id
            self.on_session_opened(handle, server_id)
            self.finish(rid, server_id)
            return
        if request.kind == CLOSE:
            # Unknown to the server is closed too (it restarted and the re-open had not happened).
            closed = bt == wire._B.SessionClosed or (error is not None and error.code == ErrorCode.UNKNOWN_SESSION)
            self.finish(rid, None if closed else (error or error_for(
                ErrorCode.INTERNAL, "unexpected reply to CloseSession", request_id=rid)))
            self.forget_session(handle)
            return
        if bt == wire._B.Stats:
            self.finish(rid, wire.stats(reply.body))
        else:
            self.finish(rid, error or error_for(ErrorCode.INTERNAL, "unexpected reply to StatsRequest",
                                                request_id=rid))

    def on_event_reply(self, request: Request, reply: wire.Reply) -> None:
        """Replies to Frame and Query: events for the caller."""
        rid, bt = request.id, reply.body_type
        if bt == wire._B.Chunk:
            self.deliver(request, wire.chunk(reply.body, rid))
            return
        round_trip_ms = (self.clock() - request.first_sent_at) * 1000.0
        if bt == wire._B.FrameAck and request.kind == FRAME:
            event: Any = wire.frame_ack(reply.body, request.session, rid, request.spec)
        elif bt == wire._B.Result and request.kind == QUERY:
            text, action_json, action, flex, stop, report, frame_number = wire.result_fields(reply.body)
            event = ResultEvent(text, action_json, action, flex, stop, wire.report(report, round_trip_ms),
                                frame_number, rid)
        elif bt == wire._B.Error:
            code, message, server_session = wire.error_fields(reply.body)
            event = error_for(code, message, session_id=server_session, request_id=rid)
        else:
            event = error_for(ErrorCode.MALFORMED, f"unexpected reply (body type {bt}) to a "
                              f"{_KIND_NAMES[request.kind]}", request_id=rid)
        handle, sent_to = request.session, request.sent_to
        self.finish(rid, event)
        session = self.sessions.get(handle)
        if isinstance(event, KvframeError) and request.kind == FRAME and session is not None:
            self.forget_refused_frame(session, rid)
        # The backstop for a restart the connection events did not show: the server no longer
        # knows a session this client has open.
        if (isinstance(event, KvframeError) and event.code == ErrorCode.UNKNOWN_SESSION and session is not None
                and session.phase == OPEN_ and session.server_id == sent_to):
            self.start_reopen(handle, session)

    # ---- recovery -----------------------------------------------------------------

    def on_hello(self, info: ServerInfo) -> None:
        self.info = info
        self.link_problem = ""
        if info.max_message_bytes > 0:
            self.max_message_bytes = info.max_message_bytes
        self.ping_interval = (max(info.session_idle / PINGS_PER_IDLE, MIN_PING_INTERVAL_S)
                              if info.session_idle > 0 else 0.0)
        restarted = self.have_instance and info.instance_id != self.instance_id
        self.have_instance = True
        self.instance_id = info.instance_id
        self.link_up = True
        for handle, session in list(self.sessions.items()):
            if session.phase == OPEN_ and restarted:
                session.phase = REOPENING
            if session.phase == REOPENING:
                if session.reopen_request == 0:
                    self.start_reopen(handle, session)
                continue
            # The same server: whether a frame in flight arrived cannot be known.
            for rid in session.in_doubt:
                self.fail(rid, ErrorCode.DISCONNECTED, "the connection dropped while this frame was in flight")
            session.in_doubt.clear()
        waiting, self.waiting = self.waiting, deque()
        for rid in waiting:
            self.dispatch(rid)
        self.on_link_change()

    def start_reopen(self, handle: int, session: SessionState) -> None:
        session.phase = REOPENING
        if not self.link_up:
            return  # re-opened once the server answers Hello
        session.reopen_request = self.send_internal(handle, OPEN, session.params)

    def on_reopened(self, handle: int, session: SessionState, server_id: int) -> None:
        session.phase = OPEN_
        session.server_id = server_id
        log.info("kvframe: session %d re-opened as %d after a server restart", handle, server_id)
        self.on_session_opened(handle, server_id)
        # The new server session starts empty, so the frames keep their numbers.
        for i, (frame, original_id) in enumerate(session.replay):
            original = self.requests.get(original_id)
            if original is not None and not original.sent:
                self.send(original)  # still awaiting its ack: the ack goes to its caller
            else:  # a refusal of the copy must find it
                session.replay[i] = (frame, self.send_internal(handle, FRAME, frame))
        for rid in session.in_doubt:  # the ones not re-sent above (the replay was cut short)
            left = self.requests.get(rid)
            if left is not None and not left.sent:
                self.fail(rid, ErrorCode.DISCONNECTED, "the server restarted while this frame was in flight")
        session.in_doubt.clear()
        held, session.held = session.held, deque()
        for rid in held:
            self.dispatch(rid)

    def lose(self, session: SessionState, code: int, reason: str) -> None:
        session.phase = LOST
        session.lost_reason = reason + " (open a new session)"
        session.replay.clear()
        held = list(session.held) + session.in_doubt
        session.held.clear()
        session.in_doubt = []
        for rid in held:
            self.fail(rid, code, session.lost_reason)

    def remember_frame(self, session: SessionState, frame: wire.FrameSpec, rid: int) -> None:
        if frame.format == FrameFormat.WHOLE:
            session.replay.clear()
            session.replay_bytes = 0
            session.replay_complete = True
        elif not session.replay:
            session.replay_complete = False  # a patch to a state this client never saw
        if not session.replay_complete:
            return
        session.replay.append((frame, rid))
        session.replay_bytes += len(frame.json)
        if session.replay_bytes > MAX_REPLAY_BYTES or len(session.replay) > MAX_REPLAY_FRAMES:
            session.replay.clear()
            session.replay_bytes = 0
            session.replay_complete = False

    def forget_refused_frame(self, session: SessionState, rid: int) -> None:
        """The server refused a frame: it holds the state before it and refuses the patches sent
        after it (their base is a frame it never applied). Re-sending any of them after a restart
        would give the new server a state the game was told it does not have."""
        at = next((i for i, (_, req_id) in enumerate(session.replay) if req_id == rid), None)
        if at is None:
            return
        session.replay_bytes -= sum(len(frame.json) for frame, _ in session.replay[at:])
        del session.replay[at:]
        if not session.replay:
            session.replay_complete = False  # without its whole frame the state is not kept any more

    def forget_session(self, handle: int) -> None:
        """The session is closed: requests still waiting for it end with ClosedError."""
        self.sessions.pop(handle, None)
        for rid in sorted(self.requests):
            request = self.requests.get(rid)
            if request is not None and request.session == handle and request.kind != CLOSE:
                self.fail(rid, ErrorCode.CLOSED, "the session was closed before the reply came")
