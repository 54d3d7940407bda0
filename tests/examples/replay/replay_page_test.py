#!/usr/bin/env python3
"""The Hold'em replay page (examples/holdem/replay_html.h) in headless Chromium.

    replay_page_test.py --page-writer BUILD/.../holdem_write_replay_page --out-dir DIR

1. Writes the fixture records (make_fixture.py) and turns them into pages with
   the page writer (write_replay_html); a page that cannot be written must
   fail with the path in the message.
2. Checks each page as text: self-contained (no http(s) URL, no src=, no
   <link>, no url(), no @import), exactly two </script> (the record's "</"
   is escaped), and the embedded record parses back to the fixture.
3. Serves DIR on 127.0.0.1 (http.server in a thread) and runs
   chromium --headless --dump-dom on spots of the page (#hand=H&step=S, and
   #autoplay), checking what the page exposes: body data-hand/step/steps/
   drawn, #status, the cards (data-card), names, commentary, results, chart.
4. Takes a 1280x900 screenshot and decodes the PNG (zlib + the five PNG row
   filters) to see that the felt green, the white of the cards and the red of
   the red suits are really on screen.

Exit status 0 passed, 1 failed, 77 skipped: no chromium (set $CHROMIUM to
use another binary). Python 3 standard library only.
"""
import argparse
import functools
import html
import http.server
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixture  # noqa: E402

SKIP = 77
DOT = " \u00b7 "
failures = []
passed = 0


