"""Errors: one exception class per error code of the protocol.

Every failure the server reports (``Error{code, message, session_id}`` in
protocol/kvframe.fbs) is raised as the :class:`KvframeError` subclass of its
code, so callers catch what they can handle::

    try:
        answer = session.ask("What now?")
    except kvframe.BusyError:            # back-pressure: retry later
        ...
    except kvframe.KvframeError as e:    # anything else from kvframe
        log(e.code.name, e.message)

The client raises a few codes of its own, never sent by the server:
:class:`RequestTimeoutError` (no reply within the request timeout; also a
:class:`TimeoutError`), :class:`DisconnectedError` (the connection dropped
while the request was in flight; also a :class:`ConnectionError`),
:class:`ClosedError` (the client or session was closed) and
:class:`ConnectError` (the endpoint or the handshake was refused; also a
:class:`ConnectionError`). Bad arguments raise Python's own ``ValueError`` /
``TypeError``.
"""

from __future__ import annotations

import enum
from typing import Dict, Optional, Type


class ErrorCode(enum.IntEnum):
    """The protocol's ``ErrorCode`` (protocol/kvframe.fbs), plus the client's own codes.

    Values 0..101 are the schema's (a test checks them against the generated
    code); 200 and up match ``kvf_status`` of the native client's C API.
    """

    NONE = 0
    MALFORMED = 1
    TOO_LARGE = 2
    WRONG_VERSION = 3
    UNKNOWN_SESSION = 4
    BAD_REQUEST = 5
    BAD_JSON = 6
    OUT_OF_ORDER = 7
    DEADLINE = 8
    BUSY = 9
    CONTEXT_FULL = 10
    ENGINE = 11
    UNSUPPORTED = 12
    SHUTTING_DOWN = 13
    INTERNAL = 14
    UNSATISFIABLE = 15
    QUOTA_EXCEEDED = 16
    STALE_BASE = 17
    UNKNOWN_ADAPTER = 18
    TIMEOUT = 100
    DISCONNECTED = 101
    CLOSED = 201
    CONNECT = 203


class KvframeError(Exception):
    """A kvframe request failed.

    Attributes:
        code: the :class:`ErrorCode` (the server's, or the client's own).
        message: what went wrong and, usually, what to do next (the server's words).
        session_id: the server session the error is about; 0 when none.
        request_id: the request that failed; 0 when it failed before it was sent.
    """

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, *, code: Optional[int] = None, session_id: int = 0, request_id: int = 0) -> None:
        if code is not None:
            try:
                self.code = ErrorCode(code)
            except ValueError:  # a code from a newer server
                self.code = code  # type: ignore[assignment]
        self.message = message
        self.session_id = session_id
        self.request_id = request_id
        name = self.code.name if isinstance(self.code, ErrorCode) else str(self.code)
        super().__init__(f"{name}: {message}")

    def __reduce__(self):  # picklable (multiprocessing, concurrent.futures)
        return (_rebuild, (int(self.code), self.message, self.session_id, self.request_id))


def _rebuild(code: int, message: str, session_id: int, request_id: int) -> KvframeError:
    return error_for(code, message, session_id=session_id, request_id=request_id)


class MalformedError(KvframeError):
    """Not a Message (the server's flatbuffers verifier refused it), or a reply this client cannot read."""

    code = ErrorCode.MALFORMED


class TooLargeError(KvframeError):
    """Over the server's ``--max-message-mb`` (raised before sending when the client knows the limit)."""

    code = ErrorCode.TOO_LARGE


class WrongVersionError(KvframeError):
    """The server speaks another protocol version: use a client of the same release."""

    code = ErrorCode.WRONG_VERSION


class UnknownSessionError(KvframeError):
    """No open session has this id for this client (closed, never opened, another client's, or lost)."""

    code = ErrorCode.UNKNOWN_SESSION


class BadRequestError(KvframeError):
    """A field is missing or out of range, or the output schema is not usable; the message names it."""

    code = ErrorCode.BAD_REQUEST


