// Drives a live kvframe-serve through the Unity package's pure C# layer
// (adapters/unity/Runtime/Kvframe.Client, compiled to Kvframe.Client.dll) the
// way a game does: connect, open a session, send frames, query, stream, pump
// replies with Poll(), close. Usage: mono UnityClientTest.exe ENDPOINT
// (run_unity_client_test.sh starts the server). Prints each check; exit 0: all passed.
using System;
using System.Collections.Generic;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Kvframe.Client;

static class UnityClientTest
{
    const string Frame =
        "{\"state\":{\"street\":\"flop\",\"board\":[\"Ah\",\"7c\",\"2d\"],\"pot\":60,\"to_act\":\"p1\"," +
        "\"chips\":{\"p1\":{\"bet\":10,\"remain\":990},\"p2\":{\"bet\":10,\"remain\":990}}," +
        "\"players\":[{\"id\":\"p1\",\"name\":\"Zoë ♠\",\"hole_cards\":[\"Kd\",\"Kc\"]},{\"id\":\"p2\",\"name\":\"Bram 🂡\"}]}}";
    const string Patch = "{\"state\":{\"chips\":{\"p2\":{\"bet\":50,\"remain\":950}},\"pot\":100}}";

    static int checks;

    static void Check(bool condition, string what)
    {
        if (!condition) throw new Exception("FAILED: " + what);
        checks++;
        Console.WriteLine("ok   " + what);
    }

