"""The asyncio client against a real kvframe-serve."""

from __future__ import annotations

import asyncio

import pytest

import kvframe
from kvframe.aio import AsyncClient
from helpers import ACTION_SCHEMA, FRAMES, RULES, valid


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_async_frames_queries_streams_and_errors(server):
    async def main():
        async with await AsyncClient.connect(server.endpoint) as client:
            assert client.server_info.instance_id != 0
            assert len(client.routing_id) == 16 and client.routing_id[0] & 0x80
            async with await client.open_session("async", rules=RULES) as session:
                ack = await session.send_state(FRAMES[0])
                assert ack.frame_number == 1 and ack.blocks_total > 1
                merge = await session.send_state(FRAMES[1])  # a merge patch
                assert merge.frame_number == 2 and merge.blocks_changed >= 1

                answer = await session.ask("What does Bram do now?", schema=ACTION_SCHEMA, max_tokens=64)
                assert answer.stop == kvframe.StopReason.COMPLETE and valid(answer.action, ACTION_SCHEMA)

                seen = []
                query = session.stream("Describe the square.", kind=kvframe.TaskKind.COMMENTARY, max_tokens=16,
                                       on_chunk=seen.append)
                chunks = [chunk async for chunk in query]
                streamed = await query
                assert chunks and chunks == seen == streamed.chunks
                assert "".join(c.text for c in chunks) == streamed.text

                # several NPCs about one frame, at once: each answer valid (the server may batch them)
                answers = await asyncio.gather(*(session.ask(f"What does {who} do?", schema=ACTION_SCHEMA,
                                                             npc_id=who, max_tokens=64)
                                                 for who in ("bram", "ada", "player")))
                assert all(valid(a.action, ACTION_SCHEMA) for a in answers)
                assert max(a.report.batch_size for a in answers) >= 1

                with pytest.raises(kvframe.BadJsonError):
                    await session.send_frame("[1, 2")
                with pytest.raises(kvframe.BadRequestError):
                    await session.ask("Go.", schema={"type": "object", "oneOf": []})
                action = await session.act("What does Bram do now?", ACTION_SCHEMA, max_tokens=64)
                assert action == answer.action  # greedy, same frame (the bad frame changed nothing)

            stats = await client.stats()
            assert stats.queries >= 6 and stats.frames >= 2
            with pytest.raises(kvframe.UnknownSessionError):
                session.send_frame(FRAMES[2])

    run(main())


def test_async_a_refused_state_never_becomes_the_base_of_a_patch(server):
    async def main():
        async with await AsyncClient.connect(server.endpoint) as client:
            async with await client.open_session("diverge", rules=RULES) as session:
                await session.send_state({"a": 1, "b": 1})
                with pytest.raises(kvframe.BadJsonError, match="/b is nan"):
                    session.send_state({"a": 2, "b": float("nan")})
                with pytest.raises(kvframe.BadJsonError):  # refused by the server
                    await session.send_state({"a": 2, "b": 10 ** 30})
                ack = await session.send_state({"a": 2, "b": 3})  # whole: no patch against the refused state
                assert ack.blocks_changed >= 1
                await session.send_frame([{"op": "test", "path": "/a", "value": 2},
                                          {"op": "test", "path": "/b", "value": 3}], kvframe.FrameFormat.JSON_PATCH)
                with pytest.raises(kvframe.StaleBaseError):
                    await session.send_frame({"b": 4}, kvframe.FrameFormat.MERGE_PATCH, base_frame=1)

    run(main())


def test_async_matches_the_threaded_client(server):
    """The same frames and question through both clients: the same answer (greedy)."""
    with kvframe.Client.connect(server.endpoint) as client, client.open_session("sync", rules=RULES) as s:
        s.send_frame(FRAMES[2])
        expected = s.ask("What does Cleo do now?", schema=ACTION_SCHEMA, max_tokens=64).action_json

    async def main():
        async with await AsyncClient.connect(server.endpoint) as client:
            session = await client.open_session("async", rules=RULES)
            session.send_frame(FRAMES[2])  # not awaited: the query waits behind it on the server
            return (await session.ask("What does Cleo do now?", schema=ACTION_SCHEMA, max_tokens=64)).action_json

    assert run(main()) == expected


def test_async_connect_timeout():
    from conftest import free_port

    async def main():
        with pytest.raises(kvframe.RequestTimeoutError):
            await AsyncClient.connect(f"tcp://127.0.0.1:{free_port()}", connect_timeout=0.3)

    run(main())


def test_async_client_reopens_sessions_after_a_server_restart():
    from conftest import free_port, start_server

    server = start_server(bind=f"tcp://127.0.0.1:{free_port()}")

    async def main():
        async with await AsyncClient.connect(server.endpoint) as client:
            session = await client.open_session("async-restart", rules=RULES)
            await session.send_state(FRAMES[0])
            before = await session.ask("What does Ada do now?", schema=ACTION_SCHEMA, max_tokens=64)
            old_id = session.server_id
            await asyncio.get_running_loop().run_in_executor(None, server.restart)
            for _ in range(400):
                if session.server_id != old_id:
                    break
                await asyncio.sleep(0.05)
            assert session.server_id != old_id
            after = await session.ask("What does Ada do now?", schema=ACTION_SCHEMA, max_tokens=64)
            assert after.action_json == before.action_json

    try:
        run(main())
    finally:
        server.stop()
