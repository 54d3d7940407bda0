"""kvframe for Python: a pure-Python client of kvframe-serve (pyzmq + flatbuffers).

A game sends its whole state (gamecore JSON) every frame, or a patch; the
server cuts it into blocks and re-encodes only what changed; the game asks
about it and gets text, streamed commentary or an NPC action valid against a
JSON Schema. See adapters/python/README.md.

::

    import kvframe
    with kvframe.Client.connect("tcp://127.0.0.1:5555") as client:
        with client.open_session("holdem") as session:
            session.send_frame({"state": {"pot": 60, "to_act": "p2"}})
            action = session.act("Act as p2.", {"type": "object", ...})

Modules: :mod:`kvframe.client` (threaded), :mod:`kvframe.aio` (asyncio),
:mod:`kvframe.errors`, :mod:`kvframe.messages` (enums and reply dataclasses),
:mod:`kvframe.patch` (frame deltas), :mod:`kvframe.wire` (the protocol on the
wire, over the code flatc generates from protocol/kvframe.fbs at build time),
:mod:`kvframe.process` (run a kvframe-serve).
"""

from .errors import (
    BadJsonError,
    BadRequestError,
    BusyError,
    ClosedError,
    ConnectError,
    ContextFullError,
    DeadlineError,
    DisconnectedError,
    EngineError,
    ErrorCode,
    InternalError,
    KvframeError,
    MalformedError,
    OutOfOrderError,
    QuotaExceededError,
    StaleBaseError,
    UnknownAdapterError,
    RequestTimeoutError,
    ShuttingDownError,
    TooLargeError,
    UnknownSessionError,
    UnsatisfiableError,
    UnsupportedError,
    WrongVersionError,
    error_class,
    error_for,
)
from .messages import (
    Answer,
    Chunk,
    FrameAck,
    FrameFormat,
    Mode,
    Report,
    ServerInfo,
    StageStats,
    Stats,
    StopReason,
    TaskKind,
)
from .client import Client, Query, Session
from .process import ServerProcess, ServerStartError, find_server
from . import aio, patch

__version__ = "0.1.0"

__all__ = [
    "Client", "Session", "Query", "aio", "patch",
    "Answer", "Chunk", "FrameAck", "FrameFormat", "Mode", "Report", "ServerInfo", "StageStats", "Stats",
    "StopReason", "TaskKind",
    "ErrorCode", "KvframeError", "error_class", "error_for",
    "MalformedError", "TooLargeError", "WrongVersionError", "UnknownSessionError", "BadRequestError",
    "BadJsonError", "OutOfOrderError", "DeadlineError", "BusyError", "ContextFullError", "EngineError",
    "UnsupportedError", "ShuttingDownError", "InternalError", "UnsatisfiableError", "QuotaExceededError", "StaleBaseError", "UnknownAdapterError",
    "RequestTimeoutError", "DisconnectedError", "ClosedError", "ConnectError",
    "ServerProcess", "ServerStartError", "find_server",
]
