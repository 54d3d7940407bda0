"""Scale-out failover: 4 games through HAProxy (TCP mode, Debian's haproxy) to
two kvframe-serve workers, one of them killed mid-match (docs/deploy.md).

Sessions live on a connection, so an L4 load balancer is enough: when a
worker dies, HAProxy closes its clients' connections, the client reconnects
(to the live worker), sees a new server instance in the HelloReply, re-opens
its session and re-sends its frames. A question in flight when the worker
died fails with a typed error and the game asks again. Every decision must
end answered, about the frame the game sent last — never lost, never
answered twice.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

import kvframe
from conftest import free_port, start_server

CLIENTS = 4
DECISIONS = 6
# What a lost worker can cause; anything else is a bug of the test or the server.
TRANSIENT = (kvframe.DisconnectedError, kvframe.RequestTimeoutError, kvframe.UnknownSessionError,
             kvframe.ShuttingDownError, kvframe.BusyError, kvframe.OutOfOrderError)
RULES = {"pin": ["units.*"]}
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["move"],
          "properties": {"move": {"enum": ["attack", "hold", "retreat"]}}}

HAPROXY_CONFIG = """
global
  maxconn 256
defaults
  mode tcp
  timeout connect 1s
  timeout client 1h
  timeout server 1h
  retries 3
  option redispatch
frontend kvframe
  bind 127.0.0.1:{front}
  default_backend workers
backend workers
  balance roundrobin
  server w1 127.0.0.1:{w1} check inter 200ms fall 1 rise 2
  server w2 127.0.0.1:{w2} check inter 200ms fall 1 rise 2
"""


def wait_for_port(port: int, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port}")


class Game(threading.Thread):
    """One match: a frame and a schema-constrained question per decision, asked again after an error."""

    def __init__(self, endpoint: str, index: int, halfway: threading.Semaphore) -> None:
        super().__init__(name=f"game-{index}")
        self.endpoint, self.index, self.halfway = endpoint, index, halfway
        self.answers: list[tuple[int, int, dict]] = []  # (decision, frame answered, action)
        self.errors: list[str] = []
        self.server_ids: set[int] = set()
        self.failure = ""

    def run(self) -> None:
        try:
            with kvframe.Client.connect(self.endpoint, client_name=f"failover-{self.index}",
                                        request_timeout=30.0) as client:
                session = client.open_session(f"match-{self.index}", rules=RULES, context_tokens=2048)
                for decision in range(1, DECISIONS + 1):
                    self.decide(session, decision)
                    if decision == DECISIONS // 3:
                        self.halfway.release()
        except Exception as e:  # noqa: BLE001  (the test reports it)
            self.failure = f"{type(e).__name__}: {e}"
            self.halfway.release()

    def decide(self, session: "kvframe.Session", decision: int) -> None:
        state = {"match": {"tick": decision, "game": self.index},
                 "units": {"hero": {"hp": 100 - decision, "x": decision}, "wolf": {"hp": 40, "x": 7}}}
        for attempt in range(1, 6):
            try:
                session.send_frame(state)
                sent = session.last_frame_number
                answer = session.ask("The wolf is near. What does the hero do?", schema=SCHEMA, max_tokens=24)
                self.server_ids.add(session.server_id)
                self.answers.append((decision, answer.frame_number, answer.action))
                assert answer.frame_number == sent, (decision, answer.frame_number, sent)
                return
            except TRANSIENT as e:
                self.errors.append(f"decision {decision} attempt {attempt}: {type(e).__name__}: {e}")
                time.sleep(0.2)
        raise AssertionError(f"decision {decision} unanswered after 5 attempts: {self.errors[-5:]}")


def test_games_through_haproxy_survive_a_worker_killed_mid_match(tmp_path):
    haproxy = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    if not haproxy:
        pytest.skip("haproxy not installed (scripts/setup.sh installs Debian's haproxy)")
    ports = {"front": free_port(), "w1": free_port(), "w2": free_port()}
    workers = [start_server("--threads", "1", bind=f"tcp://127.0.0.1:{ports[w]}") for w in ("w1", "w2")]
    config = tmp_path / "haproxy.cfg"
    config.write_text(HAPROXY_CONFIG.format(**ports))
    balancer = subprocess.Popen([haproxy, "-db", "-f", str(config)], stdout=subprocess.DEVNULL,
                                stderr=open(tmp_path / "haproxy.log", "w"))
    try:
        wait_for_port(ports["front"])
        halfway = threading.Semaphore(0)
        games = [Game(f"tcp://127.0.0.1:{ports['front']}", i, halfway) for i in range(CLIENTS)]
        for game in games:
            game.start()
        for _ in games:  # every game a third of the way through, then a worker dies
            assert halfway.acquire(timeout=120), "the games did not get a third of the way"
        workers[0].process.send_signal(signal.SIGKILL)
        for game in games:
            game.join(timeout=300)
            assert not game.is_alive(), f"{game.name} hung"
    finally:
        balancer.terminate()
        balancer.wait(timeout=10)
        for worker in workers:
            worker.stop()

    for game in games:
        assert not game.failure, f"{game.name}: {game.failure}\n{game.errors}"
        decisions = [d for d, _, _ in game.answers]
        assert decisions == list(range(1, DECISIONS + 1)), f"{game.name}: each decision answered once: {decisions}"
        assert all(action["move"] in ("attack", "hold", "retreat") for _, _, action in game.answers)
    moved = [g for g in games if len(g.server_ids) > 1]
    assert moved, "no game was on the killed worker: round-robin should have put half of them there"
    kinds = sorted({e.split(": ")[1] for g in games for e in g.errors})
    print(f"\n{len(moved)} of {CLIENTS} games moved to the live worker; "
          f"{sum(len(g.errors) for g in games)} questions failed with a typed error ({', '.join(kinds)}) "
          "and were asked again")
