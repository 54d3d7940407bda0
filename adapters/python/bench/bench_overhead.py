#!/usr/bin/env python3
"""What a frame costs the game's process: the pure-Python client vs a binding over the C ABI.

The same frames (a Hold'em gamecore of a few KB, and RFC 7386 merge patches
between consecutive ones) go to the same kvframe-serve four ways, interleaved
round by round:

  raw pyzmq     a bare DEALER sending messages encoded beforehand and waiting
                for each reply: the floor (transport + the server's own work)
  kvframe       the pure-Python client (kvframe.Client): send_frame().result()
  kvframe.aio   the asyncio client: await session.send_frame(...)
  ctypes C ABI  libkvframe_client.so through ctypes: kvf_send_frame with a
                callback that sets a threading.Event the caller waits on

Frames only (no queries), sessions in full mode and the server started with
--no-warm: the server's work per frame (json_blocker's parse, partition and
diff, plus applying a patch; no model) is the same for all four. Printed:

  - round trip per frame, p50 / p90, and the p50 over the floor;
  - the client process's CPU per frame (time.process_time over the run, all
    its threads: the client's I/O thread and ZeroMQ's included; the server is
    another process), i.e. the client's overhead without the server's compute;
  - the pure-Python steps alone, without a server: json.dumps of the state,
    computing the merge patch, encoding the Frame message, decoding a FrameAck.

    python3 adapters/python/bench/bench_overhead.py                 # starts build/server/kvframe-serve
    python3 adapters/python/bench/bench_overhead.py --server tcp://127.0.0.1:5555 --frames 400 --rounds 5

Needs kvframe installed (pip install ./adapters/python) and the native client
library (build/adapters/native/libkvframe_client.so, or --lib / $KVFRAME_CLIENT_LIB).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import timeit
from pathlib import Path
from typing import Dict, List, Tuple

import zmq

import kvframe
import kvframe.options
from kvframe import patch as kpatch
from kvframe import wire
from kvframe.aio import AsyncClient

REPO = Path(__file__).resolve().parents[3]
RULES = {"pin": ["state.chips.*", "state.players.*", "history.*", "opponent_stats.*"]}
# Sessions in full mode: a frame is then only json_blocker's work on the server (parse,
# partition, diff), never a model's, and the server is started with --no-warm where it has it.
MODE = kvframe.Mode.FULL


# ---- frames ------------------------------------------------------------------------------


def holdem_states(count: int, seed: int = 5) -> List[dict]:
    """Consecutive decisions of a 6-seat table, laid out like examples/holdem/gamecore.h
    (keyed objects): state scalars, board, chips, players, this hand's actions, legal
    actions, 12 finished hands and each opponent's statistics."""
    rng = random.Random(seed)
    seats = [f"p{i}" for i in range(1, 7)]
    names = ["Ada", "Bram", "Cleo", "Dax", "Edda", "Finn"]
    history = {}
    for h in range(30, 42):
        history[f"hand_{h:04d}"] = {
            "button": rng.choice(seats), "board": "Ah 7c 2d 9s Kd",
            "actions": {"preflop": "p3 r30, p4 c, p1 c", "flop": "p1 x, p3 r40, p4 f, p1 c", "turn": "checked"},
            "pot": rng.randint(20, 400), "winners": {rng.choice(seats): rng.randint(20, 400)},
            "showdown": {"p3": "As Kc, two pair, aces and kings", "p1": "Qh Qd, a pair of queens"}}
    stats = {s: {"hands": 41, "vpip": round(rng.random(), 2), "pfr": round(rng.random(), 2), "aggression": 1.5,
                 "wtsd": 0.3, "won_at_showdown": 0.5, "net_bb": -12.5, "last_action": "fold"} for s in seats[1:]}
    chips = {s: {"bet": 0, "remain": 1000} for s in seats}
    actions = ["p6 small_blind 5", "p1 big_blind 10"]
    states = []
    pot = 15
    for i in range(count):
        actor = seats[i % 6]
        bet = rng.choice([0, 10, 20, 40])
        chips[actor] = {"bet": bet, "remain": 1000 - bet - i}
        pot += bet
        actions = (actions + [f"{actor} {'call' if bet else 'check'} {bet}"])[-12:]
        states.append({
            "state": {"hand": "hand_0042", "street": ["preflop", "flop", "turn", "river"][(i // 6) % 4],
                      "pot": pot, "button": "p3", "to_act": seats[(i + 1) % 6],
                      "board": ["Ah", "7c", "2d"], "chips": json.loads(json.dumps(chips)),
                      "players": {s: {"seat": k + 1, "name": names[k], "position": "UTG", "status": "active",
                                      "hole_cards": ["Kd", "Ks"] if s == "p1" else []}
                                  for k, s in enumerate(seats)},
                      "actions": list(actions),
                      "legal_actions": {"fold": True, "call": 20, "raise": {"min": 40, "max": 990 - i}}},
            "history": history,
            "opponent_stats": stats,
        })
    return states


def encode(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


# ---- the C ABI through ctypes ----------------------------------------------------------------


class _ClientParams(ctypes.Structure):  # kvf_client_params, field for field (tests/adapters checks)
    _fields_ = [("struct_size", ctypes.c_uint32), ("endpoint", ctypes.c_char_p), ("client_name", ctypes.c_char_p),
                ("connect_timeout_ms", ctypes.c_int32), ("request_timeout_ms", ctypes.c_int32),
                ("server_public_key", ctypes.c_char_p), ("client_public_key", ctypes.c_char_p),
                ("client_secret_key", ctypes.c_char_p), ("zmq_context", ctypes.c_void_p)]


# An option's C type by its type in protocol/options.json (an enum is an int, a bool an int32_t).
_CTYPES = {"string": ctypes.c_char_p, "enum": ctypes.c_int, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32,
           "uint64": ctypes.c_uint64, "float": ctypes.c_float, "bool": ctypes.c_int32}


class _SessionParams(ctypes.Structure):  # kvf_session_params: the table's options, which tests/adapters checks
    _fields_ = [("struct_size", ctypes.c_uint32)] + [(o.name, _CTYPES[o.type]) for o in kvframe.options.SESSION]


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class CClient:
    """Just enough of kvframe_client.h to open a session and send frames with a callback."""

    def __init__(self, lib_path: str, endpoint: str) -> None:
        lib = self.lib = ctypes.CDLL(lib_path)
        lib.kvf_client_params_init.argtypes = [ctypes.POINTER(_ClientParams), ctypes.c_size_t]
        lib.kvf_session_params_init.argtypes = [ctypes.POINTER(_SessionParams), ctypes.c_size_t]
        lib.kvf_client_connect.argtypes = [ctypes.POINTER(_ClientParams), ctypes.POINTER(ctypes.c_void_p)]
        lib.kvf_client_last_error.restype = ctypes.c_char_p
        lib.kvf_client_last_error.argtypes = [ctypes.c_void_p]
        lib.kvf_session_open.argtypes = [ctypes.c_void_p, ctypes.POINTER(_SessionParams),
                                         ctypes.POINTER(ctypes.c_uint64)]
        lib.kvf_send_frame.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int,
                                       ctypes.c_char_p, ctypes.c_size_t, _CALLBACK, ctypes.c_void_p,
                                       ctypes.POINTER(ctypes.c_uint64)]
        lib.kvf_event_type_of.argtypes = [ctypes.c_void_p]
        lib.kvf_event_error_code.argtypes = [ctypes.c_void_p]
        lib.kvf_client_close.argtypes = [ctypes.c_void_p]
        params = self._defaults(_ClientParams, lib.kvf_client_params_init)
        self._endpoint = endpoint.encode()
        params.endpoint = self._endpoint
        params.client_name = b"bench_overhead ctypes"
        self.client = ctypes.c_void_p()
        if lib.kvf_client_connect(ctypes.byref(params), ctypes.byref(self.client)) != 0:
            raise RuntimeError(lib.kvf_client_last_error(None).decode())
        self.done = threading.Event()
        self.failed = 0
        self.pending = 0
        self._callback = _CALLBACK(self._on_event)  # kept alive as long as the client

    def _defaults(self, params_type, init):
        """A params struct at the library's defaults (kvf_*_params_init, sized as declared here)."""
        params = params_type()
        if init(ctypes.byref(params), ctypes.sizeof(params)) != 0:
            raise RuntimeError(self.lib.kvf_client_last_error(None).decode())
        return params

    def _on_event(self, event, user) -> None:
        if self.lib.kvf_event_type_of(event) == 3:  # KVF_EVENT_ERROR
            self.failed += 1
        self.pending -= 1
        if self.pending <= 0:
            self.done.set()

    def pipeline(self, session: int, prepared) -> None:
        self.done.clear()
        self.pending = len(prepared)
        for number, fmt, payload in prepared:
            if self.lib.kvf_send_frame(self.client, session, number, fmt, payload, len(payload), self._callback,
                                       None, None) != 0:
                raise RuntimeError(self.lib.kvf_client_last_error(None).decode())
        self.done.wait()

    def open_session(self, rules: str) -> int:
        sp = self._defaults(_SessionParams, self.lib.kvf_session_params_init)
        self._rules = rules.encode()
        sp.rules_json = self._rules
        sp.game_id = b"bench"
        sp.mode = MODE
        session = ctypes.c_uint64()
        if self.lib.kvf_session_open(self.client, ctypes.byref(sp), ctypes.byref(session)) != 0:
            raise RuntimeError(self.lib.kvf_client_last_error(None).decode())
        return session.value

    def frame(self, session: int, number: int, fmt: int, payload: bytes) -> None:
        self.done.clear()
        self.pending = 1
        if self.lib.kvf_send_frame(self.client, session, number, fmt, payload, len(payload), self._callback,
                                   None, None) != 0:
            raise RuntimeError(self.lib.kvf_client_last_error(None).decode())
        self.done.wait()

    def close(self) -> None:
        self.lib.kvf_client_close(self.client)


# ---- the four ways to send a frame ----------------------------------------------------------


class Raw:
    """A bare DEALER: the messages are encoded before the clock starts."""

    name = "raw pyzmq (floor)"

    def __init__(self, endpoint: str, rules: str) -> None:
        self.sock = zmq.Context.instance().socket(zmq.DEALER)
        self.sock.setsockopt(zmq.ROUTING_ID, kvframe._common.routing_id())
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(endpoint)
        self.rid = 1
        self.sock.send(wire.encode_open(self._id(), wire.OpenSpec(game_id="bench", rules_json=rules, mode=MODE)))
        reply = wire.decode(self.sock.recv())
        self.session = reply.body.SessionId()
        self.number = 0

    def _id(self) -> int:
        self.rid += 1
        return self.rid

    def prepare(self, fmt: int, payload: bytes) -> bytes:
        self.number += 1
        return wire.encode_frame(self._id(), self.session, wire.FrameSpec(self.number, fmt, payload))

    def send(self, message: bytes) -> None:
        self.sock.send(message)
        reply = wire.decode(self.sock.recv())
        if reply.body_type != wire._B.FrameAck:
            raise RuntimeError("raw: frame refused")

    def pipeline(self, prepared) -> None:
        for message in prepared:
            self.sock.send(message)
        for _ in prepared:
            if wire.decode(self.sock.recv()).body_type != wire._B.FrameAck:
                raise RuntimeError("raw: frame refused")

    def close(self) -> None:
        self.sock.close(0)


class PyClient:
    name = "kvframe (pure Python)"

    def __init__(self, endpoint: str, rules: str) -> None:
        self.client = kvframe.Client.connect(endpoint, client_name="bench_overhead")
        self.session = self.client.open_session("bench", rules=rules, mode=MODE)

    def prepare(self, fmt: int, payload: bytes):
        return fmt, payload

    def send(self, prepared) -> None:
        fmt, payload = prepared
        self.session.send_frame(payload, fmt).result()

    def pipeline(self, prepared) -> None:
        futures = [self.session.send_frame(payload, fmt) for fmt, payload in prepared]
        for f in futures:
            f.result()

    def close(self) -> None:
        self.client.close()


class AioClient:
    name = "kvframe.aio (asyncio)"

    def __init__(self, endpoint: str, rules: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.client = self.loop.run_until_complete(AsyncClient.connect(endpoint, client_name="bench_overhead aio"))
        self.session = self.loop.run_until_complete(self.client.open_session("bench", rules=rules, mode=MODE))

    def prepare(self, fmt: int, payload: bytes):
        return fmt, payload

    def run_all(self, items) -> List[float]:
        async def go():
            out = []
            for fmt, payload in items:
                t0 = time.perf_counter()
                await self.session.send_frame(payload, fmt)
                out.append(time.perf_counter() - t0)
            return out
        return self.loop.run_until_complete(go())

    def pipeline(self, prepared) -> None:
        async def go():
            await asyncio.gather(*[self.session.send_frame(payload, fmt) for fmt, payload in prepared])
        self.loop.run_until_complete(go())

    def close(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


class CAbi:
    name = "ctypes over the C ABI"

    def __init__(self, endpoint: str, rules: str, lib: str) -> None:
        self.c = CClient(lib, endpoint)
        self.session = self.c.open_session(rules)
        self.number = 0

    def prepare(self, fmt: int, payload: bytes):
        self.number += 1
        return self.number, fmt, payload

    def send(self, prepared) -> None:
        self.c.frame(self.session, *prepared)

    def pipeline(self, prepared) -> None:
        self.c.pipeline(self.session, prepared)

    def close(self) -> None:
        if self.c.failed:
            raise RuntimeError(f"ctypes: {self.c.failed} frames refused")
        self.c.close()


PIPELINE_WINDOW = 200  # below the server's default --max-session-queue (256): never Busy


def run_pipelined(client, items: List[Tuple[int, bytes]]) -> Tuple[float, float]:
    """Sends the items in windows of PIPELINE_WINDOW without waiting, then waits for the
    window's acks; (wall s per frame, process CPU s per frame)."""
    prepared = [client.prepare(fmt, payload) for fmt, payload in items]
    gc.collect()
    cpu0, t0 = time.process_time(), time.perf_counter()
    for start in range(0, len(prepared), PIPELINE_WINDOW):
        client.pipeline(prepared[start:start + PIPELINE_WINDOW])
    return (time.perf_counter() - t0) / len(items), (time.process_time() - cpu0) / len(items)


def run_phase(client, items: List[Tuple[int, bytes]]) -> Tuple[List[float], float]:
    """Sends items one by one, each waiting for its ack; (round trips in s, process CPU s)."""
    prepared = [client.prepare(fmt, payload) for fmt, payload in items]
    gc.collect()
    cpu0 = time.process_time()
    if isinstance(client, AioClient):
        times = client.run_all(prepared)
    else:
        times = []
        send = client.send
        for p in prepared:
            t0 = time.perf_counter()
            send(p)
            times.append(time.perf_counter() - t0)
    return times, time.process_time() - cpu0


# ---- the pure-Python steps alone ------------------------------------------------------------


def micro(states: List[dict]) -> Dict[str, float]:
    a, b = states[10], states[11]
    whole = encode(b)
    merge = encode(kpatch.merge_patch(a, b))
    from kvframe.protocol.fb import FrameAck as FbFrameAck
    import flatbuffers

    builder = flatbuffers.Builder(64)
    FbFrameAck.Start(builder)
    FbFrameAck.AddSessionId(builder, 123456789)
    FbFrameAck.AddFrameNumber(builder, 42)
    FbFrameAck.AddBlocksTotal(builder, 30)
    FbFrameAck.AddBlocksChanged(builder, 3)
    ack = wire._finish(builder, 9, wire._B.FrameAck, FbFrameAck.End(builder))
    spec_whole = wire.FrameSpec(2, 0, whole)
    spec_merge = wire.FrameSpec(2, 1, merge)

    def decode_ack():
        reply = wire.decode(ack)
        wire.frame_ack(reply.body, 1, reply.request_id, spec_merge)

    cases = {
        "json.dumps(state)": lambda: encode(b),
        "merge_patch(prev, state) + dumps": lambda: encode(kpatch.merge_patch(a, b)),
        "encode Frame message (whole)": lambda: wire.encode_frame(7, 123456789, spec_whole),
        "encode Frame message (merge patch)": lambda: wire.encode_frame(7, 123456789, spec_merge),
        "decode FrameAck": decode_ack,
    }
    out = {}
    for name, fn in cases.items():
        timer = timeit.Timer(fn)
        n, _ = timer.autorange()
        out[name] = min(timer.repeat(5, n)) / n * 1e6
    return out


# ---- main -------------------------------------------------------------------------------------


def find_lib(arg: str) -> str:
    for path in (arg, os.environ.get("KVFRAME_CLIENT_LIB"), REPO / "build" / "adapters" / "native" /
                 "libkvframe_client.so"):
        if path and Path(path).is_file():
            return str(path)
    sys.exit("bench_overhead: libkvframe_client.so not found: --lib PATH or KVFRAME_CLIENT_LIB")


def pct(values: List[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", metavar="ENDPOINT", help="a running kvframe-serve (default: start one)")
    parser.add_argument("--serve", metavar="PATH", help="the kvframe-serve to start")
    parser.add_argument("--lib", default="", help="libkvframe_client.so")
    parser.add_argument("--frames", type=int, default=200, help="frames per format per client per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (clients interleaved within each)")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args()
    lib = find_lib(args.lib)
    states = holdem_states(args.frames + 1)
    wholes = [encode(s) for s in states]
    patches = [encode(kpatch.merge_patch(states[i - 1], states[i])) for i in range(1, len(states))]
    rules = json.dumps(RULES)
    server = None
    endpoint = args.server
    if not endpoint:
        binary = args.serve or kvframe.find_server([REPO / "build" / "server" / "kvframe-serve"])
        extra = ["--no-warm"] if "--no-warm" in subprocess.run([binary, "--help"], capture_output=True,
                                                               text=True).stdout else []
        server = kvframe.ServerProcess(binary, args=["--quota-rate", "0", *extra])
        endpoint = server.start()
    try:
        micro_us = micro(states)
        clients = [Raw(endpoint, rules), PyClient(endpoint, rules), AioClient(endpoint, rules),
                   CAbi(endpoint, rules, lib)]
        rtt: Dict[Tuple[str, str], List[float]] = {}
        cpu: Dict[Tuple[str, str], List[float]] = {}
        piped: Dict[Tuple[str, str], List[Tuple[float, float]]] = {}
        for client in clients:  # warm up: a whole frame then a few patches
            run_phase(client, [(0, wholes[0])] + [(1, p) for p in patches[:5]])
        for _ in range(args.rounds):
            for client in clients:
                for kind, items in (("whole", [(0, w) for w in wholes[1:]]),
                                    ("merge patch", [(1, p) for p in patches])):
                    if kind == "merge patch":  # the patches apply to states[0]
                        run_phase(client, [(0, wholes[0])])
                    times, used = run_phase(client, items)
                    rtt.setdefault((client.name, kind), []).extend(times)
                    cpu.setdefault((client.name, kind), []).append(used / len(items))
                    if kind == "merge patch":
                        run_phase(client, [(0, wholes[0])])
                    wall_s, cpu_s = run_pipelined(client, items)
                    piped.setdefault((client.name, kind), []).append((wall_s, cpu_s))
        for client in clients:
            client.close()
    finally:
        if server is not None:
            server.stop()

    floor = {kind: statistics.median(rtt[(clients[0].name, kind)]) for kind in ("whole", "merge patch")}
    print(f"frames: Hold'em gamecore {statistics.mean(map(len, wholes)):.0f} B whole, merge patch "
          f"{statistics.mean(map(len, patches)):.0f} B mean; {args.frames} frames x {args.rounds} rounds per "
          f"client and format, each waiting for its FrameAck; server {endpoint}")
    print(f"{'client':28} {'frame':12} {'p50 us':>8} {'p90 us':>8} {'p50-floor':>10} {'CPU us/frame':>13}")
    figures = []
    for client in clients:
        for kind in ("whole", "merge patch"):
            times = rtt[(client.name, kind)]
            p50, p90 = pct(times, 0.5) * 1e6, pct(times, 0.9) * 1e6
            over = p50 - floor[kind] * 1e6
            cpu_us = statistics.median(cpu[(client.name, kind)]) * 1e6
            figures.append({"client": client.name, "frame": kind, "p50_us": p50, "p90_us": p90,
                            "over_floor_us": over, "cpu_us": cpu_us})
            print(f"{client.name:28} {kind:12} {p50:8.0f} {p90:8.0f} {over:10.0f} {cpu_us:13.0f}")
    print(f"\npipelined: {PIPELINE_WINDOW} frames sent at a time, then their acks awaited (median of the rounds)")
    print(f"{'client':28} {'frame':12} {'frames/s':>9} {'wall us/frame':>14} {'CPU us/frame':>13}")
    for client in clients:
        for kind in ("whole", "merge patch"):
            wall_s = statistics.median(w for w, _ in piped[(client.name, kind)])
            cpu_s = statistics.median(c for _, c in piped[(client.name, kind)])
            figures.append({"client": client.name, "frame": kind, "pipelined_frames_per_s": 1 / wall_s,
                            "pipelined_cpu_us": cpu_s * 1e6})
            print(f"{client.name:28} {kind:12} {1 / wall_s:9.0f} {wall_s * 1e6:14.0f} {cpu_s * 1e6:13.0f}")
    print("\npure-Python steps alone (no server), best of 5, us per call:")
    for name, us in micro_us.items():
        print(f"  {name:36} {us:8.1f}")
    if args.json:
        print(json.dumps({"round_trips": figures, "steps_us": micro_us}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
