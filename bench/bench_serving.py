#!/usr/bin/env python3
"""Many matches against one kvframe-serve: decisions per second and latency.

Starts a `kvframe-serve` and plays N Hold'em matches at once against it
(`kvframe-holdem-client --server`, the LLM bot against the three rule bots,
block mode, each match its own process and seed), for N in --matches, at
each pace of --paces:

  - pace 0 (unpaced): each match asks as fast as the server answers, its
    frame sent with its question;
  - pace P ms: each table pauses P ms after every deal, action and result,
    as a game's animations do, and the LLM bot streams each new state as a
    frame meanwhile (`--pace-ms`), so the server encodes it ahead of the
    question;
  - pace `auto`: the pace at which a match asks --rate times a second
    (default 1). How many pauses fall between two of the LLM bot's
    decisions depends on how it plays (one that folds at once sits out the
    rest of the hand), so the first server's unmeasured match plays --hands
    hands unpaced and the pace is (1000 / rate - its decisions' p50 ms) / its
    pauses per decision. The table prints the pace and the rate each got.

Before the measured runs each server plays one unmeasured hand (first-use
costs: kernels checked, graphs captured, pages touched; --hands of them for
pace `auto`). Per N and pace: decisions per second of all matches, and per
match; each decision's time to first token and to the whole action (frame
sent to action), p50 / p99; starvation (the slowest match's decision rate
over the fastest's); the tokens encoded per decision (its Report: what its
frame and question still needed), those the server encoded ahead for the
frames streamed before it (paced; Report.tokens_encoded_superseded) and the
prompt's tokens. Rates are counted while every match plays: from the last
match's first decision to the first match's last one, each decision timed as
its line arrives from its match, so the matches' start and cold first frames
stay out. Under the table: unpaced, 4 matches against 1 (decisions/s and
p50, against the goals 2.5x and 1.5x); per pace, the largest N whose p99 is
within --p99-goal.

Configurations differ in `--max-sessions-together` (1 runs one session's
request per engine turn, more lets waiting sessions' answers decode together,
one pass a step for all) and `--step-tokens` (0 encodes a frame whole in one
engine turn; N encodes at most N tokens of one session's frame per turn, the
other sessions' requests running between the steps), and with `--openblas`
in the server's OpenBLAS build (`system`: the one the system selects, the
`openmp` build after scripts/setup.sh; or `pthread`, `openmp`, `serial`,
found in /usr/lib/<multiarch>/openblas-<build>/ and put first on the
server's LD_LIBRARY_PATH; docs/runtime.md, "CPU speed"). Each N and
configuration gets a server of its own, configurations alternating per N so
they meet the same machine load; --one-server starts one per configuration
for every N instead (one load of a large model). Options after `--` go to
kvframe-serve (a GPU: `-- --device cuda --dtype bf16`). Each match is a
`kvframe-holdem-client` process (kvframe-holdem without libtorch: a hundred
start at once), and the server's --max-queue is raised so that the matches'
streamed frames fill each session's own queue limit before the server's.

A run that fails (a match exits non-zero: a server error such as running
out of memory, an answer past the client's 30 s timeout) or outlasts
--run-timeout stops that pace and configuration: larger N are skipped, the
table shows what ran, and the exit code is 3. --json is rewritten after
every run, and SIGTERM stops the matches and the server on the way out, so
a run cut short by an outer time limit keeps what it measured
(`--from-json` prints it).

`--casters K` adds K newcomers: each, on its own connection, opens a block
session with a cold MOBA frame of ~6K tokens (`kvframe-stream --population
0.035`, a new seed each time), asks the caster's question, closes it and
starts over, for as long as the matches play — the long prefill that, encoded
whole, holds every match's decision behind it. Their answers' latency (frame
sent to answer) is reported beside the matches'. Needs the kvframe Python
package importable (adapters/python/README.md: a venv, or PYTHONPATH).

    python3 bench/bench_serving.py                            # matches 1,2,4; together 1,8
    python3 bench/bench_serving.py --matches 1,4,16 --paces 0,auto --hands 4 --together 1
    python3 bench/bench_serving.py --matches 1,4 --together 1 --step-tokens 1024 --openblas openmp,pthread
    /tmp/venv/bin/python bench/bench_serving.py --matches 4 --together 1 --step-tokens 0,256 --casters 1
    python3 bench/bench_serving.py --model 8b.gguf --lora none --together 128 -- --device cuda --dtype bf16
    python3 bench/bench_serving.py --from-json rows.json --plot out.png   # a saved run's table and plot again

Prints a table and writes a PNG plot (gnuplot) and, with --json, the rows.
Exit codes: docs/tools.md (3: a run failed).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

from bar_chart import bar_chart  # bench/bar_chart.py, beside this file
from sample_stats import percentile  # bench/sample_stats.py
import exit_codes  # bench/exit_codes.py

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

CASTER_QUESTION = "In one short sentence, tell the viewers what is happening right now."
CASTER_CONTEXT = 8192  # tokens: the default model's context; a ~6K-token frame, the question and the answer
WARMUP_SEED = 1        # the unmeasured hand's; measured matches play seeds from 7000


def openblas_folder(build):
    """Debian's folder of an OpenBLAS build ('openmp', 'pthread', 'serial'); '' for the system's choice."""
    if build == "system":
        return ""
    multiarch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True, check=True).stdout.strip()
    folder = f"/usr/lib/{multiarch}/openblas-{build}"
    if not os.path.exists(os.path.join(folder, "libopenblas.so.0")):
        raise SystemExit(f"bench_serving: no OpenBLAS '{build}' build in {folder} (apt-get install libopenblas0-{build})")
    return folder


def start_server(serve, work, config, n, args):
    together, step, blas = config
    ready = os.path.join(work, f"ready-{together}-{step}-{blas}-{time.monotonic_ns()}")
    log_path = os.path.join(work, f"serve-{together}-{step}-{blas}.log")
    env = dict(os.environ)
    folder = openblas_folder(blas)
    if folder:
        env["LD_LIBRARY_PATH"] = folder + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    cmd = [serve, "--bind", "tcp://127.0.0.1:0", "--ready-file", ready, "--threads", str(args.threads),
           "--max-sessions-together", str(together), "--step-tokens", str(step),
           # A paced match streams a frame at every table event; while a session waits for its turn, its
           # frames queue (superseded ones keep their place until their turn acks them). The server's
           # queue of 1,024 fills at ~128 matches: let each session's own limit (256) bind instead.
           "--max-queue", str(max(1024, 256 * n))]
    cmd += (["--model", args.model] if args.model else []) + (["--lora", args.lora] if args.lora else [])
    with open(log_path, "a") as log:
        process = subprocess.Popen(cmd + args.serve_args, stdout=log, stderr=log, env=env)
    deadline = time.time() + args.load_timeout
    while not os.path.exists(ready):
        if process.poll() is not None or time.time() > deadline:
            process.kill()
            raise RuntimeError(f"kvframe-serve did not start: {tail(log_path)}")
        time.sleep(0.1)
    return process, open(ready).read().strip()


def tail(path, chars=1500):
    return open(path, errors="replace").read()[-chars:]


def moba_frames(stream, work, count):
    """`count` cold ~6K-token MOBA frames (kvframe-stream, seeds 31..), as JSON text."""
    frames = []
    for seed in range(31, 31 + count):
        folder = os.path.join(work, f"moba-{seed}")
        subprocess.run([stream, "--seed", str(seed), "--population", "0.035", "--frames", "1", "--write", folder],
                       check=True, stdout=subprocess.DEVNULL)
        frames.append(open(os.path.join(folder, "frame_0000.json")).read())
    return frames


def caster(endpoint, frames, rules, offset, stop, latencies, failures):
    """A newcomer after another until `stop`: a new session, a cold frame, one question."""
    import kvframe  # only --casters needs the package
    try:
        with kvframe.Client.connect(endpoint, client_name="bench-caster", request_timeout=600) as client:
            i = offset
            while not stop.is_set():
                with client.open_session("moba", rules=rules, context_tokens=CASTER_CONTEXT) as session:
                    start = time.perf_counter()
                    session.send_frame(frames[i % len(frames)])
                    session.ask(CASTER_QUESTION, max_tokens=16)
                    latencies.append((time.perf_counter() - start) * 1000)
                i += 1
    except Exception as e:  # reported after the run: a caster that failed invalidates the row
        failures.append(repr(e))


class MatchRun:
    """One kvframe-holdem process; a thread timestamps each LLM decision as its line arrives."""

    def __init__(self, cmd, log_path):
        self.log_path, self.decided_at = log_path, []
        self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        errors="replace")
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        with open(self.log_path, "w") as log:
            for line in self.process.stderr:  # with --json, hand and decision lines come on stderr
                if " (llm) " in line:
                    self.decided_at.append(time.perf_counter())
                log.write(line)


def play(holdem, endpoint, n, pace, seed, args, work, tag, casters=()):
    """N matches at once (and the casters while they play); returns a row's measurements."""
    stop, caster_ms, failures, threads = threading.Event(), [], [], []
    for c, (frames, rules) in enumerate(casters):
        threads.append(threading.Thread(target=caster, args=(endpoint, frames, rules, c, stop, caster_ms, failures)))
        threads[-1].start()
    try:
        row = play_matches(holdem, endpoint, n, pace, seed, args, work, tag)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    if failures:
        raise RuntimeError(f"a caster failed: {failures[0]}")
    row.update(casters=len(caster_ms), caster_p50=percentile(caster_ms, 50) if caster_ms else 0)
    return row