class BadJsonError(KvframeError):
    """The frame's JSON or patch was rejected (json_blocker's words); the session keeps its previous frame."""

    code = ErrorCode.BAD_JSON


class OutOfOrderError(KvframeError):
    """A frame number not above the last, a patch before any whole frame, or a query about an unsent frame."""

    code = ErrorCode.OUT_OF_ORDER


class DeadlineError(KvframeError):
    """The query could not be answered by its deadline (answered at once, not late)."""

    code = ErrorCode.DEADLINE


class BusyError(KvframeError):
    """The server's queues are full (back-pressure): retry later, send fewer frames."""

    code = ErrorCode.BUSY


class ContextFullError(KvframeError):
    """Prompt plus answer exceed the session's context tokens."""

    code = ErrorCode.CONTEXT_FULL


class EngineError(KvframeError):
    """The model failed; the message carries the engine's text."""

    code = ErrorCode.ENGINE


class UnsupportedError(KvframeError):
    """A request the server does not serve (e.g. an attention mode it was started without)."""

    code = ErrorCode.UNSUPPORTED


class ShuttingDownError(KvframeError):
    """The server is stopping; the request was not run."""

    code = ErrorCode.SHUTTING_DOWN


class InternalError(KvframeError):
    """A bug in the server (or in this client): report it with the server's log."""

    code = ErrorCode.INTERNAL


class UnsatisfiableError(KvframeError):
    """The output schema's shortest valid value takes more than ``max_tokens`` tokens."""

    code = ErrorCode.UNSATISFIABLE


class QuotaExceededError(KvframeError):
    """Over this client's quota (sessions, context tokens, queued requests or message rate; the message says which)."""

    code = ErrorCode.QUOTA_EXCEEDED


class StaleBaseError(KvframeError):
    """A patch made against a frame the server does not hold (that frame was refused or superseded):
    nothing changed. :meth:`kvframe.Session.send_state` sends the next state whole by itself."""

    code = ErrorCode.STALE_BASE


class UnknownAdapterError(KvframeError):
    """The session names a LoRA adapter the server has not loaded (the message lists those it has): no
    session opened. ``client.server_info.adapters`` lists them too."""

    code = ErrorCode.UNKNOWN_ADAPTER


class RequestTimeoutError(KvframeError, TimeoutError):
    """No reply within the client's request timeout (or connect timeout). Raised by the client."""

    code = ErrorCode.TIMEOUT


class DisconnectedError(KvframeError, ConnectionError):
    """The connection dropped while the request was in flight. Raised by the client."""

    code = ErrorCode.DISCONNECTED


class ClosedError(KvframeError):
    """The client (or the session) was closed before the reply came. Raised by the client."""

    code = ErrorCode.CLOSED


class ConnectError(KvframeError, ConnectionError):
    """The endpoint or keys were refused (by ZeroMQ, the CURVE handshake, or the server's Hello)."""

    code = ErrorCode.CONNECT


_BY_CODE: Dict[int, Type[KvframeError]] = {
    cls.code: cls
    for cls in (
        MalformedError, TooLargeError, WrongVersionError, UnknownSessionError, BadRequestError, BadJsonError,
        OutOfOrderError, DeadlineError, BusyError, ContextFullError, EngineError, UnsupportedError,
        ShuttingDownError, InternalError, UnsatisfiableError, QuotaExceededError, StaleBaseError,
        UnknownAdapterError, RequestTimeoutError,
        DisconnectedError, ClosedError, ConnectError,
    )
}


def error_class(code: int) -> Type[KvframeError]:
    """The exception class of an error code (:class:`KvframeError` itself for a code this client does not know)."""
    return _BY_CODE.get(int(code), KvframeError)


def error_for(code: int, message: str, *, session_id: int = 0, request_id: int = 0) -> KvframeError:
    """The exception for an error code, e.g. ``error_for(16, "...")`` is a :class:`QuotaExceededError`."""
    return error_class(code)(message, code=code, session_id=session_id, request_id=request_id)
