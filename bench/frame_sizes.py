#!/usr/bin/python3
"""Bytes a game sends per frame: the whole gamecore, an RFC 7386 merge patch,
or an RFC 6902 JSON Patch against the previous frame (docs/your_game.md).

  bench/frame_sizes.py DIR                      frame_NNNN.json files (kvframe-stream --write DIR)
  bench/frame_sizes.py DATA.jsonl --seat p1     one seat's decision frames (kvframe-holdem --dataset)

Options:
  --keyed all|PATH,...  first turn arrays whose elements are all objects with a
                        unique "id" into objects keyed by that id (the "id" member
                        removed): every such array, or those at the dotted PATHs
                        (history, state.players, shop.catalog)
  --breakdown           merge-patch bytes per top-level member
  --write DIR           also write the (keyed) frames as DIR/frame_NNNN.json
  --json                one JSON object instead of the table

Sizes are UTF-8 bytes of minified JSON (no spaces), as a game would send
them. Patches are made here (standard library only): a merge patch carries
changed members and replaces a changed array whole (RFC 7386 has no array
operations); the JSON Patch recurses into objects, matches array elements by
"id" when every element has a unique one and by value otherwise (longest
common subsequence), recurses into elements at the same place and adds or
removes the rest. Every patch is applied to the previous frame and must give
the next one, value and member order (new members go last, as kvframe's
ordered nlohmann-json applies them); the counts are printed.
"""
import argparse
import glob
import importlib.util
import json
import os
import statistics
import sys

import exit_codes  # bench/exit_codes.py, beside this file