def play_matches(holdem, endpoint, n, pace, seed, args, work, tag):
    runs = []
    start = time.perf_counter()
    for m in range(n):
        page = os.path.join(work, f"{tag}-{m}.html")
        cmd = [holdem, "--server", endpoint, "--bots", "llm,tag,station,random", "--hands", str(args.hands),
               "--history", str(args.history), "--seed", str(seed + m), "--pace-ms", str(pace),
               "--commentary", "off", "--replay-html", page, "--json"]
        runs.append((MatchRun(cmd, os.path.join(work, f"{tag}-{m}.log")), page))
    deadline = start + args.run_timeout if args.run_timeout > 0 else float("inf")
    try:
        while any(run.process.poll() is None for run, _ in runs):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the run took longer than --run-timeout {args.run_timeout} s")
            time.sleep(0.05)
    finally:
        for run, _ in runs:
            if run.process.poll() is None:
                run.process.kill()
            run.process.wait()
            run.reader.join()
    wall = time.perf_counter() - start
    ttft, total, encoded, superseded, prompt, pauses = [], [], [], [], [], 0
    for run, page in runs:
        if run.process.returncode != 0:
            raise RuntimeError(f"kvframe-holdem exited {run.process.returncode}: {tail(run.log_path, 1000)}")
        html = open(page).read()
        record = json.loads(re.search(r'<script id="record" type="application/json">(.*?)</script>', html, re.S).group(1))
        samples = [d["samples"]["block"] for d in record["decisions"]]
        ttft += [s["ttft_ms"] for s in samples]
        total += [s["total_ms"] for s in samples]
        encoded += [s["tokens_encoded"] for s in samples]
        superseded += [s["tokens_encoded_superseded"] for s in samples]
        prompt += [s["tokens_prompt"] for s in samples]
        # The table pauses before every player's action (blinds have no seat) and after each result.
        pauses += sum(1 for h in record["hands"] for step in h["steps"] if "seat" in step) + len(record["hands"])
    per_s, starvation = decision_rates([run.decided_at for run, _ in runs], len(total), wall)
    return {"matches": n, "pace": pace, "decisions": len(total), "per_s": per_s, "per_match": per_s / n,
            "ttft_p50": percentile(ttft, 50), "ttft_p99": percentile(ttft, 99),
            "p50": percentile(total, 50), "p99": percentile(total, 99), "starvation": starvation,
            "encoded": sum(encoded) / max(1, len(encoded)),
            "superseded": sum(superseded) / max(1, len(superseded)), "prompt": sum(prompt) / max(1, len(prompt)),
            "wall_s": wall, "pauses": pauses}


