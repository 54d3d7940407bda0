#!/usr/bin/python3
"""Plays one seat's Hold'em frames against a running kvframe-serve over the raw
protocol and prints every FrameAck and Report field (docs/your_game.md).

  build/tools/kvframe-holdem --bots tag,station,random,tag --hands 60 --seed 1 \
      --commentary off --dataset /tmp/fs/holdem.jsonl
  build/server/kvframe-serve --bind tcp://127.0.0.1:0 --ready-file /tmp/kvf.ready &
  bench/protocol_probe.py $(cat /tmp/kvf.ready) /tmp/fs/holdem.jsonl --frames 9,10,13 --big 99

Session A (block mode) gets the first of --frames whole, the next as an RFC
7386 merge patch, the one after as an RFC 6902 JSON Patch (made by
bench/frame_sizes.py), each followed by the seat's npc_action query. Session
B (block) then sends A's last frame whole, session C the same in full mode,
and session D the --big frame with the server's default context. Needs
pyzmq, the flatbuffers Python package and flatc (the Python code for
protocol/kvframe.fbs is generated into a temporary folder).
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import flatbuffers
import zmq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
generated = tempfile.mkdtemp(prefix="kvframe-fb-")
subprocess.run(["flatc", "--python", "-o", generated, os.path.join(ROOT, "protocol", "kvframe.fbs")], check=True)
sys.path.insert(0, generated)
from kvframe.protocol.fb import (AttentionMode, Body, Chunk, Error, Frame, FrameAck, Hello,  # noqa: E402
                                 HelloReply, Message, OpenSession, Query, Result, SessionOpened, TaskKind)

spec = importlib.util.spec_from_file_location("frame_sizes", os.path.join(ROOT, "bench", "frame_sizes.py"))
frame_sizes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(frame_sizes)

REPORT_FIELDS = ["Mode", "BlocksTotal", "BlocksReused", "BlocksEncoded", "CacheHits", "BlocksRepositioned",
                 "TokensEncoded", "ContextTokens", "QueryTokens", "GeneratedTokens", "PartitionMs", "TokenizeMs",
                 "EncodeMs", "RepositionMs", "QueryPrefillMs", "FirstTokenMs", "DecodeMs", "EngineMs", "QueueMs",
                 "ServerMs", "FirstChunkMs", "MaskMs", "BatchSize"]


class Probe:
    def __init__(self, endpoint, rules, system):
        self.socket = zmq.Context().socket(zmq.DEALER)
        self.socket.connect(endpoint)
        self.request_id = 0
        self.rules, self.system = rules, system

    def call(self, body_type, build):
        b = flatbuffers.Builder(1024)
        body = build(b)
        self.request_id += 1
        Message.Start(b)
        Message.AddProtocolVersion(b, 1)
        Message.AddRequestId(b, self.request_id)
        Message.AddBodyType(b, body_type)
        Message.AddBody(b, body)
        b.Finish(Message.End(b), file_identifier=b"KVF1")
        self.socket.send(bytes(b.Output()))
        chunks = 0
        while True:
            message = Message.Message.GetRootAs(self.socket.recv(), 0)
            if message.BodyType() != Body.Body.Chunk:
                return message.BodyType(), message.Body(), chunks
            chunks += 1

    @staticmethod
    def table(cls, body):
        out = cls()
        out.Init(body.Bytes, body.Pos)
        return out

    def failed(self, kind, body):
        if kind != Body.Body.Error:
            return False
        e = self.table(Error.Error, body)
        print("  Error code=%d: %s" % (e.Code(), e.Message().decode()))
        return True

    def hello(self):
        def build(b):
            name = b.CreateString("protocol_probe")
            Hello.Start(b)
            Hello.AddClientName(b, name)
            return Hello.End(b)
        _, body, _ = self.call(Body.Body.Hello, build)
        h = self.table(HelloReply.HelloReply, body)
        print("HelloReply model=%r max_context=%d max_message_bytes=%d" % (
            h.Model().decode(), h.MaxContext(), h.MaxMessageBytes()))

    def open(self, mode, context=0):
        def build(b):
            game, rules, system = b.CreateString("holdem"), b.CreateString(self.rules), b.CreateString(self.system)
            OpenSession.Start(b)
            OpenSession.AddGameId(b, game)
            OpenSession.AddRulesJson(b, rules)
            OpenSession.AddMode(b, mode)
            OpenSession.AddSystemPrompt(b, system)
            OpenSession.AddContextTokens(b, context)
            return OpenSession.End(b)
        kind, body, _ = self.call(Body.Body.OpenSession, build)
        if self.failed(kind, body):
            return None
        o = self.table(SessionOpened.SessionOpened, body)
        print("SessionOpened context_tokens=%d mode=%d" % (o.ContextTokens(), o.Mode()))
        return o.SessionId()

    def frame(self, session, number, fmt, text):
        def build(b):
            json_text = b.CreateString(text)
            Frame.Start(b)
            Frame.AddSessionId(b, session)
            Frame.AddFrameNumber(b, number)
            Frame.AddFormat(b, fmt)
            Frame.AddJson(b, json_text)
            return Frame.End(b)
        kind, body, _ = self.call(Body.Body.Frame, build)
        if self.failed(kind, body):
            return
        a = self.table(FrameAck.FrameAck, body)
        print("  Frame %d %s %d bytes -> FrameAck superseded=%s blocks_total=%d blocks_changed=%d "
              "blocks_removed=%d" % (number, ["Whole", "MergePatch", "JsonPatch"][fmt], len(text.encode()),
                                     a.Superseded(), a.BlocksTotal(), a.BlocksChanged(), a.BlocksRemoved()))

    def query(self, session, record):
        def build(b):
            instruction = b.CreateString(record["instruction"])
            schema = b.CreateString(json.dumps(record["schema"], separators=(",", ":")))
            npc = b.CreateString(record["id"].split("-")[3])
            Query.Start(b)
            Query.AddSessionId(b, session)
            Query.AddKind(b, TaskKind.TaskKind.NpcAction)
            Query.AddNpcId(b, npc)
            Query.AddInstruction(b, instruction)
            Query.AddOutputSchema(b, schema)
            Query.AddMaxTokens(b, 32)
            Query.AddStream(b, True)
            return Query.End(b)
        kind, body, chunks = self.call(Body.Body.Query, build)
        if self.failed(kind, body):
            return
        r = self.table(Result.Result, body)
        report = r.Report()
        print("  Result action_json=%s stop=%d chunks=%d" % (r.ActionJson().decode(), r.Stop(), chunks))
        print("  Report " + " ".join(
            "%s=%s" % (f, ("%.1f" % getattr(report, f)()) if f.endswith("Ms") else getattr(report, f)())
            for f in REPORT_FIELDS))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("endpoint")
    parser.add_argument("dataset")
    parser.add_argument("--seat", default="p1")
    parser.add_argument("--frames", default="9,10,13", help="indices into the seat's decision frames")
    parser.add_argument("--big", type=int, help="index of a frame for session D (default context)")
    args = parser.parse_args()

    records = []
    with open(args.dataset, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["id"].split("-")[3] == args.seat:
                records.append(record)
    picks = [records[int(i)] for i in args.frames.split(",")]
    rules = open(os.path.join(ROOT, "examples", "holdem", "holdem.rules.json"), encoding="utf-8").read()
    probe = Probe(args.endpoint, rules, picks[0]["system"])
    minified = frame_sizes.minified
    block, full = AttentionMode.AttentionMode.Block, AttentionMode.AttentionMode.Full

    probe.hello()
    print("session A, block mode:")
    a = probe.open(block)
    for n, record in enumerate(picks):
        if n == 0:
            probe.frame(a, 1, 0, minified(record["frame"]))
        elif n % 2 == 1:
            probe.frame(a, n + 1, 1, minified(frame_sizes.merge_diff(picks[n - 1]["frame"], record["frame"])))
        else:
            ops = []
            frame_sizes.patch_diff(picks[n - 1]["frame"], record["frame"], [], ops)
            probe.frame(a, n + 1, 2, minified(ops))
        probe.query(a, record)
    last = picks[-1]
    for name, mode in (("B, block mode, the same frame whole", block), ("C, full mode, the same frame", full)):
        print("session %s:" % name)
        s = probe.open(mode)
        probe.frame(s, 1, 0, minified(last["frame"]))
        probe.query(s, last)
    if args.big is not None:
        big = records[args.big]
        print("session D, block mode, default context, a %d-byte frame:" % len(minified(big["frame"]).encode()))
        d = probe.open(block)
        probe.frame(d, 1, 0, minified(big["frame"]))
        probe.query(d, big)


if __name__ == "__main__":
    main()