def minified(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def size(value):
    return len(minified(value).encode("utf-8"))


# ---- layouts ---------------------------------------------------------------

def keyable(value):
    if not isinstance(value, list) or not value:
        return False
    ids = []
    for element in value:
        if not isinstance(element, dict) or not isinstance(element.get("id"), (str, int)):
            return False
        ids.append(str(element["id"]))
    return len(set(ids)) == len(ids)


def keyable_paths(value, path, out):
    """Dotted paths ("[]" for any element) of arrays that can be keyed."""
    if isinstance(value, dict):
        for key, child in value.items():
            keyable_paths(child, path + [key], out)
    elif isinstance(value, list):
        for child in value:
            keyable_paths(child, path + ["[]"], out)
        if keyable(value):
            out.add(".".join(path))


def keyed(value, path, paths):
    if isinstance(value, dict):
        return {key: keyed(child, path + [key], paths) for key, child in value.items()}
    if isinstance(value, list):
        items = [keyed(child, path + ["[]"], paths) for child in value]
        if ".".join(path) in paths and (not items or keyable(items)):
            return {str(e["id"]): {k: v for k, v in e.items() if k != "id"} for e in items}
        return items
    return value


# ---- RFC 7386 merge patch --------------------------------------------------

class Inexpressible(Exception):
    """A member whose value is null cannot be written by a merge patch."""


def no_null_members(value):
    if isinstance(value, dict):
        for child in value.values():
            if child is None:
                raise Inexpressible()
            no_null_members(child)
    return value


def merge_diff(before, after):
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return no_null_members(after)
    patch = {}
    for key in before:
        if key not in after:
            patch[key] = None
    for key, value in after.items():
        if key not in before:
            if value is None:
                raise Inexpressible()
            patch[key] = no_null_members(value)
        elif before[key] != value or type(before[key]) is not type(value):
            if value is None:
                raise Inexpressible()
            if isinstance(before[key], dict) and isinstance(value, dict):
                patch[key] = merge_diff(before[key], value)
            else:
                patch[key] = no_null_members(value)
    return patch


def _client_patch_module():
    """kvframe's own RFC 7386 apply (adapters/python/kvframe/patch.py, standard
    library only), loaded by path: the check uses the client's code, not a twin."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adapters", "python", "kvframe", "patch.py")
    spec = importlib.util.spec_from_file_location("kvframe_patch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


merge_apply = _client_patch_module().apply_merge_patch


# ---- RFC 6902 JSON Patch ---------------------------------------------------

def pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def lcs_pairs(a, b):
    """Index pairs of a longest common subsequence of key lists a and b."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    pairs = [(i, i) for i in range(start)]
    mid_a, mid_b = a[start:end_a], b[start:end_b]
    if mid_a and mid_b:
        n, m = len(mid_a), len(mid_b)
        table = [[0] * (m + 1) for _ in range(n + 1)]
        for i in range(n - 1, -1, -1):
            row, below = table[i], table[i + 1]
            for j in range(m - 1, -1, -1):
                row[j] = below[j + 1] + 1 if mid_a[i] == mid_b[j] else max(below[j], row[j + 1])
        i = j = 0
        while i < n and j < m:
            if mid_a[i] == mid_b[j]:
                pairs.append((start + i, start + j))
                i += 1
                j += 1
            elif table[i + 1][j] >= table[i][j + 1]:
                i += 1
            else:
                j += 1
    pairs += [(end_a + k, end_b + k) for k in range(len(a) - end_a)]
    return pairs


def patch_diff(before, after, path, ops):
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": pointer(path + [key])})
        for key, value in after.items():
            if key in before:
                patch_diff(before[key], value, path + [key], ops)
            else:
                ops.append({"op": "add", "path": pointer(path + [key]), "value": value})
    elif isinstance(before, list) and isinstance(after, list):
        by_id = keyable(before) and keyable(after)
        key = (lambda e: str(e["id"])) if by_id else minified
        pairs = lcs_pairs([key(e) for e in before], [key(e) for e in after])
        at = i = j = 0  # at: the index in the array as the ops so far leave it
        for mi, mj in pairs + [(len(before), len(after))]:
            common = 0 if by_id else min(mi - i, mj - j)
            for k in range(common):
                patch_diff(before[i + k], after[j + k], path + [at], ops)
                at += 1
            for _ in range(mi - i - common):
                ops.append({"op": "remove", "path": pointer(path + [at])})
            for k in range(common, mj - j):
                ops.append({"op": "add", "path": pointer(path + [at]), "value": after[j + k]})
                at += 1
            if mi < len(before):
                patch_diff(before[mi], after[mj], path + [at], ops)
                at += 1
            i, j = mi + 1, mj + 1
    elif before != after or type(before) is not type(after):
        ops.append({"op": "replace", "path": pointer(path), "value": after})


def patch_apply(document, ops):
    document = json.loads(minified(document))
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        if not parts:
            document = op["value"]
            continue
        parent = document
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(index, op["value"])
            elif op["op"] == "remove":
                del parent[index]
            else:
                parent[index] = op["value"]
        elif op["op"] == "remove":
            del parent[last]
        else:
            parent[last] = op["value"]
    return document


# ---- frames and the report -------------------------------------------------

def load_frames(source, seat):
    if os.path.isdir(source):
        files = sorted(glob.glob(os.path.join(source, "frame_[0-9]*.json")))
        files = [f for f in files if f.count(".") == 1]  # not .changes.json / .merge-patch.json
        return [json.load(open(f, encoding="utf-8")) for f in files]
    frames = []
    with open(source, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            # kvframe-holdem ids: holdem-s<seed>-hand_NNNN-<seat>-<n> (decisions only)
            if seat is None or record["id"].split("-")[3] == seat:
                frames.append(record["frame"])
    return frames


def summary(values):
    ordered = sorted(values)
    return {
        "mean": statistics.fmean(ordered),
        "p50": statistics.median(ordered),
        "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
        "max": ordered[-1],
        "total": sum(ordered),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("--seat")
    parser.add_argument("--keyed")
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument("--write")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    frames = load_frames(args.source, args.seat)
    if len(frames) < 2:
        print("frame_sizes: fewer than two frames in " + args.source, file=sys.stderr)
        sys.exit(exit_codes.BAD_INPUT)
    if args.keyed:
        paths = set()
        if args.keyed == "all":
            for frame in frames:
                keyable_paths(frame, [], paths)
        else:
            paths = set(args.keyed.split(","))
        frames = [keyed(frame, [], paths) for frame in frames]
    if args.write:
        os.makedirs(args.write, exist_ok=True)
        for n, frame in enumerate(frames):
            with open(os.path.join(args.write, "frame_%04d.json" % n), "w", encoding="utf-8") as out:
                out.write(minified(frame))

    sizes = {"whole": [], "merge_patch": [], "json_patch": []}
    ops_per_frame, breakdown = [], {}
    checks = {"merge_patch": 0, "json_patch": 0, "merge_inexpressible": 0}
    for before, after in zip(frames, frames[1:]):
        sizes["whole"].append(size(after))
        try:
            merge = merge_diff(before, after)
            sizes["merge_patch"].append(size(merge))
            checks["merge_patch"] += minified(merge_apply(before, merge)) == minified(after)
            if args.breakdown and isinstance(merge, dict):
                for key in after if isinstance(after, dict) else []:
                    breakdown.setdefault(key, []).append(size(merge[key]) if key in merge else 0)
        except Inexpressible:
            checks["merge_inexpressible"] += 1
        ops = []
        patch_diff(before, after, [], ops)
        sizes["json_patch"].append(size(ops))
        ops_per_frame.append(len(ops))
        checks["json_patch"] += minified(patch_apply(before, ops)) == minified(after)

    report = {
        "source": args.source,
        "seat": args.seat,
        "keyed": args.keyed or "none",
        "frames": len(frames),
        "first_frame_bytes": size(frames[0]),
        "pairs": len(frames) - 1,
        "bytes": {name: summary(values) for name, values in sizes.items() if values},
        "json_patch_ops": summary(ops_per_frame),
        "round_trips": checks,
    }
    if breakdown:
        report["merge_patch_by_member"] = {k: statistics.fmean(v) for k, v in breakdown.items()}
    if args.json:
        print(json.dumps(report, indent=2))
        return

    whole_total = report["bytes"]["whole"]["total"]
    print("%s%s, layout %s: %d frames (first %s bytes); per frame after the first:" % (
        args.source, " seat " + args.seat if args.seat else "", report["keyed"], len(frames),
        format(report["first_frame_bytes"], ",")))
    print("%-12s %9s %9s %9s %9s %8s" % ("format", "mean", "p50", "p90", "max", "of whole"))
    for name in ("whole", "merge_patch", "json_patch"):
        if name not in report["bytes"]:
            continue
        s = report["bytes"][name]
        print("%-12s %9s %9s %9s %9s %7.1f%%" % (
            name, format(round(s["mean"]), ","), format(round(s["p50"]), ","), format(s["p90"], ","),
            format(s["max"], ","), 100.0 * s["total"] / whole_total))
    o = report["json_patch_ops"]
    print("json_patch ops per frame: mean %.1f, p50 %g, max %d" % (o["mean"], o["p50"], o["max"]))
    if breakdown:
        print("merge patch bytes per frame by top-level member (mean): " + ", ".join(
            "%s %s" % (k, format(round(v), ",")) for k, v in report["merge_patch_by_member"].items()))
    pairs = report["pairs"]
    print("round trips: merge patch %d/%d, JSON Patch %d/%d%s" % (
        checks["merge_patch"], pairs - checks["merge_inexpressible"], checks["json_patch"], pairs,
        ", %d frames a merge patch cannot express (a null member)" % checks["merge_inexpressible"]
        if checks["merge_inexpressible"] else ""))


if __name__ == "__main__":
    main()