def decision_rates(decided_at, decisions, wall):
    """Decisions/s of all matches together and the slowest match's rate over the
    fastest's, counted while every match plays: from the last match's first
    decision to the first match's last one. Matches start at different times
    (each process takes a while to start), their first decision encodes a cold
    frame, and one that plays on alone is served faster, so none of that
    counts. Without such a window (a match of one decision) the rate is over
    the run's wall time and starvation is nan."""
    if all(len(times) >= 2 for times in decided_at):
        begin, end = max(times[0] for times in decided_at), min(times[-1] for times in decided_at)
        if end > begin:
            rates = [sum(1 for t in times if begin < t <= end) / (end - begin) for times in decided_at]
            return sum(rates), (min(rates) / max(rates) if max(rates) > 0 else float("nan"))
    return decisions / wall, float("nan")


def auto_pace(warmup, rate):
    """The pace (ms) at which a match of the warm-up's play comes to `rate` decisions a second."""
    per_decision = warmup["pauses"] / max(1, warmup["decisions"])
    # At least 1 ms: a match that cannot ask that often still streams its frames, unlike pace 0.
    pace = max(1, round((1000 / rate - warmup["p50"]) / per_decision))
    print(f"bench_serving: pace auto = {pace} ms ({warmup['decisions']} decisions unpaced, "
          f"{per_decision:.1f} pauses and p50 {warmup['p50']:.0f} ms each)", file=sys.stderr, flush=True)
    return pace


