#!/usr/bin/env python3
"""An LLM plays someone else's poker game: PokerKit's No-Limit Texas Hold'em through kvframe.

PokerKit (https://github.com/uoftcprg/pokerkit, pure Python) deals, enforces
the rules and pays the pots; kvframe only sees what each seat sees. At every
decision the acting seat's view of the table becomes a gamecore JSON, sent on
that seat's session (whole the first time, then as patches), and the model
answers with an action valid against a JSON Schema of exactly the moves
PokerKit allows right now (fold / check_or_call / raise with PokerKit's min
and max amounts), which is applied back in PokerKit. An answer PokerKit would
refuse counts as an invalid action (it must stay 0: the schema rules them out).

    scripts/fetch-python-deps.sh                     # PokerKit into ~/.cache/kvframe/python
    python3 -m venv .venv && .venv/bin/pip install ./adapters/python   # the kvframe client
    .venv/bin/python examples/python/holdem_pokerkit.py --hands 3
    .venv/bin/python examples/python/holdem_pokerkit.py --server tcp://127.0.0.1:5555

Exit status: 0 ok, 1 usage, 2 no PokerKit / kvframe / server, 4 an invalid action (docs/tools.md, "Exit codes").
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[2]
NAMES = ["Ada", "Bram", "Cleo", "Dax", "Edda", "Finn"]
STREETS = ["preflop", "flop", "turn", "river"]
BLINDS = (5, 10)
# One block per player, per seat's chips, per street's actions, per finished hand
# (docs/json_blocker.md): a decision re-encodes only the blocks that moved.
RULES = {"pin": ["players.*", "chips.*", "actions.*", "history.*"]}


def import_dependencies():
    """pokerkit from the environment or the cache of scripts/fetch-python-deps.sh; kvframe installed."""
    try:
        import pokerkit  # noqa: F401
    except ImportError:
        cache = os.environ.get("KVFRAME_PYTHON_DEPS") or str(Path.home() / ".cache" / "kvframe" / "python")
        sys.path.insert(0, os.path.join(cache, "site"))
        try:
            import pokerkit  # noqa: F401
        except ImportError:
            sys.exit(fail(2, f"pokerkit not found (nor in {cache}/site): run scripts/fetch-python-deps.sh"))
    try:
        import kvframe  # noqa: F401
    except ImportError:
        sys.exit(fail(2, "kvframe not found: install it into a venv and run this with the venv's python "
                        "(python3 -m venv .venv && .venv/bin/pip install ./adapters/python)"))


def fail(code: int, message: str) -> int:
    print(f"holdem_pokerkit: error: {message}", file=sys.stderr)
    return code


# ---- PokerKit state -> gamecore JSON ---------------------------------------------------


def positions(n: int) -> List[str]:
    """Position names by PokerKit's player index: the blinds first, the button last."""
    middle = ["UTG", "UTG+1", "MP", "HJ", "CO"][: max(0, n - 3)]
    return ["SB", "BB"] + middle + ["BTN"] if n > 2 else ["SB", "BB"]


def cards(cs) -> str:
    return " ".join(repr(c) for c in cs)


def gamecore(state, seat_of: List[str], viewer: str, hand_no: int, log: Dict[str, List[str]],
             history: Dict[str, str]) -> Dict[str, Any]:
    """What `viewer` sees, laid out as kvframe likes it: keyed objects (no arrays to shift),
    static parts first, each volatile value in the small block it belongs to."""
    n = len(seat_of)
    pos = positions(n)
    me = seat_of.index(viewer)
    # Seats in a fixed order (p1, p2, ...), whatever PokerKit's order this hand: the blocks stay
    # put and a new hand is a patch, not a reordered document.
    order = sorted(range(n), key=lambda j: int(seat_of[j][1:]))
    # Always the same keys in the same order, the optional one last: patches stay small.
    legal: Dict[str, Any] = {"check_or_call": state.checking_or_calling_amount,
                             "fold": state.checking_or_calling_amount > 0}
    if state.can_complete_bet_or_raise_to():
        legal["raise_to"] = {"min": state.min_completion_betting_or_raising_to_amount,
                             "max": state.max_completion_betting_or_raising_to_amount}
    return {
        "table": {"game": "No-Limit Texas Hold'em", "blinds": f"{BLINDS[0]}/{BLINDS[1]}", "seats": n},
        "players": {seat_of[j]: {"name": NAMES[int(seat_of[j][1:]) - 1], "position": pos[j]} for j in order},
        "you": {"id": viewer, "hole_cards": cards(state.hole_cards[me])},
        "hand": {"id": f"hand_{hand_no:04d}", "street": STREETS[state.street_index],
                 "board": cards(state.get_board_cards(0)), "pot": state.total_pot_amount,
                 "to_act": seat_of[state.actor_index]},
        "chips": {seat_of[j]: {"stack": state.stacks[j], "bet": state.bets[j],
                               "status": ("all_in" if state.stacks[j] == 0 else "active") if state.statuses[j]
                               else "folded"} for j in order},
        "actions": {street: ", ".join(lines) for street, lines in log.items()},
        "history": dict(history),
        "legal": legal,
    }


