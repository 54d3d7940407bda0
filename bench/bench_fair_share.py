#!/usr/bin/env python3
"""Fair share: a light game beside a heavy tenant on one kvframe-serve.

One server (the default model) per --threads value. The light tenant, on a
connection of its own (so a principal of its own), has one session and asks
one schema question a second, each with the next state; the heavy tenant, on
another connection, opens --heavy sessions and keeps every one asking back
to back. Measured per server: the light game's latency (state sent to
parsed action) alone and beside the heavy tenant, and the heavy tenant's
answers a second alone and beside the light game. The issue's bars: the
light game's p99 beside the heavy tenant at most 1.5x its p99 alone, and
the heavy tenant's rate at least 90% of its rate alone less the light
game's share.

    python3 bench/bench_fair_share.py                        # --threads 1,2 --heavy 16
    python3 bench/bench_fair_share.py --threads 1 --heavy 64 --questions 30
    python3 bench/bench_fair_share.py --equal 2,8                # two busy tenants: equal shares?

Needs the kvframe Python package installed (adapters/python/README.md: a
venv; run this with its python). Prints a table and writes a PNG
(gnuplot). Exit codes: docs/tools.md (2: no kvframe package or server
binary, 3: a run failed).
"""
import argparse
import os
import sys
import tempfile
import threading
import time

from bar_chart import bar_chart  # bench/bar_chart.py, beside this file
from bench_contention import QUESTION, SCHEMA, client_for, cpu_description  # bench_contention's NPC question
from sample_stats import percentile  # bench/sample_stats.py
import exit_codes  # bench/exit_codes.py

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
WARMUP = 2  # the light game's first questions encode its whole state: not counted


def state(i):
    return {"npc": {"name": "Bram", "hp": 3 + i % 5}, "player": {"gold": 40}, "wolf": {"hp": 9}}


def light_game(kvframe, endpoint, questions):
    """Latencies (ms) of one session asking once a second."""
    latencies = []
    with kvframe.Client.connect(endpoint, request_timeout=600) as client, client.open_session("light") as session:
        for i in range(WARMUP + questions):
            started = time.perf_counter()
            session.send_state(state(i))
            session.act(QUESTION, SCHEMA)
            elapsed = time.perf_counter() - started
            if i >= WARMUP:
                latencies.append(elapsed * 1000.0)
            time.sleep(max(0.0, 1.0 - elapsed))
    return latencies


class HeavyTenant:
    """`sessions` sessions on one connection, each asking back to back on its own thread."""

    def __init__(self, kvframe, endpoint, sessions):
        self.client = kvframe.Client.connect(endpoint, request_timeout=600)
        self.sessions = [self.client.open_session(f"heavy-{i}") for i in range(sessions)]
        self.stop = threading.Event()
        self.answers = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.ask, args=(s,), daemon=True) for s in self.sessions]

    def ask(self, session):
        i = 0
        while not self.stop.is_set():
            session.send_state(state(i))
            session.act(QUESTION, SCHEMA)
            with self.lock:
                self.answers += 1
            i += 1

    def rate_over(self, seconds):
        with self.lock:
            before = self.answers
        time.sleep(seconds)
        with self.lock:
            return (self.answers - before) / seconds

    def __enter__(self):
        for t in self.threads:
            t.start()
        time.sleep(3.0)  # every session past its first, whole-state encoding
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(120)
        self.client.close()


def run_server(kvframe, serve, threads, heavy, questions, work):
    server = kvframe.ServerProcess(serve, args=["--threads", str(threads)],
                                   log_path=os.path.join(work, f"serve-{threads}.log"))
    server.start()
    try:
        alone = light_game(kvframe, server.endpoint, questions)
        with HeavyTenant(kvframe, server.endpoint, heavy) as tenant:
            heavy_alone = tenant.rate_over(questions)
            result = {}
            light = threading.Thread(target=lambda: result.update(beside=light_game(kvframe, server.endpoint,
                                                                                   questions)))
            light.start()
            heavy_beside = tenant.rate_over(questions)
            light.join()
        return alone, result.get("beside", []), heavy_alone, heavy_beside
    finally:
        server.stop()


