#!/usr/bin/env python3
"""The game case: kvframe's block mode against llama-server on the same prompts.

A game sends its whole state every frame and asks for a schema-constrained
action. This bench plays two ≥4K-token streams — a MOBA match
(`kvframe-stream`) and one seat's decisions at a Hold'em table
(`kvframe-holdem --dataset`) — through both, frame by frame, alternating so
both meet the same machine load:

  - kvframe: `kvframe-serve` (block mode, the same GGUF, no adapter), the
    frame's JSON sent whole, then the question with its action schema
    (streamed), through the Python client (adapters/python);
  - llama.cpp: `llama-server` (built by build-llama-cpp.sh from the pinned
    llama-cpp-python sdist) in its best configuration for games: one slot,
    `cache_prompt`, `--cache-reuse 256` (reuse shifted chunks of the cached
    prompt), and the frame's volatile parts last — the prompt is the same
    text kvframe's model reads (system turn, one "<path>: <json>" line per
    block from `kvframe-blocks --text`, the question), with every block that
    changes anywhere in the run placed after those that never do (decided
    over the whole run in advance: the best a fixed layout can do); the
    action constrained by the same schema (`json_schema`).

Per frame: time to first token and to the whole action (from sending the
frame), and tokens the model evaluated for it (kvframe: Report.tokens_encoded;
llama.cpp: timings.prompt_n). Prints a table per game and writes a PNG.

    bench/peers/bench_game_peer.py                     # both games, 12 frames each
    bench/peers/bench_game_peer.py --games moba --frames 20 --threads 2

Runs in a Python that has the kvframe package; otherwise it makes one
(build/bench-venv: Debian's python3 with --system-site-packages, the package
installed from adapters/python without downloads) and re-runs itself there.
Exit codes: 0 measured, 2 a missing program or model, 3 a run failed.
"""
import argparse
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
from bar_chart import bar_chart  # noqa: E402  (bench/bar_chart.py)
from sample_stats import percentile  # noqa: E402  # bench/sample_stats.py

DEFAULT_MODEL = os.path.expanduser("~/.cache/kvframe/models/SmolLM2-135M-Instruct.Q4_1.gguf")
MOBA_SYSTEM = "You command a hero in a MOBA match. The game state is JSON. Answer with the hero's next move as JSON."
MOBA_QUESTION = "You are hero h1. Choose your next move and its lane."
MOBA_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["move", "lane"],
               "properties": {"move": {"enum": ["attack", "retreat", "farm", "push", "defend", "shop"]},
                              "lane": {"enum": ["top", "mid", "bot"]}}}


def log(message):
    print(f"[peers] {message}", file=sys.stderr, flush=True)


def ensure_kvframe_package():
    """Re-runs this script in a venv with the kvframe package when this Python lacks it."""
    if importlib.util.find_spec("kvframe") is not None:
        return
    venv = os.path.join(ROOT, "build", "bench-venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        log(f"making {venv} with the kvframe package (adapters/python)")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", "--no-build-isolation",
                        os.path.join(ROOT, "adapters", "python")], check=True)
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])



# --- the games' frames -------------------------------------------------------

def moba_frames(stream, work, count, population):
    folder = os.path.join(work, "moba")
    subprocess.run([stream, "--frames", str(count), "--population", str(population), "--write", folder],
                   check=True, capture_output=True)
    rules = os.path.join(ROOT, "examples", "moba", "moba.rules.json")
    return [{"frame": open(os.path.join(folder, f"frame_{i:04d}.json")).read(), "system": MOBA_SYSTEM,
             "question": MOBA_QUESTION, "schema": MOBA_SCHEMA} for i in range(count)], rules


def holdem_frames(holdem, work, count, history):
    data = os.path.join(work, "holdem.jsonl")
    subprocess.run([holdem, "--bots", "tag,station,random,tag", "--hands", str(history + 20), "--seed", "1",
                    "--history", str(history), "--commentary", "off", "--dataset", data],
                   check=True, capture_output=True)
    mine = [json.loads(line) for line in open(data)]
    mine = [r for r in mine if "frame" in r and "-p1-" in r["id"]][-count:]  # the last ones: history full
    rules = os.path.join(work, "rules.json")  # kvframe-holdem writes the rules beside its dataset
    return [{"frame": json.dumps(r["frame"], separators=(",", ":")), "system": r["system"],
             "question": r["instruction"], "schema": json.loads(r["schema"]) if isinstance(r["schema"], str)
             else r["schema"]} for r in mine], rules


def block_texts(blocks_tool, rules, frame_json, work):
    path = os.path.join(work, "frame.json")
    with open(path, "w") as f:
        f.write(frame_json)
    out = subprocess.run([blocks_tool, path, "--rules", rules, "--json", "--text"], check=True,
                         capture_output=True, text=True).stdout
    return [(b["id"], b["text"]) for b in json.loads(out)["blocks"]]