def run_all(args, counts, paces, configs, save):
    """Every run; a failed one stops its pace and configuration. `save(rows, failures)` after each."""
    serve = os.path.join(args.build, "server", "kvframe-serve")
    holdem = os.path.join(args.build, "tools", "kvframe-holdem-client")  # no libtorch: starts in milliseconds
    work = args.work or tempfile.mkdtemp(prefix="bench_serving-")
    os.makedirs(work, exist_ok=True)
    print(f"bench_serving: logs in {work}", file=sys.stderr, flush=True)
    casters = []
    if args.casters:
        frames = moba_frames(os.path.join(args.build, "tools", "kvframe-stream"), work, 2 * args.casters)
        rules = open(os.path.join(ROOT, "examples", "moba", "moba.rules.json")).read()
        casters = [(frames[c::args.casters], rules) for c in range(args.casters)]
    # Each server's life: one per N and configuration, alternating (every configuration meets the
    # same load); --one-server: one per configuration for every N (one model load each).
    lives = [(config, counts) for config in configs] if args.one_server else \
        [(config, [n]) for n in counts for config in configs]
    rows, failures, stopped = [], [], set()

    def fail(what, e, stop):
        failures.append(f"{what}: {e}")
        stopped.update(stop)
        print(f"bench_serving: {failures[-1]}", file=sys.stderr, flush=True)
        save(rows, failures)

    for config, ns in lives:
        if all((pace, config) in stopped for pace in paces):
            continue
        t, step, blas = config
        name = f"together {t}, step {step}, OpenBLAS {blas}"
        try:
            server, endpoint = start_server(serve, work, config, max(ns), args)
        except RuntimeError as e:
            fail(f"{ns[0]} matches, {name}", e, {(pace, config) for pace in paces})
            continue
        try:
            hands = args.hands if "auto" in paces else 1
            warmup = play(holdem, endpoint, 1, 0, WARMUP_SEED, argparse.Namespace(**{**vars(args), "hands": hands}),
                          work, f"warmup-m{ns[0]}-t{t}-s{step}-{blas}")
            paces = [auto_pace(warmup, args.rate) if pace == "auto" else pace for pace in paces]
        except RuntimeError as e:
            fail(f"{ns[0]} matches, {name}: warm-up", e, {(pace, config) for pace in paces})
            ns = []
        try:
            for n in ns:
                for p, pace in enumerate(paces):
                    if (pace, config) in stopped:
                        continue
                    try:  # seeds differ per pace: the server's block store must not have seen the match
                        row = play(holdem, endpoint, n, pace, 7000 + 1000 * p, args, work,
                                   f"m{n}-p{pace}-t{t}-s{step}-{blas}", casters)
                    except RuntimeError as e:
                        fail(f"{n} matches, pace {pace} ms, {name}", e, {(pace, config)})
                        continue
                    row["config"] = list(config)
                    rows.append(row)
                    save(rows, failures)
                    print(f"  {n} match{'es' if n > 1 else ''}, pace {pace} ms, {name}: {row['decisions']} decisions in "
                          f"{row['wall_s']:.1f} s, {row['per_s']:.2f}/s, p99 {row['p99']:.0f} ms"
                          + (f", {row['casters']} casters answered" if casters else ""), file=sys.stderr, flush=True)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    return rows, failures