def check(cond, what, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print("FAIL: %s%s" % (what, ("\n      " + detail) if detail else ""), flush=True)
    return cond


# ---- pages -----------------------------------------------------------------

def write_page(writer, record, out_dir, name):
    rec_path = os.path.join(out_dir, name + ".json")
    page_path = os.path.join(out_dir, name + ".html")
    with open(rec_path, "w", encoding="utf-8") as f:
        json.dump(record, f, ensure_ascii=False)
    proc = subprocess.run([writer, rec_path, page_path], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise SystemExit("page writer failed (%d): %s" % (proc.returncode, proc.stderr.strip()))
    with open(page_path, encoding="utf-8") as f:
        return f.read()


def static_checks(page, record, name):
    for bad in ("http://", "https://", "src=", "<link", "url(", "@import", "//cdn", "fetch(", "XMLHttpRequest"):
        check(bad not in page.lower() if bad.islower() else bad not in page,
              "%s: no external reference %r in the page" % (name, bad))
    check(page.count("</script>") == 2, "%s: exactly two </script> (record escaped)" % name,
          "found %d" % page.count("</script>"))
    check("<!--" not in page.split('<script id="record"', 1)[1], "%s: no <!-- after the record starts" % name)
    m = re.search(r'<script id="record" type="application/json">(.*?)</script>', page, re.S)
    if check(m is not None, "%s: record element present" % name):
        try:
            back = json.loads(m.group(1))
        except ValueError as e:
            back = "unparseable: %s" % e
        check(back == record, "%s: embedded record parses back to the fixture" % name)


# ---- chromium --------------------------------------------------------------

def find_chromium():
    env = os.environ.get("CHROMIUM")
    if env:
        return env if os.path.isfile(env) and os.access(env, os.X_OK) else shutil.which(env)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    def __init__(self, binary, work):
        self.binary = binary
        self.work = work
        self.runs = 0

    def run(self, url, *extra, timeout=45):
        self.runs += 1
        profile = tempfile.mkdtemp(prefix="profile-", dir=self.work)
        cmd = [self.binary, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
               "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
               "--hide-scrollbars", "--disable-background-networking", "--disable-sync"] + list(extra) + [url]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            check(False, "chromium finished within %d s on %s" % (timeout, url))
            return ""
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        out = proc.stdout.decode("utf-8", "replace")
        if proc.returncode != 0:
            check(False, "chromium exit 0 on %s" % url, proc.stderr.decode("utf-8", "replace")[-2000:])
        return out

    def dom(self, url, budget_ms=1500):
        return Dom(self.run(url, "--virtual-time-budget=%d" % budget_ms, "--dump-dom"), url)


class Dom:
    def __init__(self, text, url):
        self.url = url
        # the markup without comments and scripts (their text is not what the page shows)
        text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
        self.raw = re.sub(r"(<script\b[^>]*>).*?</script>", r"\1</script>", text, flags=re.S)
        m = re.search(r"<body([^>]*)>", self.raw)
        self.data = dict(re.findall(r'data-([\w-]+)="([^"]*)"', m.group(1))) if m else {}
        self.data = {k: html.unescape(v) for k, v in self.data.items()}
        m = re.search(r'<div id="status"[^>]*>(.*?)</div>', text, re.S)
        self.status = html.unescape(m.group(1)).strip() if m else None
        self.text = html.unescape(re.sub(r"<[^>]+>", " ", self.raw))
        self.text = re.sub(r"\s+", " ", self.text)

    def cards(self):
        return re.findall(r'data-card="([^"]+)"', self.raw)

    def seat_classes(self):
        return {int(s): c.split() for c, s in re.findall(r'<div class="(seat[^"]*)" data-seat="(\d+)"', self.raw)}


def common_dom_checks(dom, name):
    check(dom.raw.strip() != "", "%s: chromium dumped a DOM" % name)
    check("error" not in dom.data, "%s: no script error" % name, dom.data.get("error", ""))
    check(dom.data.get("drawn") == "1", "%s: data-drawn=1" % name, repr(dom.data))


# ---- PNG -------------------------------------------------------------------

def decode_png(path):
    """(width, height, channels, pixel bytes) of an 8-bit RGB/RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if ctype == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", chunk)
        elif ctype == b"IDAT":
            idat.append(chunk)
        elif ctype == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("unsupported PNG: depth %d colour type %d interlace %d" % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    out = bytearray(height * stride)
    prev = bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:    # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:  # Up
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif ftype == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif ftype != 0:
            raise ValueError("bad PNG filter %d in row %d" % (ftype, y))
        out[y * stride:(y + 1) * stride] = line
        prev = line
    return width, height, bpp, bytes(out)


def screenshot_checks(path):
    if not check(os.path.isfile(path), "screenshot written"):
        return
    size = os.path.getsize(path)
    check(size > 20 * 1024, "screenshot larger than 20 KB", "%d bytes" % size)
    try:
        width, height, bpp, px = decode_png(path)
    except (ValueError, zlib.error, struct.error, TypeError) as e:
        check(False, "screenshot decodes as PNG", str(e))
        return
    check((width, height) == (1280, 900), "screenshot is 1280x900", "%dx%d" % (width, height))
    green = white = red = 0
    colours = set()
    n = width * height
    for i in range(0, n * bpp, bpp):
        r, g, b = px[i], px[i + 1], px[i + 2]
        if g > 60 and g > r + 35 and g > b + 15:
            green += 1
        elif r >= 236 and g >= 236 and b >= 226:
            white += 1
        elif r > 150 and g < 90 and b < 90:
            red += 1
        colours.add((r >> 3, g >> 3, b >> 3))
    print("screenshot: %dx%d, %d bytes; felt green %.1f%%, card white %.2f%%, suit red %d px, %d colours"
          % (width, height, size, 100.0 * green / n, 100.0 * white / n, red, len(colours)), flush=True)
    check(green > 0.12 * n, "screenshot: felt green covers > 12% of the window")
    check(white > 0.012 * n, "screenshot: card white covers > 1.2% of the window")
    check(red > 300, "screenshot: red suits visible")
    check(len(colours) > 300, "screenshot: not blank (many distinct colours)")


# ---- the test ----------------------------------------------------------------

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--page-writer", required=True, help="the write_replay_page helper")
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()
    started = time.monotonic()
    out_dir = os.path.abspath(args.out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)

    # 1 + 2: pages and their text
    record = make_fixture.record()
    minimal = make_fixture.minimal_record()
    page = write_page(args.page_writer, record, out_dir, "replay")
    static_checks(page, record, "replay.html")
    page_min = write_page(args.page_writer, minimal, out_dir, "minimal")
    static_checks(page_min, minimal, "minimal.html")
    bad = os.path.join(out_dir, "no-such-dir", "page.html")
    proc = subprocess.run([args.page_writer, os.path.join(out_dir, "replay.json"), bad],
                          capture_output=True, text=True, timeout=30)
    check(proc.returncode == 1 and bad in proc.stderr, "unwritable path: fails naming the path",
          "rc %d, stderr %r" % (proc.returncode, proc.stderr))

    chrome_bin = find_chromium()
    if not chrome_bin:
        print("SKIP: no chromium binary (install chromium or set $CHROMIUM); %d static checks passed" % passed)
        return 1 if failures else SKIP

    # 3: served on 127.0.0.1, loaded in headless chromium
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=out_dir))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d/" % server.server_address[1]
    chrome = Chromium(chrome_bin, out_dir)
    hands = record["hands"]
    names = [p["name"] for p in record["players"]]
    try:
        # hand 2, step 5: Farouk has just called Esme's open
        dom = chrome.dom(base + "replay.html#hand=2&step=5")
        common_dom_checks(dom, "#hand=2&step=5")
        check((dom.data.get("hand"), dom.data.get("step"), dom.data.get("steps")) == ("2", "5", str(len(hands[1]["steps"]))),
              "#hand=2&step=5: data-hand/step/steps", repr(dom.data))
        want = "hand 2/3" + DOT + "step 5/%d" % len(hands[1]["steps"]) + DOT + "preflop" + DOT + "pot 75"
        check(dom.status == want, "#hand=2&step=5: #status", "%r != %r" % (dom.status, want))
        cards = dom.cards()
        for seat, hole in enumerate(hands[1]["hole"]):
            check(all(c in cards for c in hole), "#hand=2&step=5: hole cards of seat %d face up" % seat, repr(cards))
        check(len(cards) == 12, "#hand=2&step=5: no board cards preflop", repr(cards))
        for n in names:
            check(n in dom.text, "#hand=2&step=5: player %s shown" % n)
        for kind in ("LLM", "tag", "station", "random"):
            check(re.search(r'class="badge k-%s"' % kind.lower(), dom.raw) is not None, "#hand=2&step=5: %s badge" % kind)
        check(make_fixture.EXPECT["hand2_step5_comment"] in dom.text, "#hand=2&step=5: the hand's commentary shown")
        check("Ada squeezes" not in dom.text, "#hand=2&step=5: no commentary from later steps")
        check("Ada wins 185" not in dom.text, "#hand=2&step=5: no result before the end")
        log = re.findall(r'<li class="k-(\w+)[^"]*" data-step="(\d+)"', dom.raw)
        check([int(s) for _, s in log] == list(range(6)), "#hand=2&step=5: action log has steps 0..5", repr(log))
        check("Farouk" in dom.text and "p6 calls 30" in dom.text, "#hand=2&step=5: the step's text")
        check(re.search(r'class="dealer"', dom.raw) is not None, "#hand=2&step=5: dealer button drawn")
        check(len(re.findall(r'class="bet"', dom.raw)) == 4, "#hand=2&step=5: four bets in front of seats")
        check('<svg class="chart"' in dom.raw and 'class="cur-line"' in dom.raw, "#hand=2&step=5: latency chart with a marker")
        check(dom.data.get("decision") == "3", "#hand=2&step=5: current decision is the last one played (3)", repr(dom.data))
        check("block total" in dom.text and "full TTFT" in dom.text, "#hand=2&step=5: chart legend names the modes")
        check("latency (ms)" in dom.text and "decision (" in dom.text, "#hand=2&step=5: chart axes labelled")
        check("standings" in dom.text and "bb/100" in dom.text and "ttft ms mean" in dom.text,
              "#hand=2&step=5: report tables (standings, nested llm.modes)")
        seats = dom.seat_classes()
        check("acting" in seats.get(5, []), "#hand=2&step=5: the acting seat highlighted", repr(seats))

        # hand 1, last step: the showdown; the "</script><!--" comment survived as text
        last1 = len(hands[0]["steps"]) - 1
        dom = chrome.dom(base + "replay.html#hand=1&step=%d" % last1)
        common_dom_checks(dom, "hand 1 end")
        want = "hand 1/3" + DOT + "step %d/%d" % (last1, last1 + 1) + DOT + "showdown" + DOT + "pot 535"
        check(dom.status == want, "hand 1 end: #status", "%r != %r" % (dom.status, want))
        check(make_fixture.EXPECT["hand1_escape_comment"] in dom.text, "hand 1 end: '</script><!--' comment shown as text")
        check("Ada wins 535 with two pair" in dom.text, "hand 1 end: result shown")
        check(all(c in dom.cards() for c in ["As", "7c", "Kh", "2d", "3h"]), "hand 1 end: board shown", repr(dom.cards()))
        seats = dom.seat_classes()
        check("winner" in seats.get(0, []) and "folded" in seats.get(3, []), "hand 1 end: winner and folded seats marked",
              repr(seats))
        check("+290" in dom.text, "hand 1 end: the winner's net shown")

        # hand 3, last step: the split pot
        last3 = len(hands[2]["steps"]) - 1
        dom = chrome.dom(base + "replay.html#hand=3&step=%d" % last3)
        common_dom_checks(dom, "hand 3 end")
        check(make_fixture.EXPECT["hand3_split_text"] in dom.text, "hand 3 end: split pot result shown")
        seats = dom.seat_classes()
        check([s for s, c in sorted(seats.items()) if "winner" in c] == [2, 4], "hand 3 end: both winners marked", repr(seats))

        # 5: autoplay steps on, and on into the next hand
        dom = chrome.dom(base + "replay.html#hand=1&autoplay", budget_ms=2500)
        common_dom_checks(dom, "#hand=1&autoplay")
        check(dom.data.get("hand") == "1" and int(dom.data.get("step", "0")) >= 2,
              "#hand=1&autoplay: steps advance on the timer", repr(dom.data))
        check(dom.data.get("playing") == "1", "#hand=1&autoplay: playing", repr(dom.data))
        dom = chrome.dom(base + "replay.html#hand=2&step=11&autoplay", budget_ms=4000)
        check(dom.data.get("hand") == "3" and int(dom.data.get("step", "0")) >= 1,
              "#hand=2&step=11&autoplay: autoplay continues into hand 3", repr(dom.data))
        check("error" not in dom.data, "autoplay: no script error", dom.data.get("error", ""))

        # out-of-range spots are clamped
        dom = chrome.dom(base + "replay.html#hand=99&step=999")
        check((dom.data.get("hand"), dom.data.get("step")) == ("3", str(last3)), "#hand=99&step=999: clamped to the last step",
              repr(dom.data))

        # a record with no LLM seat and only the required fields
        dom = chrome.dom(base + "minimal.html#hand=3&step=%d" % last3)
        common_dom_checks(dom, "minimal")
        check("no LLM decisions" in dom.text, "minimal: chart says 'no LLM decisions'")
        want = "hand 3/3" + DOT + "step %d/%d" % (last3, last3 + 1) + DOT + "showdown" + DOT + "pot 75"
        check(dom.status == want, "minimal: #status (pot carried forward)", "%r != %r" % (dom.status, want))
        check(all(n in dom.text for n in names), "minimal: player names shown")
        check(re.search(r'id="report-panel"[^>]*style="display: none;"', dom.raw) is not None, "minimal: no report panel")

        # 6: the screenshot
        shot = os.path.join(out_dir, "replay.png")
        chrome.run(base + "replay.html#hand=1&step=20", "--virtual-time-budget=1500", "--window-size=1280,900",
                   "--screenshot=" + shot)
        screenshot_checks(shot)
    finally:
        server.shutdown()
        server.server_close()

    took = time.monotonic() - started
    if failures:
        print("%d of %d checks failed (%d chromium runs, %.1f s)" % (len(failures), len(failures) + passed, chrome.runs, took))
        return 1
    print("all %d checks passed (%d chromium runs, %.1f s); page and screenshot in %s" % (passed, chrome.runs, took, out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
