#!/usr/bin/env python3
"""Runs one bench once, small, on a tiny random-weight model: a smoke test, not a timing.

    python3 bench/smoke.py --build build --work build/bench/smoke bench_runtime

It passes (exit 0) when the bench exits 0 and prints its table (a line
matching the bench's EXPECT pattern below); 77 (ctest: skipped) when a
program it needs is not built or the Python package cannot be installed.
Each bench runs in its own folder under --work, so its plots land there,
not in docs/plots. bench/CMakeLists.txt registers one ctest entry per bench
(label `bench`); bench/README.md says what each bench backs.
"""
import argparse
import fcntl
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SKIP = 77


def holdem_dataset(path):
    """A command writing a one-hand Hold'em dataset (rule bots) to `path`, in the bench's folder."""
    return (f"rm -f {path} && {{b}}/tools/kvframe-holdem --bots tag,station,random --hands 1 --seed 1 "
            f"--history 0 --commentary off --dataset {path} > /dev/null")


# bench -> (programs it needs, relative to the build folder; its command; a line its table prints).
# {b}: the build folder, {m}: the tiny model, {py}: this Python, {venv}: a Python with the kvframe
# package, {bench}: bench/. Options are the smallest each bench takes.
BENCHES = {
    "bench_json_blocker": (["bench/bench_json_blocker"],
                           "{b}/bench/bench_json_blocker --benchmark_min_time=0.001", r"holdem/partition"),
    "bench_schema": (["bench/bench_schema"], "{b}/bench/bench_schema --frames 5 --model {m}",
                     r"tokens per action"),
    "bench_hand_eval": (["bench/bench_hand_eval"], "{b}/bench/bench_hand_eval --random 1000 --equity-calls 1",
                        r"counts match the published values"),
    "bench_dequantize": (["bench/bench_dequantize"], "{b}/bench/bench_dequantize --rows 2 --cols 512 --reps 1",
                         r"matches the portable one bit for bit"),
    "bench_bridge": (["bench/bench_bridge"],
                     "{b}/bench/bench_bridge --iterations 10 --warmup 1 --clients 1 --seconds 0.2 --frame-kb 16",
                     r"applied/s"),
    "bench_runtime": (["bench/bench_runtime"],
                      "{b}/bench/bench_runtime --model {m} --lora none --threads 1 --lengths 64 --decode 4 "
                      "--decode-after 16 --reps 1", r"^decode\s"),
    "bench_branches": (["bench/bench_branches"],
                       "{b}/bench/bench_branches --shape smollm2-135m --threads 1 --shared 64 --branches 1,2 "
                       "--block 8 --steps 2 --alone 1", r"^speedup"),
    "bench_block_attention": (["bench/bench_block_attention"],
                              "{b}/bench/bench_block_attention --model {m} --lora none --threads 1 --lengths 256 "
                              "--reps 1 --query-tokens 8", r"block/full"),
    "bench_game_frames": (["bench/bench_game_frames"],
                          "{b}/bench/bench_game_frames --model {m} --lora none --threads 1 --frames 2 --tokens 256 "
                          "--drop shop --max-tokens 2", r"TTFT p50"),
    "bench_npc": (["bench/bench_npc"],
                  "{b}/bench/bench_npc --model {m} --lora none --threads 1 --npcs 1,2 --repeats 1 --max-tokens 24 "
                  "--commentary-tokens 4 --history 0 --players 2", r"NPC"),
    "bench_sessions": (["bench/bench_sessions"],
                       "{b}/bench/bench_sessions --model {m} --lora none --threads 1 --sessions 1,2 --context 64 "
                       "--blocks 2 --block-tokens 8 --reps 1 --adapters 2", r"grouped tok/s"),
    "bench_tenants": (["bench/bench_tenants"],
                      "{b}/bench/bench_tenants --model {m} --lora none --threads 1 --tenants 1 --tenants 2 "
                      "--frames 1 --moba-scale 0.01 --holdem-history 0", r"isolated / shared"),
    "frame_sizes": (["tools/kvframe-stream"],
                    "{b}/tools/kvframe-stream --frames 3 --frame-kb 64 --write frames > /dev/null && "
                    "{py} {bench}/frame_sizes.py frames", r"round trips"),
    "bench_holdem_latency": (["tools/kvframe-holdem"],
                             "{py} {bench}/bench_holdem_latency.py --holdem {b}/tools/kvframe-holdem --paces 0 "
                             "--seeds 1 --hands 1 -- --model {m} --lora none --threads 1", r"pace ms"),
    # Twice with --keep: the second run reads the two kept matches (the bot's, tag's) back.
    "bench_bot": (["tools/kvframe-holdem"],
                  "rm -rf kept && for run in 1 2; do {py} {bench}/bench_bot.py --holdem {b}/tools/kvframe-holdem "
                  "--seeds 1 --hands 2 --history 0 --model {m} --lora none --threads 1 --tag-baseline --keep kept "
                  "|| exit 1; done && test $(ls kept | wc -l) -eq 2", r"tag \\ llm"),
    "bench_holdem_dial": (["tools/kvframe-holdem", "tools/kvframe-finetune"],
                          "rm -rf dial && {py} {bench}/bench_holdem_dial.py --build {b} --model {m} --lora none "
                          "--threads 1 --seeds 1 --hands 3 --history 1 --settings heads:0,temp:1.2 --work dial",
                          r"full = block"),
    "bench_serving": (["tools/kvframe-holdem-client", "server/kvframe-serve"],
                      "{py} {bench}/bench_serving.py --build {b} --model {m} --lora none --threads 1 --matches 1,4 "
                      "--paces 0,auto --together 1 --hands 2 --history 0 --json rows.json && "
                      "{py} {bench}/bench_serving.py --from-json rows.json --plot ''",
                      r"(?s)^unpaced, .*: 4 matches vs 1: .*^paced \d+ ms \(.* decisions/s a match\)"),
    "bench_fidelity": (["tools/kvframe-holdem", "tools/kvframe-finetune", "bench/bench_game_frames"],
                       holdem_dataset("heldout.jsonl") + " && "
                       "{py} {bench}/bench_fidelity.py --build {b} --model {m} --threads 1 --settings heads:0 "
                       "--tokens 256 --drop shop --frames 2 --holdem-data heldout.jsonl --holdem-limit 1",
                       r"heads:0 \|"),
    "bench_contention": (["server/kvframe-serve", "venv"],
                         "{venv} {bench}/bench_contention.py --serve {b}/server/kvframe-serve --model {m} --busy 0 "
                         "--configs 1 --questions 1", r"busy cores"),
    "protocol_probe": (["server/kvframe-serve", "tools/kvframe-holdem", "venv"],
                       holdem_dataset("seat.jsonl") + " || exit 1; "
                       "{b}/server/kvframe-serve --model {m} --threads 1 --bind tcp://127.0.0.1:0 "
                       "--ready-file ready > serve.log 2>&1 & server=$!; "
                       "trap 'kill $server' EXIT; "
                       "for i in $(seq 300); do [ -s ready ] && break; sleep 0.1; done; "
                       "{venv} {bench}/protocol_probe.py \"$(cat ready)\" seat.jsonl --seat p2 --frames 0,1,2 --big 3",
                       r"Report Mode="),
}


