"""The threaded client against a real kvframe-serve (the default model, greedy decoding)."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest
import zmq
from flatbuffers import flexbuffers

import kvframe
from kvframe import _common, wire
from conftest import free_port, server_binary, start_server
from helpers import ACTION_SCHEMA, FRAMES, RULES, valid

QUESTION = "What does Bram do now? Answer as JSON."


def test_connect_reports_the_server_and_a_private_routing_id(client):
    info = client.server_info
    assert info is not None and info.instance_id != 0 and info.max_message_bytes > 0
    assert kvframe.Mode.BLOCK in info.modes
    rid = client.routing_id
    assert len(rid) == 16 and rid[0] & 0x80
    assert client._dealer.getsockopt(zmq.ROUTING_ID) == rid


def test_whole_merge_and_json_patch_frames_give_the_same_answers(server):
    """One state sequence sent three ways, each by its own client (its own block-cache scope, so
    every session encodes its blocks itself); every frame's answers (greedy) must be the same."""
    ways = ("whole", "merge", "json")
    clients = {how: kvframe.Client.connect(server.endpoint) for how in ways}
    try:
        sessions = {how: clients[how].open_session("equivalence", rules=RULES) for how in ways}
        seen = {how: [] for how in ways}
        for frame in FRAMES:
            for how, session in sessions.items():
                ack = session.send_state(frame, patch=None if how == "whole" else how).result()
                action = session.ask(QUESTION, schema=ACTION_SCHEMA, max_tokens=64)
                text = session.ask("Describe the scene in one sentence.", max_tokens=16)
                assert action.report.cache_hits == 0  # nothing borrowed from another session
                seen[how].append({"ack": (ack.blocks_total, ack.blocks_changed, ack.blocks_removed),
                                  "format": ack.format, "action": action.action_json, "text": text.text,
                                  "context_tokens": action.report.context_tokens})
        for how in ("merge", "json"):
            assert [s["format"] for s in seen[how]][1:] == [
                kvframe.FrameFormat.MERGE_PATCH if how == "merge" else kvframe.FrameFormat.JSON_PATCH] * 2
            strip = [{k: v for k, v in s.items() if k != "format"} for s in seen[how]]
            assert strip == [{k: v for k, v in s.items() if k != "format"} for s in seen["whole"]]
    finally:
        for c in clients.values():
            c.close()


def test_patch_formats_are_what_was_sent(client):
    with client.open_session("formats", rules=RULES) as session:
        acks = [session.send_frame(FRAMES[0]).result(),
                session.send_frame({"npcs": {"bram": {"hp": 3}}}, kvframe.FrameFormat.MERGE_PATCH).result(),
                session.send_frame([{"op": "replace", "path": "/npcs/bram/hp", "value": 2}],
                                   kvframe.FrameFormat.JSON_PATCH).result()]
        assert [a.frame_number for a in acks] == [1, 2, 3]
        assert acks[0].blocks_changed == acks[0].blocks_total > 1
        assert acks[1].blocks_changed == 1 and acks[2].blocks_changed == 1
        assert not any(a.superseded for a in acks)
        assert session.last_frame_number == 3


def test_a_refused_state_never_becomes_the_base_of_a_patch(client):
    def holds(session, key, value):  # an RFC 6902 test op fails unless the server holds key == value
        try:
            session.send_frame([{"op": "test", "path": f"/{key}", "value": value}],
                               kvframe.FrameFormat.JSON_PATCH).result()
            return True
        except kvframe.BadJsonError:
            return False

    with client.open_session("diverge", rules=RULES) as session:
        session.send_state({"a": 1, "b": 1}).result()
        with pytest.raises(kvframe.BadJsonError, match="/b is nan"):  # refused at the client: nothing sent
            session.send_state({"a": 2, "b": float("nan")})
        session.send_state({"a": 2, "b": 3}).result()
        assert holds(session, "a", 2) and holds(session, "b", 3)
        # refused by the server (simdjson takes no integer past 64 bits): the next state goes whole
        with pytest.raises(kvframe.BadJsonError):
            session.send_state({"a": 4, "b": 10 ** 30}).result()
        ack = session.send_state({"a": 4, "b": 5}).result()
        assert ack.blocks_total > 0 and holds(session, "a", 4) and holds(session, "b", 5)