def volatile_last_order(frames_blocks):
    """llama.cpp's best case: the blocks that change anywhere in the run (or
    appear after its first frame) placed after those that never do, decided
    over the whole run in advance, as a developer who knows the game's
    volatile fields would lay out the prompt. Returns each frame's texts."""
    first = {block_id for block_id, _ in frames_blocks[0]}
    seen, volatile = {}, set()
    for blocks in frames_blocks:
        for block_id, text in blocks:
            if block_id not in first or (block_id in seen and seen[block_id] != text):
                volatile.add(block_id)
            seen[block_id] = text
    return [[t for i, t in blocks if i not in volatile] + [t for i, t in blocks if i in volatile]
            for blocks in frames_blocks]


def chatml(system, texts, question):
    """The prompt as kvframe's model reads it (SmolLM2's ChatML template)."""
    body = "".join(text + "\n" for text in texts)
    return (f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{body}{question}<|im_end|>\n"
            "<|im_start|>assistant\n")


# --- the two servers ---------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    def __init__(self, binary, model, threads, context, log_path):
        self.port = free_port()
        self.process = subprocess.Popen(
            [binary, "-m", model, "-t", str(threads), "-c", str(context), "-np", "1", "--cache-reuse", "256",
             "--host", "127.0.0.1", "--port", str(self.port), "--no-webui"],
            stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"llama-server did not become healthy (log: {log_path})")

    def act(self, prompt, schema, max_tokens):
        body = json.dumps({"prompt": prompt, "n_predict": max_tokens, "temperature": 0, "cache_prompt": True,
                           "stream": True, "json_schema": schema}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/completion", data=body,
                                         headers={"Content-Type": "application/json"})
        start = time.perf_counter()
        first, text, timings = None, "", {}
        with urllib.request.urlopen(request, timeout=600) as response:
            for raw in response:
                line = raw.decode().strip()
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                if event.get("content") and first is None:
                    first = time.perf_counter()
                text += event.get("content", "")
                if event.get("stop"):
                    timings = event.get("timings", {})
        end = time.perf_counter()
        return {"ttft": ((first or end) - start) * 1e3, "total": (end - start) * 1e3,
                "evaluated": timings.get("prompt_n", 0), "answer": text}

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


class KvframeServer:
    def __init__(self, binary, model, threads, log_path):
        import kvframe
        self.kvframe = kvframe
        self.process = kvframe.ServerProcess(binary, model=model, log_path=log_path,
                                             args=["--mode", "block", "--lora", "none", "--threads", str(threads)])
        self.client = kvframe.Client.connect(self.process.start(), request_timeout=600)
        self.sessions = {}

    def act(self, game, rules, item, max_tokens, context):
        kv = self.kvframe
        if game not in self.sessions:
            self.sessions[game] = self.client.open_session(game, rules=open(rules).read(), mode=kv.Mode.BLOCK,
                                                           system_prompt=item["system"], context_tokens=context)
        session = self.sessions[game]
        start = time.perf_counter()
        session.send_frame(item["frame"])
        query = session.query(item["question"], kind=kv.TaskKind.NPC_ACTION, schema=item["schema"],
                              max_tokens=max_tokens, stream=True)
        first = None
        for _ in query:
            first = first or time.perf_counter()
        answer = query.result()
        end = time.perf_counter()
        return {"ttft": ((first or end) - start) * 1e3, "total": (end - start) * 1e3,
                "evaluated": answer.report.tokens_encoded, "context": answer.report.context_tokens,
                "answer": answer.action_json or answer.text}

    def stop(self):
        self.client.close()
        self.process.stop()


def summarize(rows, key):
    values = [r[key] for r in rows]
    return percentile(values, 50), percentile(values, 99), sum(values) / len(values)