def tiny_model(build, folder):
    path = os.path.join(folder, "tiny.gguf")
    writer = os.path.join(build, "tests", "support", "write_tiny_model")
    if not os.path.exists(path):
        if not os.access(writer, os.X_OK):
            return None
        # 8,192 tokens of context: the tiny vocabulary is a token a byte, Hold'em and MOBA frames are KiBs.
        subprocess.run([writer, path, "llama", "8192"], check=True)
    return path


def package_python(work):
    """A venv with the kvframe package (as tests/python/conftest.py makes one; nothing downloaded),
    shared by the benches that need it; None when it cannot be made."""
    venv = os.path.join(work, "venv")
    python = os.path.join(venv, "bin", "python")
    with open(os.path.join(work, "venv.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(venv, "done")):
            return python
        base = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
        steps = [[base, "-m", "venv", "--system-site-packages", "--without-pip", venv],
                 [python, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--disable-pip-version-check",
                  "--quiet", os.path.join(ROOT, "adapters", "python")]]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                sys.stderr.write(f"smoke: {' '.join(step)} failed:\n{done.stdout}{done.stderr}\n")
                return None
        open(os.path.join(venv, "done"), "w").close()
        return python


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="kvframe's build folder")
    parser.add_argument("--work", required=True, help="a folder for the runs (a subfolder per bench)")
    parser.add_argument("bench", choices=sorted(BENCHES))
    args = parser.parse_args()
    build, work = os.path.abspath(args.build), os.path.abspath(args.work)
    needs, command, expect = BENCHES[args.bench]
    folder = os.path.join(work, args.bench)
    os.makedirs(folder, exist_ok=True)

    for need in needs:
        if need != "venv" and not os.access(os.path.join(build, need), os.X_OK):
            print(f"smoke: {need} is not built; skipped")
            return SKIP
    model = tiny_model(build, folder)
    if model is None and "{m}" in command:
        print("smoke: tests/support/write_tiny_model is not built; skipped")
        return SKIP
    venv = ""
    if "venv" in needs:
        venv = package_python(work)
        if venv is None:
            print("smoke: the kvframe Python package could not be installed (python3-zmq, python3-flatbuffers, "
                  "python3-venv, flatc); skipped")
            return SKIP
    line = command.format(b=build, m=model, py=sys.executable, venv=venv, bench=HERE)
    print(f"smoke: {line}", flush=True)
    start = time.monotonic()
    done = subprocess.run(["bash", "-c", line], cwd=folder, capture_output=True, text=True, errors="replace")
    sys.stdout.write(done.stdout[-6000:])
    sys.stderr.write(done.stderr[-3000:])
    print(f"smoke: exit {done.returncode} after {time.monotonic() - start:.1f} s")
    if done.returncode != 0:
        return 1
    if not re.search(expect, done.stdout, re.MULTILINE):
        print(f"smoke: its table is missing (no line matches {expect!r})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