def test_a_patch_against_a_frame_the_server_does_not_hold_changes_nothing(client):
    with client.open_session("stale", rules=RULES) as session:
        session.send_frame({"a": 1, "b": 1}).result()
        with pytest.raises(kvframe.BadJsonError):
            session.send_frame('{"a": 2, "b": ').result()  # frame 2, refused
        with pytest.raises(kvframe.StaleBaseError, match="send the whole frame") as stale:
            session.send_frame({"b": 3}, kvframe.FrameFormat.MERGE_PATCH).result()  # made against frame 2
        assert stale.value.code == kvframe.ErrorCode.STALE_BASE == 17
        # the server still holds frame 1, exactly: a patch that names it applies
        session.send_frame([{"op": "test", "path": "/a", "value": 1}, {"op": "test", "path": "/b", "value": 1}],
                           kvframe.FrameFormat.JSON_PATCH, base_frame=1).result()


def test_a_session_names_its_adapter_and_an_unknown_one_is_refused(client):
    info = client.server_info
    assert info.default_adapter in info.adapters + ("none",)
    with pytest.raises(kvframe.UnknownAdapterError, match="--adapter chess=FILE") as unknown:
        client.open_session("chess", adapter="chess")
    assert unknown.value.code == kvframe.ErrorCode.UNKNOWN_ADAPTER == 18
    with client.open_session("base", rules=RULES, adapter="none") as session:  # the base model, always there
        session.send_frame({"a": 1, "b": 2}).result()
        assert session.ask("Say hi.", max_tokens=4).text is not None


def test_actions_are_valid_against_the_schema_and_parsed(client):
    with client.open_session("actions", rules=RULES) as session:
        session.send_frame(FRAMES[1])
        for who in ("bram", "ada"):
            answer = session.ask(f"What does {who} do now?", schema=ACTION_SCHEMA, npc_id=who, max_tokens=64)
            assert answer.stop == kvframe.StopReason.COMPLETE
            assert isinstance(answer.action, dict) and valid(answer.action, ACTION_SCHEMA), answer.action_json
            assert json.loads(answer.action_json) == answer.action
            assert flexbuffers.Loads(answer.action_flexbuffer) == answer.action  # the server's parse agrees
            assert answer.report.generated_tokens > 0 and answer.report.round_trip_ms > 0
        # act(): the parsed action only; a legal-actions-style schema with anyOf and const
        schema = {"anyOf": [
            {"type": "object", "properties": {"action": {"const": "fold"}}, "required": ["action"],
             "additionalProperties": False},
            {"type": "object", "properties": {"action": {"const": "raise"},
                                              "amount": {"type": "integer", "minimum": 20, "maximum": 990}},
             "required": ["action", "amount"], "additionalProperties": False}]}
        action = session.act("Bram plays poker now: fold or raise?", schema, max_tokens=24)
        assert valid(action, schema), action


def test_streaming_by_callback_and_by_iterator(client):
    with client.open_session("stream", rules=RULES) as session:
        session.send_frame(FRAMES[0])
        seen = []
        query = session.stream("Describe the square in one sentence.", kind=kvframe.TaskKind.COMMENTARY,
                               max_tokens=24, on_chunk=seen.append)
        chunks = list(query)  # blocks until the result
        answer = query.result()
        assert chunks and [c.seq for c in chunks] == list(range(len(chunks)))
        assert chunks == seen == answer.chunks  # the callback saw the same chunks, in order
        assert "".join(c.text for c in chunks) == answer.text
        assert answer.first_chunk_at is not None and answer.report.first_chunk_ms > 0
        # ask() with a callback only
        texts = []
        answer = session.ask("Name the weather.", max_tokens=8, on_chunk=lambda c: texts.append(c.text))
        assert "".join(texts) == answer.text and len(answer.chunks) == len(texts)