def action_schema(state) -> Dict[str, Any]:
    """A JSON Schema whose valid values are exactly the moves PokerKit allows now."""
    def branch(name: str, **extra: Any) -> Dict[str, Any]:
        return {"type": "object", "properties": {"action": {"const": name}, **extra},
                "required": ["action", *extra], "additionalProperties": False}

    branches = [branch("check_or_call")]
    if state.checking_or_calling_amount:  # folding with nothing to call is pointless (PokerKit warns)
        branches.insert(0, branch("fold"))
    if state.can_complete_bet_or_raise_to():
        branches.append(branch("raise", amount={
            "type": "integer", "minimum": state.min_completion_betting_or_raising_to_amount,
            "maximum": state.max_completion_betting_or_raising_to_amount}))
    return {"anyOf": branches}


def apply(state, action: Any) -> str:
    """Plays `action` in PokerKit; returns what happened ("" when PokerKit would refuse it)."""
    kind = action.get("action") if isinstance(action, dict) else None
    owed = state.checking_or_calling_amount
    if kind == "fold" and owed and state.can_fold():
        state.fold()
        return "fold"
    if kind == "check_or_call" and state.can_check_or_call():
        state.check_or_call()
        return f"call {owed}" if owed else "check"
    amount = action.get("amount") if isinstance(action, dict) else None
    if kind == "raise" and type(amount) is int and state.can_complete_bet_or_raise_to(amount):
        state.complete_bet_or_raise_to(amount)
        return f"raise to {amount}"
    return ""


# What a seat does when the model cannot answer in time (docs/your_game.md, "When the model
# cannot answer"): the move a rule bot would make here, so the game never waits on the model.
FALLBACK = {"action": "check_or_call"}


def decide(kvframe, session, instruction: str, schema: Dict[str, Any], deadline_ms: int, **query: Any):
    """The model's answer, or None when the game must play its fallback move now.

    ``deadline_ms`` (0: none) goes to the server, which refuses at once (``DeadlineError``)
    a question it expects to finish later, and bounds the wait here too, with a second for
    the network; a server that is full (``BusyError``), a connection that dropped
    (``DisconnectedError``: the client reconnects by itself, ask again next turn) and a
    reply that did not come (``TimeoutError``) all mean the same to a game: play on.
    """
    timeout = deadline_ms / 1000 + 1.0 if deadline_ms else None
    try:
        return session.ask(instruction, schema=schema, deadline_ms=deadline_ms, timeout=timeout, **query)
    except (kvframe.DeadlineError, kvframe.BusyError, kvframe.DisconnectedError, TimeoutError) as e:
        print(f"  no answer in time ({type(e).__name__}): the fallback move", file=sys.stderr)
        return None


# ---- the match ---------------------------------------------------------------------------


def play(args, client, kvframe, pokerkit) -> int:
    seats = [f"p{i + 1}" for i in range(args.seats)]
    stacks = {s: args.stack for s in seats}
    # One session per seat: each keeps its own view (its own hole cards) and sends patches
    # against its previous frame.
    sessions = {s: client.open_session("pokerkit-nlhe", rules=RULES) for s in seats}
    history: Dict[str, str] = {}
    automations = tuple(a for a in pokerkit.Automation)  # PokerKit deals, posts and pays; we only act
    decisions = invalid = fallbacks = 0
    latencies: List[float] = []
    formats: Dict[str, int] = {}
    for hand_no in range(1, args.hands + 1):
        seat_of = [seats[(j + hand_no - 1) % len(seats)] for j in range(len(seats))]  # the button moves
        for s in seats:
            if stacks[s] < BLINDS[1]:
                stacks[s] = args.stack  # a rebuy
        state = pokerkit.NoLimitTexasHoldem.create_state(
            automations, True, 0, BLINDS, BLINDS[1], tuple(stacks[s] for s in seat_of), len(seats),
            mode=pokerkit.Mode.CASH_GAME)
        log: Dict[str, List[str]] = {}
        while state.status:
            if state.actor_index is None:
                return fail(2, "PokerKit is waiting for something other than a player (an automation is missing)")
            seat = seat_of[state.actor_index]
            street = STREETS[state.street_index]
            view = gamecore(state, seat_of, seat, hand_no, log, history)
            ack = sessions[seat].send_state(view, patch=None if args.patch == "whole" else args.patch)
            # The question: the moves allowed now, said in words and enforced by the schema.
            options = [f"check_or_call (costs {view['legal']['check_or_call']})"]
            if "raise_to" in view["legal"]:
                options.append("raise to an amount from {min} to {max}".format(**view["legal"]["raise_to"]))
            if view["legal"]["fold"]:
                options.append("fold")
            instruction = (f"You are {seat} ({NAMES[int(seat[1:]) - 1]}) holding {view['you']['hole_cards']}, "
                           f"to act on the {street} with {view['hand']['pot']} in the pot. "
                           f"Choose one legal action: {', '.join(options)}. Answer as JSON.")
            started = time.monotonic()
            answer = decide(kvframe, sessions[seat], instruction, action_schema(state), args.deadline_ms,
                            npc_id=seat, max_tokens=args.max_tokens)
            latencies.append((time.monotonic() - started) * 1000)
            frame = ack.result()
            decisions += 1
            if answer is None:
                fallbacks += 1
                done = apply(state, FALLBACK) + " (fallback)"
            else:
                done = apply(state, answer.action)
            if not done:  # the schema should make this impossible; play on with a check or call
                invalid += 1
                done = apply(state, FALLBACK) + " (invalid answer replaced)"
            log.setdefault(street, []).append(f"{seat} {done}")
            kind = frame.format.name.lower()
            formats[kind] = formats.get(kind, 0) + 1
            if not args.quiet:
                said = answer.action_json if answer else "(no answer)"
                print(f"hand {hand_no} {street:7} {seat}: {said:48} -> {done:22} "
                      f"[{kind} {frame.json_bytes} B, {frame.blocks_changed}/{frame.blocks_total} blocks changed, "
                      f"{latencies[-1]:.0f} ms]")
        won = [f"{seat_of[j]} {p:+d}" for j, p in enumerate(state.payoffs) if p]
        for j, s in enumerate(seat_of):
            stacks[s] = state.stacks[j]
        history[f"hand_{hand_no:04d}"] = f"{', '.join(won)}; board {cards(state.get_board_cards(0)) or 'none'}"
        while len(history) > args.history:
            del history[next(iter(history))]
        print(f"hand {hand_no}: {history[f'hand_{hand_no:04d}']}")
    for session in sessions.values():
        session.close()
    print(f"decisions: {decisions}, invalid actions: {invalid}, fallbacks: {fallbacks}, frames: "
          + ", ".join(f"{k} {v}" for k, v in sorted(formats.items()))
          + (f", latency p50 {statistics.median(latencies):.0f} ms, max {max(latencies):.0f} ms" if latencies else ""))
    print("stacks: " + ", ".join(f"{s} {stacks[s]}" for s in seats))
    return 4 if invalid else 0


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors exit 1, as kvframe's tools do
        self.print_usage(sys.stderr)
        sys.exit(fail(1, message))