def equal_shares(kvframe, serve, threads, counts, seconds, work):
    """Answers/s of two heavy tenants of counts[0] and counts[1] sessions, side by side on one server."""
    server = kvframe.ServerProcess(serve, args=["--threads", str(threads)],
                                   log_path=os.path.join(work, f"serve-equal-{threads}.log"))
    server.start()
    try:
        with HeavyTenant(kvframe, server.endpoint, counts[0]) as a, \
                HeavyTenant(kvframe, server.endpoint, counts[1]) as b:
            rates = {}
            timers = [threading.Thread(target=lambda k=k, t=t: rates.update({k: t.rate_over(seconds)}))
                      for k, t in (("a", a), ("b", b))]
            for t in timers:
                t.start()
            for t in timers:
                t.join()
            return rates["a"], rates["b"]
    finally:
        server.stop()


def main_equal(kvframe, args):
    """--equal A,B: the issue's bar that two principals with equal load get equal shares (within 10%)."""
    counts = [int(n) for n in args.equal.split(",")]
    print("\n| threads | sessions A / B | answers/s A / B | B / A (bar 0.9 .. 1.1) |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench-fair-share-") as work:
        for threads in (int(t) for t in args.threads.split(",")):
            try:
                rate_a, rate_b = equal_shares(kvframe, args.serve, threads, counts, args.questions, work)
            except Exception as e:
                print(f"bench_fair_share: --equal, --threads {threads} failed: {e}", file=sys.stderr)
                return exit_codes.RUN_FAILED
            ratio = rate_b / rate_a if rate_a > 0 else float("nan")
            print(f"| {threads} | {counts[0]} / {counts[1]} | {rate_a:.2f} / {rate_b:.2f} | {ratio:.2f} |", flush=True)
    return exit_codes.OK


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--serve", default=os.path.join(ROOT, "build", "server", "kvframe-serve"))
    parser.add_argument("--threads", default="1,2", help="server thread counts, comma-separated")
    parser.add_argument("--heavy", type=int, default=16, help="the heavy tenant's sessions")
    parser.add_argument("--questions", type=int, default=20, help="the light game's counted questions per run")
    parser.add_argument("--plot", default="bench_fair_share.png")
    parser.add_argument("--equal", default="",
                        help="A,B: instead, two heavy tenants of A and B sessions side by side for --questions "
                             "seconds: their answers/s (equal shares whatever their sessions)")
    args = parser.parse_args()
    kvframe = client_for("bench_fair_share", args.serve)
    if kvframe is None:
        return exit_codes.BAD_INPUT
    if args.equal:
        return main_equal(kvframe, args)
    print(f"bench_fair_share: {cpu_description()}; heavy tenant: {args.heavy} sessions", flush=True)
    rows, labels, alone_p99, beside_p99 = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-fair-share-") as work:
        for threads in (int(t) for t in args.threads.split(",")):
            try:
                alone, beside, heavy_alone, heavy_beside = run_server(kvframe, args.serve, threads, args.heavy,
                                                                      args.questions, work)
            except Exception as e:
                print(f"bench_fair_share: --threads {threads} failed: {e}", file=sys.stderr)
                return exit_codes.RUN_FAILED
            if not beside:
                print(f"bench_fair_share: --threads {threads}: the light game beside the heavy tenant failed",
                      file=sys.stderr)
                return exit_codes.RUN_FAILED
            rows.append((threads, alone, beside, heavy_alone, heavy_beside))
            labels.append(f"{threads} thread{'s' if threads > 1 else ''}")
            alone_p99.append(percentile(alone, 99))
            beside_p99.append(percentile(beside, 99))

    print("\n| threads | light alone p50 / p99 ms | beside the heavy tenant p50 / p99 ms | p99 ratio (bar <= 1.5) "
          "| heavy answers/s alone | beside the light game | heavy share kept (bar >= 0.9) |")
    print("|---|---|---|---|---|---|---|")
    for threads, alone, beside, heavy_alone, heavy_beside in rows:
        ratio = percentile(beside, 99) / percentile(alone, 99)
        # What the heavy tenant may expect beside the light game: its rate alone,
        # less the engine time the light game's one answer a second takes.
        expected = heavy_alone * max(0.0, 1.0 - percentile(alone, 50) / 1000.0)
        kept = heavy_beside / expected if expected > 0 else float("nan")
        print(f"| {threads} | {percentile(alone, 50):.0f} / {percentile(alone, 99):.0f} | "
              f"{percentile(beside, 50):.0f} / {percentile(beside, 99):.0f} | {ratio:.2f} | {heavy_alone:.2f} | "
              f"{heavy_beside:.2f} | {kept:.2f} |")
    if args.plot and bar_chart(args.plot, f"The light game's p99 beside a {args.heavy}-session tenant",
                               "ms (lower is better)", labels, {"alone": alone_p99, "beside": beside_p99}):
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