def same_action(a, b):
    try:
        return json.loads(a) == json.loads(b)
    except ValueError:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL, help="GGUF model (default: kvframe's default model)")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="kvframe's build folder")
    parser.add_argument("--llama-bin", default="", help="llama.cpp's bin folder (default: build it, cached)")
    parser.add_argument("--games", default="moba,holdem", help="moba, holdem or both")
    parser.add_argument("--frames", type=int, default=12, help="frames per game (the first, cold, is left out)")
    parser.add_argument("--moba-population", type=float, default=0.02, help="MOBA size (0.02: ~5K tokens)")
    parser.add_argument("--holdem-history", type=int, default=30, help="Hold'em hands of history (30: ~5K tokens)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="threads for both (default: all cores)")
    parser.add_argument("--max-tokens", type=int, default=32, help="most tokens of an action")
    parser.add_argument("--context", type=int, default=8192, help="context tokens for both")
    parser.add_argument("--plot", default="bench_game_peer.png",
                        help="PNG to write (empty: none)")
    parser.add_argument("--json", default="", help="also write every frame's figures to this JSON file")
    args = parser.parse_args()
    ensure_kvframe_package()

    tools = {name: os.path.join(args.build, sub, name) for name, sub in
             (("kvframe-serve", "server"), ("kvframe-stream", "tools"), ("kvframe-holdem", "tools"),
              ("kvframe-blocks", "tools"))}
    for path in [args.model] + list(tools.values()):
        if not os.path.exists(path):
            log(f"missing {path} (build kvframe; scripts/fetch-model.sh fetches the default model)")
            return 2
    llama_bin = args.llama_bin or subprocess.run([os.path.join(HERE, "build-llama-cpp.sh")], check=True,
                                                 capture_output=True, text=True).stdout.strip()

    work = tempfile.mkdtemp(prefix="bench_game_peer-")
    games = {}
    for game in args.games.split(","):
        if game == "moba":
            games[game] = moba_frames(tools["kvframe-stream"], work, args.frames + 1, args.moba_population)
        elif game == "holdem":
            games[game] = holdem_frames(tools["kvframe-holdem"], work, args.frames + 1, args.holdem_history)
        else:
            log(f"unknown game {game}: moba or holdem")
            return 2

    log(f"starting llama-server and kvframe-serve ({args.threads} threads each; logs in {work})")
    llama = LlamaServer(os.path.join(llama_bin, "llama-server"), args.model, args.threads, args.context,
                        os.path.join(work, "llama-server.log"))
    ours = KvframeServer(tools["kvframe-serve"], args.model, args.threads, os.path.join(work, "kvframe-serve.log"))
    results = {}
    try:
        for game, (items, rules) in games.items():
            ordered = volatile_last_order([block_texts(tools["kvframe-blocks"], rules, item["frame"], work)
                                           for item in items])
            rows = []
            for i, (item, texts) in enumerate(zip(items, ordered)):
                a = ours.act(game, rules, item, args.max_tokens, args.context)
                b = llama.act(chatml(item["system"], texts, item["question"]), item["schema"], args.max_tokens)
                log(f"{game} frame {i}: kvframe {a['ttft']:.0f}/{a['total']:.0f} ms, {a['evaluated']} tokens; "
                    f"llama.cpp {b['ttft']:.0f}/{b['total']:.0f} ms, {b['evaluated']} tokens")
                if i > 0:  # frame 0 is cold for both
                    rows.append({"kvframe": a, "llama": b, "agree": same_action(a["answer"], b["answer"])})
            results[game] = rows
    finally:
        ours.stop()
        llama.stop()

    print(f"{'game':<7} {'':<10} {'ttft p50':>9} {'ttft p99':>9} {'action p50':>11} {'action p99':>11} "
          f"{'tokens/frame':>13}")
    labels, plot_rows = [], {"kvframe block": [], "llama.cpp best": []}
    for game, rows in results.items():
        stats = {}
        for side in ("kvframe", "llama"):
            side_rows = [r[side] for r in rows]
            t50, t99, _ = summarize(side_rows, "ttft")
            a50, a99, _ = summarize(side_rows, "total")
            _, _, tokens = summarize(side_rows, "evaluated")
            stats[side] = (t50, t99, a50, a99, tokens)
            name = "kvframe" if side == "kvframe" else "llama.cpp"
            print(f"{game:<7} {name:<10} {t50:>7.0f}ms {t99:>7.0f}ms {a50:>9.0f}ms {a99:>9.0f}ms {tokens:>13.0f}")
        k, l = stats["kvframe"], stats["llama"]
        context = sum(r["kvframe"]["context"] for r in rows) / len(rows)
        agree = sum(r["agree"] for r in rows)
        print(f"{game:<7} {'ratio':<10} {l[0] / k[0]:>8.1f}x {l[1] / k[1]:>8.1f}x {l[2] / k[2]:>10.1f}x "
              f"{l[3] / k[3]:>10.1f}x {l[4] / max(k[4], 1):>12.1f}x   "
              f"({len(rows)} frames of ~{context:.0f} tokens; same action {agree}/{len(rows)})")
        labels += [f"{game} first token", f"{game} action"]
        plot_rows["kvframe block"] += [k[0], k[2]]
        plot_rows["llama.cpp best"] += [l[0], l[2]]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.plot:
        bar_chart(args.plot, f"Game frames, kvframe block vs llama-server (cache_prompt, --cache-reuse 256, "
                  f"volatile last) · p50 · {args.threads} threads", "ms (lower is better)", labels, plot_rows,
                  logscale=True)
        log(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
