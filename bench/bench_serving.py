#!/usr/bin/env python3
"""Many matches against one kvframe-serve: decisions per second and latency.

Starts one `kvframe-serve` (the default model) per configuration and plays N
Hold'em matches at once against it (`kvframe-holdem --server`, the LLM bot
against the three rule bots, block mode, each match its own process and
seed), for N in --matches. Per N: decisions per second of all matches
together, each decision's latency (frame sent to whole action) p50 / p99,
starvation (the slowest match's decision rate over the fastest's, while all
of them play) and the tokens encoded per decision.

Configurations differ in `--max-sessions-together` (1 runs one session's
request per engine turn, more lets waiting sessions' answers decode together,
one pass a step for all) and `--step-tokens` (0 encodes a frame whole in one
engine turn; N encodes at most N tokens of one session's frame per turn, the
other sessions' requests running between the steps), and with `--openblas`
in the server's OpenBLAS build (`system`: the one the system selects, the
`openmp` build after scripts/setup.sh; or `pthread`, `openmp`, `serial`,
found in /usr/lib/<multiarch>/openblas-<build>/ and put first on the
server's LD_LIBRARY_PATH; docs/runtime.md, "CPU speed"). Configurations alternate per N
so they meet the same machine load.

`--casters K` adds K newcomers: each, on its own connection, opens a block
session with a cold MOBA frame of ~6K tokens (`kvframe-stream --population
0.035`, a new seed each time), asks the caster's question, closes it and
starts over, for as long as the matches play — the long prefill that, encoded
whole, holds every match's decision behind it. Their answers' latency (frame
sent to answer) is reported beside the matches'. Needs the kvframe Python
package importable (adapters/python/README.md: a venv, or PYTHONPATH).

    python3 bench/bench_serving.py                            # matches 1,2,4; together 1,8
    python3 bench/bench_serving.py --matches 1,4,8 --hands 4 --together 1,8
    python3 bench/bench_serving.py --matches 1,4 --together 1 --step-tokens 1024 --openblas openmp,pthread
    /tmp/venv/bin/python bench/bench_serving.py --matches 4 --together 1 --step-tokens 0,256 --casters 1

Prints a table and writes a PNG plot (gnuplot). Exit codes: docs/tools.md (3: a run failed).
"""
import argparse
import itertools
import json
import os
import re
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


def openblas_folder(build):
    """Debian's folder of an OpenBLAS build ('openmp', 'pthread', 'serial'); '' for the system's choice."""
    if build == "system":
        return ""
    multiarch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True, check=True).stdout.strip()
    folder = f"/usr/lib/{multiarch}/openblas-{build}"
    if not os.path.exists(os.path.join(folder, "libopenblas.so.0")):
        raise SystemExit(f"bench_serving: no OpenBLAS '{build}' build in {folder} (apt-get install libopenblas0-{build})")
    return folder


def start_server(serve, work, together, step, blas, threads, model=""):
    ready = os.path.join(work, f"ready-{together}-{step}-{blas}-{time.monotonic_ns()}")
    log = open(os.path.join(work, f"serve-{together}-{step}-{blas}.log"), "a")
    env = dict(os.environ)
    folder = openblas_folder(blas)
    if folder:
        env["LD_LIBRARY_PATH"] = folder + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    process = subprocess.Popen([serve, "--bind", "tcp://127.0.0.1:0", "--ready-file", ready, "--threads", str(threads),
                                "--max-sessions-together", str(together), "--step-tokens", str(step)]
                               + (["--model", model] if model else []),
                                stdout=log, stderr=log, env=env)
    deadline = time.time() + 120
    while not os.path.exists(ready):
        if process.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"kvframe-serve did not start (log in {work})")
        time.sleep(0.1)
    return process, open(ready).read().strip()


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


def play(holdem, endpoint, matches, hands, history, work, tag, casters=()):
    """N matches at once (and the casters while they play); returns (wall seconds,
    per-match decision latencies, per-match decision rates, tokens encoded per
    decision, caster latencies)."""
    stop, caster_ms, failures, threads = threading.Event(), [], [], []
    for c, (frames, rules) in enumerate(casters):
        threads.append(threading.Thread(target=caster, args=(endpoint, frames, rules, c, stop, caster_ms, failures)))
        threads[-1].start()
    try:
        return play_matches(holdem, endpoint, matches, hands, history, work, tag) + (caster_ms,)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        if failures:
            raise RuntimeError(f"a caster failed: {failures[0]}")


