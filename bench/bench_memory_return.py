#!/usr/bin/env python3
"""Memory after a load peak: does kvframe-serve give it back?

Starts one kvframe-serve (the default model), reads its resident memory
(VmRSS) idle, then opens --sessions sessions, sends each a frame of about
--kb KB of game state and asks it one question (the peak), closes them all
and reads VmRSS again a moment later. Prints the three figures.

    bench/bench_memory_return.py                      # 16 sessions of ~10 KB states
    bench/bench_memory_return.py --sessions 32 --kb 48

Needs the kvframe Python package installed (adapters/python/README.md: a
venv; run this with its python). Exit codes: docs/tools.md (2: no kvframe package or
server binary, 3: a run failed).
"""
import argparse
import os
import sys
import time

from bench_contention import QUESTION, SCHEMA, client_for  # bench_contention's NPC question
import exit_codes  # bench/exit_codes.py

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def state(session, kb):
    """A game state of about `kb` KB: units with their own values per session."""
    units = [{"id": f"unit_{i}", "hp": (i * 7 + session) % 100, "x": i % 50, "y": i // 50, "kind": "archer"}
             for i in range(kb * 1024 // 60)]
    return {"npc": {"name": "Bram", "hp": 5}, "units": units}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--serve", default=os.path.join(ROOT, "build", "server", "kvframe-serve"))
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--kb", type=int, default=10, help="KB of game state per session (within 8K tokens)")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds to wait after the sessions close")
    args = parser.parse_args()
    kvframe = client_for("bench_memory_return", args.serve)
    if kvframe is None:
        return exit_codes.BAD_INPUT
    with kvframe.ServerProcess(args.serve) as server:
        pid = server.process.pid
        time.sleep(1.0)
        idle = rss_mb(pid)
        peak = idle
        with kvframe.Client.connect(server.endpoint, request_timeout=600) as client:
            sessions = [client.open_session(f"soak-{i}", context_tokens=8192) for i in range(args.sessions)]
            for i, session in enumerate(sessions):
                session.send_state(state(i, args.kb))
                session.act(QUESTION, SCHEMA)
                peak = max(peak, rss_mb(pid))
            for session in sessions:
                session.close()
        time.sleep(args.settle)
        after = rss_mb(pid)
    print(f"kvframe-serve VmRSS: idle {idle:.0f} MB, peak {peak:.0f} MB with {args.sessions} sessions of "
          f"~{args.kb} KB states, {after:.0f} MB {args.settle:.0f} s after they closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