def print_table(rows, casters):
    base = {}
    for r in rows:  # "vs first": against the smallest N of the same pace and configuration
        base.setdefault((r["pace"], tuple(r["config"])), r["per_s"])
    caster_head = f" {'casters':>7} {'caster p50':>10}" if casters else ""
    print(f"{'matches':>7} {'pace ms':>7} {'together':>8} {'step':>5} {'OpenBLAS':>8} {'decisions':>9} {'dec/s':>7} "
          f"{'dec/s/match':>11} {'vs first':>8} {'ttft p50':>8} {'ttft p99':>8} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'slowest/fastest':>15} {'tokens/decision':>15} {'streamed before':>15} {'prompt tokens':>13}" +
          caster_head)
    for r in rows:
        t, step, blas = r["config"]
        caster_cols = f" {r['casters']:>7} {r['caster_p50']:>10.0f}" if casters else ""
        print(f"{r['matches']:>7} {r['pace']:>7} {t:>8} {step:>5} {blas:>8} {r['decisions']:>9} {r['per_s']:>7.2f} "
              f"{r['per_match']:>11.2f} {r['per_s'] / base[(r['pace'], tuple(r['config']))]:>7.2f}x "
              f"{r['ttft_p50']:>8.0f} {r['ttft_p99']:>8.0f} {r['p50']:>8.0f} {r['p99']:>8.0f} "
              f"{r['starvation']:>15.2f} {r['encoded']:>15.0f} {r['superseded']:>15.0f} {r['prompt']:>13.0f}" +
              caster_cols)


def summaries(rows, p99_goal):
    """The issue's must-show lines: unpaced 4 matches against 1; per pace, the largest N within the p99 goal."""
    lines, groups = [], {}
    for r in rows:
        groups.setdefault((r["pace"], tuple(r["config"])), {})[r["matches"]] = r
    for (pace, (t, step, blas)), by_n in groups.items():
        name = f"together {t}, step {step}" + (f", OpenBLAS {blas}" if blas != "system" else "")
        if pace == 0:
            if 1 in by_n and 4 in by_n:
                one, four = by_n[1], by_n[4]
                lines.append(f"unpaced, {name}: 4 matches vs 1: decisions/s {four['per_s'] / one['per_s']:.2f}x "
                             f"(goal >= 2.5x), p50 {four['p50'] / one['p50']:.2f}x (goal <= 1.5x)")
            continue
        within = [n for n, r in sorted(by_n.items()) if r["p99"] <= p99_goal]
        rate = by_n[min(by_n)]["per_match"]  # the pace's own rate: at the fewest matches, where none waits
        if within:
            best = by_n[within[-1]]
            lines.append(f"paced {pace} ms (~{rate:.2f} decisions/s a match), {name}: largest N with p99 <= "
                         f"{p99_goal:.0f} ms: {within[-1]} (of {','.join(map(str, sorted(by_n)))}; p99 "
                         f"{best['p99']:.0f} ms, {best['encoded']:.0f} tokens encoded per decision and "
                         f"{best['superseded']:.0f} on the frames streamed before it)")
        else:
            lines.append(f"paced {pace} ms (~{rate:.2f} decisions/s a match), {name}: no N with p99 <= "
                         f"{p99_goal:.0f} ms (of {','.join(map(str, sorted(by_n)))})")
    return lines


