"""The client core's keepalive (issue 59), driven without sockets: while it holds sessions and has
sent nothing for a third of the server's session_idle, it leaves a Ping in the outbox, so the server
does not take a quiet game for a vanished one; with no session, or against a server whose sessions
never expire, it sends nothing. The native client's twin is tests/client/client_keepalive_test.cpp.
"""

from __future__ import annotations

import itertools

from kvframe import _core, wire
from kvframe.protocol.fb import HelloReply, Message, SessionOpened

from test_core_recovery import reply


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def connected(session_idle_ms: int, clock: Clock) -> _core.Core:
    core = _core.Core("tcp://test", "test", None, itertools.count(1).__next__, clock=clock)
    core.on_connected()
    hello = sent(core)[0].RequestId()
    core.on_message(reply(hello, HelloReply, InstanceId=1, SessionIdleMs=session_idle_ms))
    return core


def open_session(core: _core.Core) -> None:
    core.submit(_core.Request(core.next_id(), _core.OPEN, 1, wire.OpenSpec(game_id="g"), None, float("inf")))
    core.on_message(reply(sent(core)[0].RequestId(), SessionOpened, SessionId=42))


def sent(core: _core.Core) -> list:
    out, core.outbox = core.outbox, []
    return [Message.Message.GetRootAs(buf, 0) for buf in out]


def test_a_quiet_core_holding_a_session_pings_a_third_of_the_idle_limit_after_its_last_send():
    clock = Clock()
    core = connected(3000, clock)
    assert core.info.session_idle == 3.0
    assert core.wait_s(0.01) is None, "no session: nothing to keep, nothing to wake for"
    open_session(core)
    assert core.wait_s(0.01) == 1.0
    clock.now += 0.9
    core.keep_alive(clock.now)
    assert sent(core) == []
    clock.now += 0.1
    core.keep_alive(clock.now)
    assert [m.BodyType() for m in sent(core)] == [wire._B.Ping]
    assert core.wait_s(0.01) == 1.0, "the next one counts from this Ping"


def test_requests_in_flight_are_scanned_for_and_pings_wait_for_them():
    clock = Clock()
    core = connected(3000, clock)
    open_session(core)
    core.submit(_core.Request(core.next_id(), _core.STATS, 0, None, None, float("inf")))
    assert core.wait_s(0.01) == 0.01


def test_no_pings_without_sessions_or_against_a_server_whose_sessions_never_expire():
    clock = Clock()
    never = connected(0, clock)
    open_session(never)
    clock.now += 3600
    never.keep_alive(clock.now)
    assert sent(never) == [] and never.wait_s(0.01) is None
    closing = connected(3000, clock)
    open_session(closing)
    closing.begin_close()
    sent(closing)
    clock.now += 3600
    closing.keep_alive(clock.now)
    assert [m.BodyType() for m in sent(closing)] == []