    // The game loop in miniature: pump replies until the task is done.
    static void Pump(KvframeClient client, Task task)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (!task.IsCompleted)
        {
            if (DateTime.UtcNow > deadline) throw new TimeoutException("no reply within 60 s");
            if (client == null) Thread.Sleep(10);
            else client.Poll(20);
        }
        task.GetAwaiter().GetResult(); // rethrows the task's own exception, not an AggregateException
    }

    static T Pump<T>(KvframeClient client, Task<T> task)
    {
        Pump(client, (Task)task);
        return task.Result;
    }

    static KvframeException Fails(KvframeClient client, Func<Task> call)
    {
        try
        {
            Pump(client, call());
        }
        catch (KvframeException e)
        {
            return e;
        }
        throw new Exception("FAILED: expected a KvframeException");
    }

    static int Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: UnityClientTest.exe ENDPOINT");
            return 2;
        }
        try
        {
            Run(args[0]);
            Console.WriteLine("all " + checks + " checks passed");
            return 0;
        }
        catch (Exception e)
        {
            Console.WriteLine(e);
            return 1;
        }
    }

    static void Run(string endpoint)
    {
        Check(KvframeClient.NativeVersion == KvframeClient.BindingsVersion,
              "the bindings mirror the loaded library's C ABI " + KvframeClient.NativeVersion);
        NoServer();
        var options = new KvframeClientOptions { Endpoint = endpoint, ClientName = "mono / UnityClientTest" };
        KvframeClient client = Pump(null, KvframeClient.ConnectAsync(options));
        KvframeServerInfo info = client.GetServerInfo();
        Check(info.Model.Length > 0 && info.InstanceId != 0,
              "connected: server " + info.ServerVersion + ", model " + info.Model);
        var frameErrors = new List<KvframeException>();
        client.Error += frameErrors.Add;

        KvframeSession session = Pump(client, client.OpenSessionAsync(new KvframeSessionOptions { GameId = "unity-client-test" }));
        Check(session.Id != 0, "session opened: id " + session.Id);

        Check(session.SendFrame(Frame) == 1, "whole frame sent as frame 1 (non-ASCII names: the server validates UTF-8)");
        Check(session.SendFrame(Encoding.UTF8.GetBytes(Patch), Encoding.UTF8.GetByteCount(Patch),
                                KvframeFrameFormat.MergePatch) == 2, "merge patch sent (UTF-8 bytes) as frame 2");

        KvframeResult text = Pump(client, session.QueryAsync(new KvframeQuery("What does Zoë hold?") { MaxTokens = 8 }));
        Check(text.FrameNumber == 2 && text.SessionId == session.Id && text.Report.BlocksTotal > 0 &&
              text.Report.GeneratedTokens > 0 && frameErrors.Count == 0,
              "text query answered about frame 2: \"" + text.Text + "\" (" + text.Report.GeneratedTokens +
              " tokens, " + text.Report.BlocksTotal + " blocks, " + text.Report.RoundTripMs.ToString("F1") + " ms)");

        Streamed(client, session);
        Action(client, session);
        Errors(client, session, frameErrors);

        string stats = Pump(client, client.GetServerStatsJsonAsync());
        Check(stats.StartsWith("{") && stats.Contains("queries"), "server stats JSON (" + stats.Length + " bytes)");

        Pump(client, session.CloseAsync());
        Check(true, "session closed");
        KvframeException closedSession = Fails(client, () => session.QueryAsync(new KvframeQuery("Still there?")));
        Check(closedSession.Code == KvframeStatus.UnknownSession, "query on a closed session: " + closedSession.Message);

        Lifetime(client, options);
    }

    // Connecting to a port nobody listens on fails within the connect timeout and leaves no client behind.
    static void NoServer()
    {
        var options = new KvframeClientOptions { Endpoint = "tcp://127.0.0.1:1", ConnectTimeoutMs = 300 };
        KvframeException e = Fails(null, () => KvframeClient.ConnectAsync(options));
        Check(KvframeClient.LiveCount == 0, "no server: connect fails with " + e.Code + " (" + e.Message + ")");
    }

    static void Streamed(KvframeClient client, KvframeSession session)
    {
        var chunks = new List<KvframeChunk>();
        var query = new KvframeQuery("Comment on the flop.", KvframeTaskKind.Commentary) { MaxTokens = 16, NpcId = "commentator" };
        Task<KvframeResult> task = session.QueryAsync(query, chunks.Add);
        KvframeResult result = Pump(client, task);
        int whenDone = chunks.Count;
        var joined = new StringBuilder();
        bool ordered = true;
        for (int i = 0; i < chunks.Count; i++)
        {
            ordered &= chunks[i].Seq == i && chunks[i].RequestId == result.RequestId;
            joined.Append(chunks[i].Text);
        }
        Check(chunks.Count > 0 && ordered, "streamed query: " + chunks.Count + " chunks, seq 0.." + (chunks.Count - 1) + " in order");
        Check(joined.ToString() == result.Text, "chunks concatenated equal the result text \"" + result.Text + "\"");
        client.Poll(200);
        Check(chunks.Count == whenDone, "no chunk after the result");
    }

    // An NPC action under a schema: valid JSON, and the same value parsed.
    static void Action(KvframeClient client, KvframeSession session)
    {
        var query = new KvframeQuery("Your move.", KvframeTaskKind.NpcAction)
        {
            MaxTokens = 48, NpcId = "p2",
            OutputSchema = "{\"type\":\"object\",\"properties\":{\"action\":{\"enum\":[\"fold\",\"call\",\"raise\"]}," +
                           "\"amount\":{\"type\":\"integer\",\"minimum\":20,\"maximum\":950}},\"required\":[\"action\",\"amount\"]}"
        };
        KvframeResult result = Pump(client, session.QueryAsync(query));
        string action = result.Action == null ? null : result.Action.Get("action").AsString();
        long amount = result.Action == null ? -1 : result.Action.Get("amount").AsInt();
        Check((action == "fold" || action == "call" || action == "raise") && amount >= 20 && amount <= 950 &&
              result.ActionJson.Contains("\"" + action + "\"") && result.Report.StopReason == KvframeStopReason.Complete &&
              result.Report.BatchSize == 1 && result.Report.MaskMs > 0,
              "NPC action under a schema: " + result.ActionJson + " (parsed: " + action + ", " + amount + ")");
        var unsatisfiable = new KvframeQuery("Your move.", KvframeTaskKind.NpcAction) { MaxTokens = 4, OutputSchema = query.OutputSchema };
        KvframeException e = Fails(client, () => session.QueryAsync(unsatisfiable));
        Check(e.Code == KvframeStatus.Unsatisfiable, "a schema longer than max_tokens: " + e.Code + " (" + e.Message + ")");
    }

    static void Errors(KvframeClient client, KvframeSession session, List<KvframeException> frameErrors)
    {
        KvframeServerInfo info = client.GetServerInfo();
        Check(info.DefaultAdapter.Length > 0, "the server names its default adapter: " + info.DefaultAdapter);
        KvframeException unknown = Fails(client, () => client.OpenSessionAsync(new KvframeSessionOptions { Adapter = "chess" }));
        Check(unknown.Code == KvframeStatus.UnknownAdapter, "an adapter the server has not loaded: " + unknown.Message);
        KvframeException future = Fails(client, () => session.QueryAsync(new KvframeQuery("And then?") { FrameNumber = 99 }));
        Check(future.Code == KvframeStatus.OutOfOrder, "query about an unsent frame: " + future.Message);

        ulong bad = session.SendFrame("{\"state\": [1, 2,", KvframeFrameFormat.Whole);
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (frameErrors.Count == 0 && DateTime.UtcNow < deadline) client.Poll(20);
        Check(frameErrors.Count == 1 && frameErrors[0].Code == KvframeStatus.BadJson && frameErrors[0].SessionId == session.Id,
              "bad JSON in frame " + bad + " raises Error: " + (frameErrors.Count > 0 ? frameErrors[0].Message : "none"));

        // A patch made against the refused frame changes nothing on the server: it says to send the whole frame.
        ulong stale = session.SendFrame("{\"state\": 3}", KvframeFrameFormat.MergePatch);
        deadline = DateTime.UtcNow.AddSeconds(30);
        while (frameErrors.Count == 1 && DateTime.UtcNow < deadline) client.Poll(20);
        Check(frameErrors.Count == 2 && frameErrors[1].Code == KvframeStatus.StaleBase,
              "a patch against refused frame " + bad + " (frame " + stale + ") raises StaleBase: " +
                  (frameErrors.Count > 1 ? frameErrors[1].Message : "none"));

        try
        {
            session.QueryAsync(new KvframeQuery(null));
            throw new Exception("FAILED: a query without an instruction was sent");
        }
        catch (ArgumentNullException)
        {
            Check(true, "a query without an instruction is refused before sending");
        }
    }

    // Dispose fails what is still waiting and makes the client inert; CloseAll (the engine's
    // quit and reload hook) closes every live client.
    static void Lifetime(KvframeClient client, KvframeClientOptions options)
    {
        KvframeClient other = Pump(null, KvframeClient.ConnectAsync(options));
        KvframeSession session = Pump(other, other.OpenSessionAsync());
        session.SendFrame(Frame);
        Task<KvframeResult> waiting = session.QueryAsync(new KvframeQuery("Who wins?") { MaxTokens = 64 });
        Check(KvframeClient.LiveCount == 2, "two live clients");
        KvframeClient.CloseAll();
        Check(client.IsClosed && other.IsClosed && KvframeClient.LiveCount == 0, "CloseAll closed both");
        KvframeException closed = Fails(other, () => waiting);
        Check(closed.Code == KvframeStatus.Closed, "a query waiting at close fails with Closed");
        client.Dispose();
        Check(client.Poll(0) == 0, "a closed client polls nothing and disposes twice");
        try
        {
            session.SendFrame(Frame);
            throw new Exception("FAILED: a closed client sent a frame");
        }
        catch (KvframeException e)
        {
            Check(e.Code == KvframeStatus.Closed, "a closed client refuses frames: " + e.Message);
        }
    }
}