def main(argv=None) -> int:
    parser = Parser(description="An LLM plays PokerKit's No-Limit Texas Hold'em through kvframe: every seat's "
                                "decision is a frame and a schema-constrained action.",
                    epilog="Exit status: 0 ok, 1 usage, 2 no PokerKit / kvframe / server, 4 an invalid action.")
    parser.add_argument("--hands", type=int, default=3, help="hands to play (default 3)")
    parser.add_argument("--seats", type=int, default=3, choices=range(3, 7), metavar="3..6",
                        help="players, all played by the model (default 3)")
    parser.add_argument("--server", metavar="ENDPOINT",
                        help="a running kvframe-serve (default: start one on a free port)")
    parser.add_argument("--serve", metavar="PATH", help="the kvframe-serve to start (default: $KVFRAME_SERVE, "
                        "build/server/kvframe-serve, or PATH)")
    parser.add_argument("--model", metavar="GGUF", default=os.environ.get("KVFRAME_MODEL"),
                        help="the model of the server started (default: $KVFRAME_MODEL or the server's default)")
    parser.add_argument("--patch", choices=["merge", "json", "whole"], default="merge",
                        help="how frames after a seat's first go: RFC 7386 merge patch (default), RFC 6902 JSON "
                             "Patch, or whole")
    parser.add_argument("--stack", type=int, default=1000, help="starting stack (default 1000)")
    parser.add_argument("--history", type=int, default=5, help="finished hands shown to the model (default 5)")
    parser.add_argument("--max-tokens", type=int, default=48, help="tokens per answer at most (default 48)")
    parser.add_argument("--deadline-ms", type=int, default=10000,
                        help="each decision's time budget: past it the seat plays its fallback move, a check or "
                             "call (default 10000; 0: wait for the model however long it takes)")
    parser.add_argument("--seed", type=int, default=1, help="seed of PokerKit's shuffles (default 1)")
    parser.add_argument("--quiet", action="store_true", help="one line per hand, not per decision")
    args = parser.parse_args(argv)
    if args.hands < 1:
        parser.error("--hands must be at least 1")
    if args.deadline_ms < 0:
        parser.error("--deadline-ms must be 0 or more")
    import_dependencies()
    import kvframe
    import pokerkit

    random.seed(args.seed)  # PokerKit shuffles with the random module
    server = None
    try:
        endpoint = args.server
        if not endpoint:
            binary = args.serve or kvframe.find_server([REPO / "build" / "server" / "kvframe-serve"])
            if not binary:
                return fail(2, "kvframe-serve not found: pass --server ENDPOINT, --serve PATH or set KVFRAME_SERVE")
            server = kvframe.ServerProcess(binary, model=args.model)
            endpoint = server.start()
            print(f"started {binary} on {endpoint}")
        with kvframe.Client.connect(endpoint, client_name="holdem_pokerkit.py") as client:
            return play(args, client, kvframe, pokerkit)
    except (kvframe.ServerStartError, kvframe.ConnectError, kvframe.RequestTimeoutError) as e:
        return fail(2, str(e))
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