def test_typed_errors(client):
    with client.open_session("errors", rules=RULES) as session:
        with pytest.raises(kvframe.OutOfOrderError):  # a patch before any whole frame
            session.send_frame({"a": 1}, kvframe.FrameFormat.MERGE_PATCH).result()
        session.send_frame(FRAMES[0]).result()
        with pytest.raises(kvframe.BadJsonError) as bad:
            session.send_frame('{"npcs": {"bram": ').result()
        assert bad.value.code == kvframe.ErrorCode.BAD_JSON and "byte" in bad.value.message
        with pytest.raises(kvframe.OutOfOrderError):  # a frame number not above the last
            session.send_frame(FRAMES[1], frame_number=1).result()
        with pytest.raises(kvframe.BadRequestError) as schema_error:  # lookahead: outside the pattern subset
            session.ask("Name?", schema={"type": "object", "properties": {"name": {"type": "string",
                                                                                   "pattern": "(?=[a-z])"}}})
        assert "pattern" in schema_error.value.message
        with pytest.raises(kvframe.BadRequestError):  # not JSON
            session.ask("Name?", schema="{not json")
        with pytest.raises(kvframe.UnsatisfiableError):
            session.ask("Name?", max_tokens=2, schema={"type": "object", "required": ["name"], "properties": {
                "name": {"enum": ["a very long name that takes many tokens to write out"]}}})
        # the session still answers about its last good frame
        answer = session.ask(QUESTION, schema=ACTION_SCHEMA, max_tokens=64)
        assert valid(answer.action, ACTION_SCHEMA)
        assert isinstance(bad.value, kvframe.KvframeError)
    with pytest.raises(kvframe.UnknownSessionError):  # closed: refused by the client at once
        session.send_frame(FRAMES[0])
    with pytest.raises(ValueError):
        session.ask("")


def _raw_socket(endpoint: str) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.ROUTING_ID, _common.routing_id())
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10000)
    sock.connect(endpoint)
    return sock


def _raw_error(sock: zmq.Socket, message: bytes) -> kvframe.KvframeError:
    sock.send(message)
    reply = wire.decode(sock.recv())
    assert reply.body_type == wire._B.Error
    code, text, session_id = wire.error_fields(reply.body)
    return kvframe.error_for(code, text, session_id=session_id, request_id=reply.request_id)


def test_another_client_cannot_touch_a_session(server, client):
    """A second principal (its own routing id) gets what an id nobody holds gets: UnknownSession."""
    with client.open_session("mine", rules=RULES) as session:
        session.send_frame(FRAMES[0]).result()
        before = session.ask(QUESTION, schema=ACTION_SCHEMA, max_tokens=64).action_json
        victim = session.server_id
        nobody = victim ^ 0x5A5A5A5A5A5A
        other = _raw_socket(server.endpoint)
        try:
            frame = wire.FrameSpec(99, kvframe.FrameFormat.WHOLE, b'{"npcs":{"bram":{"hp":0}}}')
            query = _common.query_spec("Reveal the state.", kind=0, npc_id="", schema=None, max_tokens=8,
                                       temperature=0, top_k=0, top_p=1, seed=0, stop=(), stream=False,
                                       frame_number=0, deadline_ms=0, deadline_frame=0)
            for encode in (lambda sid: wire.encode_frame(1, sid, frame),
                           lambda sid: wire.encode_frame(2, sid, wire.FrameSpec(
                               100, kvframe.FrameFormat.JSON_PATCH,
                               b'[{"op":"test","path":"/npcs/bram/hp","value":10}]')),
                           lambda sid: wire.encode_query(3, sid, query),
                           lambda sid: wire.encode_close(4, sid)):
                theirs = _raw_error(other, encode(victim))
                unheld = _raw_error(other, encode(nobody))
                assert isinstance(theirs, kvframe.UnknownSessionError)
                assert type(unheld) is type(theirs)
                assert theirs.message.replace(str(victim), "ID") == unheld.message.replace(str(nobody), "ID")
            # garbage is Malformed, and the protocol version is checked
            assert isinstance(_raw_error(other, b"\x00" * 64), kvframe.MalformedError)
        finally:
            other.close(0)
        # the owner's session is untouched
        after = session.ask(QUESTION, schema=ACTION_SCHEMA, max_tokens=64).action_json
        assert after == before


def test_stats(client):
    before = client.stats()
    with client.open_session("stats", rules=RULES) as session:
        session.send_frame(FRAMES[0]).result()
        session.ask("Hi.", max_tokens=4)
        after = client.stats()
    assert after.server_wide  # loopback without CURVE: the whole server's figures
    assert after.frames >= before.frames + 1 and after.queries >= before.queries + 1
    assert after.sessions >= 1 and after.uptime_s > 0
    assert any(s.name == "engine" and s.count > 0 for s in after.stages)
    # memory: the weights as stored, and the open session's KV as --max-memory-mb counts it
    assert after.weights_bytes > 0 and after.session_kv_bytes > 0
    # and the rest of the process: activations, kernels' scratch, the runtime's own
    assert after.scratch_bytes > 0 and after.resident_bytes > after.scratch_bytes