def plot(path, rows, title):
    counts = sorted({r["matches"] for r in rows})
    series = {}
    for r in rows:
        t, step, blas = r["config"]
        name = f"pace {r['pace']} ms, together {t}, step {step}" + (f", OpenBLAS {blas}" if blas != "system" else "")
        series.setdefault(name, {})[r["matches"]] = r["per_s"]
    labels = [f"{n} match{'es' if n > 1 else ''}" for n in counts]
    return bar_chart(path, title, "decisions / s", labels,
                     {name: [by_n.get(n, 0.0) for n in counts] for name, by_n in series.items()})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="kvframe's build folder")
    parser.add_argument("--matches", default="1,2,4", help="matches played at once")
    parser.add_argument("--paces", default="0",
                        help="kvframe-holdem --pace-ms values: 0 unpaced, auto: --rate decisions/s a match")
    parser.add_argument("--rate", type=float, default=1.0, help="decisions a second a match at pace auto")
    parser.add_argument("--together", default="1,8", help="--max-sessions-together values to compare")
    parser.add_argument("--step-tokens", default="0", help="--step-tokens values to compare")
    parser.add_argument("--openblas", default="system",
                        help="the server's OpenBLAS builds to compare: system, openmp, pthread, serial")
    parser.add_argument("--casters", type=int, default=0, help="newcomers with cold ~6K-token MOBA frames meanwhile")
    parser.add_argument("--hands", type=int, default=6, help="hands per match")
    parser.add_argument("--history", type=int, default=10, help="hands of history in the gamecore")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="server threads")
    parser.add_argument("--model", default="", help="the server's GGUF model (default: its default model)")
    parser.add_argument("--lora", default="", help="the server's --lora (none for a model without adapters)")
    parser.add_argument("--one-server", action="store_true",
                        help="one server per configuration for every N (one model load), not one per N and configuration")
    parser.add_argument("--load-timeout", type=float, default=300, help="seconds the server may take to load")
    parser.add_argument("--run-timeout", type=float, default=0,
                        help="seconds one run (N matches at one pace) may take; past it larger N are skipped (0: none)")
    parser.add_argument("--p99-goal", type=float, default=600, help="paced: the largest N with p99 within this, ms")
    parser.add_argument("--json", default="", help="also write the rows to this JSON file (after every run)")
    parser.add_argument("--work", default="", help="the folder for the logs and replays (default: a new temporary one)")
    parser.add_argument("--from-json", default="", help="run nothing: print the table, summaries and plot of a --json file")
    parser.add_argument("--title", default="", help="the plot's title (default: from --model and the server options)")
    parser.add_argument("--plot", default="bench_serving.png", help="PNG to write ('' for none)")
    parser.add_argument("serve_args", nargs="*", metavar="-- KVFRAME-SERVE OPTIONS",
                        help="more kvframe-serve options after --, e.g. -- --device cuda --dtype bf16")
    args = parser.parse_args()

    if args.from_json:
        saved = json.load(open(args.from_json))
        rows, failures, casters, title = saved["rows"], saved["failures"], saved["casters"], saved["title"]
    else:
        counts = [int(m) for m in args.matches.split(",")]
        paces = [p if p == "auto" else int(p) for p in args.paces.split(",")]
        configs = [(int(t), int(s), b) for t in args.together.split(",") for s in args.step_tokens.split(",")
                   for b in args.openblas.split(",")]
        casters = args.casters
        device = "GPU" if any(a.startswith("cuda") for a in args.serve_args) else "CPU"
        title = args.title or (f"Hold'em matches against one kvframe-serve "
                               f"({os.path.basename(args.model) if args.model else 'default model'}, {device})")

        def save(rows, failures):  # after every run: a run stopped from outside keeps what it measured
            if args.json:
                with open(args.json + ".tmp", "w") as out:
                    json.dump({"command": sys.argv, "rows": rows, "failures": failures, "casters": casters,
                               "title": title}, out, indent=1)
                os.replace(args.json + ".tmp", args.json)

        # SIGTERM (a time limit from outside, as the GPU-host scripts set) unwinds like an error:
        # the matches and the server are stopped on the way out, and --json holds the runs done.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(exit_codes.RUN_FAILED))
        rows, failures = run_all(args, counts, paces, configs, save)
    if rows:
        print_table(rows, casters)
        for line in summaries(rows, args.p99_goal):
            print(line)
    for failure in failures:
        print(f"failed: {failure}")
    if args.plot and rows and plot(args.plot, rows, title):
        print(f"plot: {args.plot}", file=sys.stderr)
    return exit_codes.RUN_FAILED if failures else 0


if __name__ == "__main__":
    sys.exit(main())
