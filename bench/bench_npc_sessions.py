#!/usr/bin/env python3
"""One session per match or one per NPC: what each costs (docs/your_game.md, "Sessions").

Starts a kvframe-serve (kvframe.ServerProcess: $KVFRAME_SERVE, a build tree, PATH) and
plays a village of N NPCs for a few rounds, two ways, one after the other:

  match  one session; each round one frame, then all N NPCs' questions sent together
         (npc_id set; the server decodes a session's queued queries as one batch)
  npc    N sessions; each round the same frame to every session, then one question each

A round changes two NPCs' values. Per way it prints, over the rounds after the first
(the first encodes everything): the wall time from the round's first frame to its last
answer (p50), the tokens run through the model per round (from the Reports: each
session's tokens_encoded, which includes warming its frame, and every question's final
block), the mean batch size, and the server's resident memory with the sessions
open (VmRSS after the last round).
Needs the kvframe package (adapters/python/README.md), e.g.:

  .venv/bin/python bench/bench_npc_sessions.py --npcs 4 --rounds 4
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Dict, List

import kvframe

SCHEMA = {
    "type": "object",
    "properties": {"verb": {"enum": ["attack", "flee", "trade", "talk", "hide"]},
                   "target": {"enum": ["player", "wolf"]}},
    "required": ["verb", "target"], "additionalProperties": False,
}
RULES = {"pin": ["npcs.*"]}
JOBS = ["blacksmith", "guard", "merchant", "healer", "hunter", "farmer", "bard", "priest"]


def village(npcs: int, round_no: int) -> Dict[str, Any]:
    """The shared state; round r changes the hp of NPCs r % n and (r + 1) % n."""
    changed = {round_no % npcs, (round_no + 1) % npcs}
    return {
        "world": {"time": "dusk", "weather": "rain", "place": "the village square", "round": round_no},
        "player": {"gold": 40, "hp": 12, "carrying": "a rusty sword", "reputation": "stranger"},
        "wolf": {"hp": 9, "at": "the north gate", "hungry": True},
        "npcs": {f"npc_{i}": {"job": JOBS[i % len(JOBS)], "hp": 10 - (round_no if i in changed else 0) % 7,
                              "mood": "calm", "at": f"stall {i}",
                              "knows": f"npc_{i} has lived here {10 + i} years and trusts the guard"}
                 for i in range(npcs)},
    }


def question(i: int) -> str:
    return f"You are npc_{i}. A wolf is at the gate and a stranger is in the square. What do you do?"


def vm_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def play(client, pid: int, way: str, npcs: int, rounds: int, max_tokens: int) -> Dict[str, List[float]]:
    count = 1 if way == "match" else npcs
    sessions = [client.open_session(f"village-{way}", rules=RULES) for _ in range(count)]
    seen: Dict[str, List[float]] = {"wall_ms": [], "tokens": [], "batch": []}
    for round_no in range(rounds):
        frame = village(npcs, round_no)
        started = time.monotonic()
        for session in sessions:
            session.send_state(frame)
        queries = [sessions[0 if way == "match" else i].query(question(i), schema=SCHEMA, npc_id=f"npc_{i}",
                                                             max_tokens=max_tokens)
                   for i in range(npcs)]
        answers = [q.result() for q in queries]
        seen["wall_ms"].append((time.monotonic() - started) * 1000)
        # A batch's answers share one Report of the session's encoding (its frame, warmed or
        # not, and one final block): count that once per session, and every other question.
        per_session = {(0 if way == "match" else i): a.report for i, a in enumerate(answers)}
        seen["tokens"].append(sum(r.tokens_encoded - r.query_tokens for r in per_session.values())
                              + sum(a.report.query_tokens for a in answers))
        seen["batch"].append(statistics.mean(a.report.batch_size for a in answers))
    seen["rss_mib"] = [vm_rss_mib(pid)]  # the sessions still open
    for session in sessions:
        session.close()
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--npcs", type=int, default=4, help="NPCs in the village (default 4)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds per way, the first left out (default 4)")
    parser.add_argument("--max-tokens", type=int, default=40, help="tokens per answer at most (default 40)")
    parser.add_argument("--threads", type=int, default=None, help="the server's --threads (default: fit)")
    args = parser.parse_args()
    if args.npcs < 1 or args.rounds < 2:
        parser.error("--npcs must be at least 1 and --rounds at least 2")
    print(f"{'way':6} {'sessions':>8} {'round p50 ms':>12} {'tokens/round':>12} {'batch':>6} {'server MiB':>10}")
    for way in ("match", "npc"):
        # A fresh server per way: neither finds the other's blocks in the shared store.
        with kvframe.ServerProcess(threads=args.threads) as server:
            with kvframe.Client.connect(server.endpoint, client_name="bench_npc_sessions.py") as client:
                seen = play(client, server.process.pid, way, args.npcs, args.rounds, args.max_tokens)
        later = {k: v[1:] for k, v in seen.items()}
        print(f"{way:6} {1 if way == 'match' else args.npcs:>8} {statistics.median(later['wall_ms']):>12.0f} "
              f"{statistics.mean(later['tokens']):>12.0f} {statistics.mean(later['batch']):>6.1f} {seen['rss_mib'][0]:>10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
