"""What the client core re-sends after a server restart, driven without sockets
(kvframe._core is sans-IO: bytes in through on_message, bytes out in outbox).
The native client's twin is tests/client/client_recovery_test.cpp; a real
server restart is test_client.py's test_reconnects_and_reopens_sessions_after_a_server_restart.
"""

from __future__ import annotations

import itertools

import flatbuffers
import pytest

from kvframe import _core, wire
from kvframe.errors import ErrorCode, KvframeError
from kvframe.messages import FrameFormat
from kvframe.protocol.fb import Error, Frame, FrameAck, HelloReply, Message, SessionOpened

HANDLE = 1


def reply(request_id: int, table, **fields) -> bytes:
    """A server reply: `table` (a generated module) with `fields` (AddX names without Add)."""
    b = flatbuffers.Builder(128)
    strings = {name: b.CreateString(value) for name, value in fields.items() if isinstance(value, str)}
    table.Start(b)
    for name, value in fields.items():
        getattr(table, "Add" + name)(b, strings.get(name, value))
    return wire._finish(b, request_id, getattr(wire._B, table.__name__.rsplit(".", 1)[-1]), table.End(b))


def hello_reply(request_id: int, instance_id: int) -> bytes:
    return reply(request_id, HelloReply, InstanceId=instance_id)


def session_opened(request_id: int, server_session: int) -> bytes:
    return reply(request_id, SessionOpened, SessionId=server_session)


def frame_ack(request_id: int) -> bytes:
    return reply(request_id, FrameAck)


def error(request_id: int, code: int) -> bytes:
    return reply(request_id, Error, Code=code, Message="refused")


class Harness:
    """A core with one open session on server instance 1; `sent()` takes what it put on the wire."""

    def __init__(self) -> None:
        self.core = _core.Core("tcp://test", "test", None, itertools.count(1).__next__, clock=lambda: 0.0)
        self.events: list = []
        self.core.on_connected()
        self.core.on_message(hello_reply(self.sent()[0].RequestId(), instance_id=1))
        self.core.submit(_core.Request(self.core.next_id(), _core.OPEN, HANDLE, wire.OpenSpec(game_id="g"),
                                       self.events.append, float("inf")))
        self.core.on_message(session_opened(self.sent()[0].RequestId(), 42))

    def sent(self) -> list:
        out, self.core.outbox = self.core.outbox, []
        return [Message.Message.GetRootAs(buf, 0) for buf in out]

    def send_frame(self, number: int, fmt: int, json: bytes) -> int:
        request = _core.Request(self.core.next_id(), _core.FRAME, HANDLE,
                                wire.FrameSpec(number, fmt, json, None if fmt == FrameFormat.WHOLE else number - 1),
                                self.events.append, float("inf"))
        self.core.submit(request)
        return request.id

    def answer(self, message: bytes) -> None:
        self.core.on_message(message)

    def restart(self, instance_id: int, server_session: int) -> list:
        """The server restarts: the frames the core re-sends (Messages, unanswered)."""
        self.sent()  # what went to the old server
        self.core.on_disconnected()
        self.core.on_connected()
        self.answer(hello_reply(self.sent()[0].RequestId(), instance_id))
        self.answer(session_opened(self.sent()[0].RequestId(), server_session))
        resent = self.sent()
        assert all(message.BodyType() == wire._B.Frame for message in resent)
        return resent


def frame_numbers(messages: list) -> list:
    numbers = []
    for message in messages:
        body = Frame.Frame()
        body.Init(message.Body().Bytes, message.Body().Pos)
        numbers.append(body.FrameNumber())
    return numbers


@pytest.fixture
def h() -> Harness:
    return Harness()


def send_acked_frames(h: Harness) -> None:
    for number, fmt, json in ((1, FrameFormat.WHOLE, b'{"pot":10}'), (2, FrameFormat.MERGE_PATCH, b'{"pot":20}'),
                              (3, FrameFormat.MERGE_PATCH, b'{"turn":"p2"}')):
        h.answer(frame_ack(h.send_frame(number, fmt, json)))
    h.sent()


def test_a_restart_resends_the_whole_frame_and_the_patches_after_it(h):
    send_acked_frames(h)
    assert frame_numbers(h.restart(instance_id=2, server_session=7)) == [1, 2, 3]


def test_refused_frames_and_the_patches_after_them_are_not_resent(h):
    send_acked_frames(h)
    bad, after = h.send_frame(4, FrameFormat.MERGE_PATCH, b'{"pot":'), h.send_frame(5, FrameFormat.MERGE_PATCH, b"{}")
    h.answer(error(bad, ErrorCode.BAD_JSON))
    h.answer(error(after, ErrorCode.STALE_BASE))
    assert [e.code for e in h.events if isinstance(e, KvframeError)] == [ErrorCode.BAD_JSON, ErrorCode.STALE_BASE]
    assert frame_numbers(h.restart(instance_id=2, server_session=7)) == [1, 2, 3]  # what the old server held


def test_a_refused_whole_frame_leaves_nothing_to_resend(h):
    send_acked_frames(h)
    h.answer(error(h.send_frame(4, FrameFormat.WHOLE, b'{"pot":['), ErrorCode.BAD_JSON))
    assert frame_numbers(h.restart(instance_id=2, server_session=7)) == []


def test_a_resent_frame_the_new_server_refuses_is_not_resent_again(h):
    send_acked_frames(h)
    copies = [m.RequestId() for m in h.restart(instance_id=2, server_session=7)]
    assert len(copies) == 3
    h.answer(frame_ack(copies[0]))  # the copies' answers reach only the core
    h.answer(frame_ack(copies[1]))
    h.answer(error(copies[2], ErrorCode.BUSY))
    assert frame_numbers(h.restart(instance_id=3, server_session=8)) == [1, 2]