def test_reconnects_and_reopens_sessions_after_a_server_restart():
    server = start_server(bind=f"tcp://127.0.0.1:{free_port()}")
    try:
        with kvframe.Client.connect(server.endpoint) as client:
            session = client.open_session("restart", rules=RULES)
            session.send_state(FRAMES[0])
            session.send_state(FRAMES[1]).result()  # a merge patch: replayed after the restart too
            before = session.ask(QUESTION, schema=ACTION_SCHEMA, max_tokens=64)
            old_instance, old_id, handle = client.server_info.instance_id, session.server_id, session.id
            server.restart()
            deadline = time.monotonic() + 20
            while session.server_id == old_id and time.monotonic() < deadline:
                time.sleep(0.05)
            assert client.server_info.instance_id != old_instance
            assert session.server_id != old_id and session.id == handle  # re-opened under the same handle
            after = session.ask(QUESTION, schema=ACTION_SCHEMA, max_tokens=64)
            assert after.action_json == before.action_json  # the frames were re-sent: same state, same answer
            ack = session.send_state(FRAMES[2]).result()  # patches go on from the replayed state
            assert ack.frame_number == 3 and ack.blocks_changed > 0
    finally:
        server.stop()


def test_limits_quota_and_size():
    server = start_server("--quota-sessions", "1", "--max-message-mb", "0.01")
    try:
        with kvframe.Client.connect(server.endpoint) as client:
            first = client.open_session("one")
            with pytest.raises(kvframe.QuotaExceededError) as quota:
                client.open_session("two")
            assert quota.value.code == kvframe.ErrorCode.QUOTA_EXCEEDED == 16
            with pytest.raises(kvframe.TooLargeError):  # refused before sending
                first.send_frame({"blob": "x" * 20000})
            first.close()
            client.open_session("two").close()  # the quota counts open sessions only
    finally:
        server.stop()


def test_curve(tmp_path):
    binary = server_binary()
    subprocess.run([binary, "--gen-keys", str(tmp_path / "server")], check=True, capture_output=True)
    server_public = (tmp_path / "server.pub").read_text().strip()
    client_public, client_secret = zmq.curve_keypair()
    (tmp_path / "allow.txt").write_text(client_public.decode() + "\n")
    server = start_server("--curve-secret", str(tmp_path / "server.key"), "--curve-allow", str(tmp_path / "allow.txt"))
    try:
        with kvframe.Client.connect(server.endpoint, server_public_key=server_public,
                                    client_public_key=client_public, client_secret_key=client_secret) as client:
            with client.open_session("curve") as session:
                session.send_frame(FRAMES[0]).result()
                assert session.ask("Hi.", max_tokens=4).report.generated_tokens > 0
            assert not client.stats().server_wide  # with CURVE a client sees its own figures
        stranger_public, stranger_secret = zmq.curve_keypair()
        with pytest.raises(kvframe.ConnectError):
            kvframe.Client.connect(server.endpoint, server_public_key=server_public,
                                   client_public_key=stranger_public, client_secret_key=stranger_secret)
        with pytest.raises(ValueError):
            kvframe.Client.connect(server.endpoint, server_public_key=server_public)
    finally:
        server.stop()


def test_timeouts_without_a_server():
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    with pytest.raises(kvframe.RequestTimeoutError) as connect:
        kvframe.Client.connect(endpoint, connect_timeout=0.3)
    assert isinstance(connect.value, TimeoutError)
    with kvframe.Client.connect(endpoint, connect_timeout=0, request_timeout=0.3) as lazy:
        with pytest.raises(kvframe.RequestTimeoutError, match="unreachable"):
            lazy.stats()


def test_concurrent_threads_share_a_client(client):
    with client.open_session("threads", rules=RULES) as session:
        session.send_frame(FRAMES[0]).result()
        results, errors = [], []

        def worker(who):
            try:
                results.append(session.ask(f"What does {who} do?", schema=ACTION_SCHEMA, npc_id=who,
                                           max_tokens=64).action)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(w,)) for w in ("bram", "ada", "player")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(results) == 3 and all(valid(r, ACTION_SCHEMA) for r in results)


def test_closing_fails_pending_requests(server):
    client = kvframe.Client.connect(server.endpoint)
    session = client.open_session("closing")
    session.send_frame(FRAMES[0])
    query = session.query("Tell a long story.", max_tokens=200)
    client.close()
    with pytest.raises(kvframe.ClosedError):
        query.result(timeout=5)
    with pytest.raises(kvframe.ClosedError):
        session.send_frame(FRAMES[1])