def play_matches(holdem, endpoint, matches, hands, history, work, tag):
    runs = []
    start = time.perf_counter()
    for m in range(matches):
        page = os.path.join(work, f"{tag}-{m}.html")
        log = open(os.path.join(work, f"{tag}-{m}.log"), "w")
        cmd = [holdem, "--server", endpoint, "--bots", "llm,tag,station,random", "--hands", str(hands),
               "--history", str(history), "--seed", str(7000 + m), "--commentary", "off", "--replay-html", page, "--json"]
        runs.append((subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log), page, log.name))
    ends = [None] * matches
    while None in ends:  # each match's own end, whichever order they end in
        for m, (process, _, _) in enumerate(runs):
            if ends[m] is None and process.poll() is not None:
                ends[m] = time.perf_counter()
        time.sleep(0.02)
    latencies, encoded = [], []
    for process, page, log in runs:
        if process.returncode != 0:
            raise RuntimeError(f"kvframe-holdem exited {process.returncode}: {open(log).read()[-1000:]}")
        html = open(page).read()
        record = json.loads(re.search(r'<script id="record" type="application/json">(.*?)</script>', html, re.S).group(1))
        latencies.append([d["samples"]["block"]["total_ms"] for d in record["decisions"]])
        encoded.extend(d["samples"]["block"]["tokens_encoded"] for d in record["decisions"])
    wall = max(ends) - start
    # Each match's decision rate while every match still plays (until the
    # first ends): matches differ in how many decisions their cards ask for,
    # and one that plays on alone afterwards is served faster. A decision's
    # end is taken as the sum of its match's latencies so far (the rule bots'
    # own moves take microseconds).
    window = min(ends) - start
    rates = [sum(1 for t in itertools.accumulate(lat) if t <= window * 1000) / window for lat in latencies]
    return wall, latencies, rates, sum(encoded) / max(1, len(encoded))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="kvframe's build folder")
    parser.add_argument("--matches", default="1,2,4", help="matches played at once")
    parser.add_argument("--together", default="1,8", help="--max-sessions-together values to compare")
    parser.add_argument("--step-tokens", default="0", help="--step-tokens values to compare")
    parser.add_argument("--openblas", default="system",
                        help="the server's OpenBLAS builds to compare: system, openmp, pthread, serial")
    parser.add_argument("--casters", type=int, default=0, help="newcomers with cold ~6K-token MOBA frames meanwhile")
    parser.add_argument("--hands", type=int, default=6, help="hands per match")
    parser.add_argument("--history", type=int, default=10, help="hands of history in the gamecore")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="server threads")
    parser.add_argument("--model", default="", help="the server's GGUF model (default: its default model)")
    parser.add_argument("--plot", default="bench_serving.png",
                        help="PNG to write ('' for none)")
    args = parser.parse_args()
    serve = os.path.join(args.build, "server", "kvframe-serve")
    holdem = os.path.join(args.build, "tools", "kvframe-holdem")
    work = tempfile.mkdtemp(prefix="bench_serving-")
    configs = [(int(t), int(s), b) for t in args.together.split(",") for s in args.step_tokens.split(",")
               for b in args.openblas.split(",")]
    counts = [int(m) for m in args.matches.split(",")]
    casters = []
    if args.casters:
        frames = moba_frames(os.path.join(args.build, "tools", "kvframe-stream"), work, 2 * args.casters)
        rules = open(os.path.join(ROOT, "examples", "moba", "moba.rules.json")).read()
        casters = [(frames[c::args.casters], rules) for c in range(args.casters)]

    rows = []
    for n in counts:
        for t, step, blas in configs:  # alternating: every configuration meets the same load
            server, endpoint = start_server(serve, work, t, step, blas, args.threads, args.model)
            try:
                wall, latencies, rates, encoded, caster_ms = play(holdem, endpoint, n, args.hands, args.history, work,
                                                         f"m{n}-t{t}-s{step}-{blas}", casters)
            except RuntimeError as e:
                print(f"bench_serving: {e}", file=sys.stderr)
                return exit_codes.RUN_FAILED
            finally:
                server.terminate()
                server.wait(timeout=30)
            flat = [x for lat in latencies for x in lat]
            rows.append({"matches": n, "config": (t, step, blas), "decisions": len(flat), "per_s": len(flat) / wall,
                         "p50": percentile(flat, 50), "p99": percentile(flat, 99),
                         "starvation": min(rates) / max(rates) if max(rates) > 0 else float("nan"),
                         "encoded": encoded,
                         "casters": len(caster_ms), "caster_p50": percentile(caster_ms, 50) if caster_ms else 0})
            print(f"  {n} matches, together {t}, step {step}, OpenBLAS {blas}: {len(flat)} decisions in {wall:.1f} s"
                  + (f", {len(caster_ms)} casters answered" if casters else ""), file=sys.stderr, flush=True)

    base = {r["config"]: r["per_s"] for r in rows if r["matches"] == counts[0]}
    caster_head = f" {'casters':>7} {'caster p50':>10}" if casters else ""
    print(f"{'matches':>7} {'together':>8} {'step':>5} {'OpenBLAS':>8} {'decisions':>9} {'dec/s':>7} {'vs first':>8} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'slowest/fastest':>15} {'tokens/decision':>15}" + caster_head)
    for r in rows:
        t, step, blas = r["config"]
        caster_cols = f" {r['casters']:>7} {r['caster_p50']:>10.0f}" if casters else ""
        print(f"{r['matches']:>7} {t:>8} {step:>5} {blas:>8} {r['decisions']:>9} {r['per_s']:>7.2f} "
              f"{r['per_s'] / base[r['config']]:>7.2f}x {r['p50']:>8.0f} {r['p99']:>8.0f} {r['starvation']:>15.2f} {r['encoded']:>15.0f}"
              + caster_cols)
    if args.plot:
        labels = [f"{n} match{'es' if n > 1 else ''}" for n in counts]
        series = {f"decisions/s, together {t}, step {step}, OpenBLAS {blas}":
                  [r["per_s"] for r in rows if r["config"] == (t, step, blas)] for t, step, blas in configs}
        bar_chart(args.plot, "Hold'em matches against one kvframe-serve (default model, CPU)", "decisions / s",
                  labels, series)
        print(f"plot: {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
