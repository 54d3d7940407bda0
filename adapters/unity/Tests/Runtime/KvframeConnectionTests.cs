// Play Mode tests of the MonoBehaviour layer against a running kvframe-serve:
// set KVFRAME_ENDPOINT (e.g. tcp://127.0.0.1:5555) before starting the editor;
// without it they are ignored.
using System;
using System.Collections;
using System.Threading.Tasks;
using Kvframe.Client;
using Kvframe.Unity;
using NUnit.Framework;
using UnityEngine;
using UnityEngine.TestTools;

namespace Kvframe.Tests
{
    public sealed class KvframeConnectionTests
    {
        private GameObject table;

        [TearDown]
        public void DestroyTable()
        {
            if (table != null) UnityEngine.Object.Destroy(table);
        }

        [UnityTest]
        public IEnumerator CommentaryStreamsOnTheMainThreadAndDisableClosesTheClient()
        {
            string endpoint = Environment.GetEnvironmentVariable("KVFRAME_ENDPOINT");
            if (string.IsNullOrEmpty(endpoint)) Assert.Ignore("KVFRAME_ENDPOINT is not set");
            int before = KvframeClient.LiveCount;

            table = new GameObject("table");
            table.SetActive(false); // configure before OnEnable connects
            var connection = table.AddComponent<KvframeConnection>();
            connection.Endpoint = endpoint;
            var npc = table.AddComponent<KvframeNpc>();
            npc.Connection = connection;
            int mainThread = System.Threading.Thread.CurrentThread.ManagedThreadId;
            int chunks = 0;
            npc.onChunk.AddListener(text =>
            {
                Assert.AreEqual(mainThread, System.Threading.Thread.CurrentThread.ManagedThreadId);
                chunks++;
            });
            table.SetActive(true);

            yield return Wait(connection.WhenReady());
            Assert.AreEqual(before + 1, KvframeClient.LiveCount);
            connection.SendFrame("{\"state\":{\"street\":\"flop\",\"board\":[\"Ah\",\"7c\",\"2d\"],\"pot\":60}}");
            Task<string> commentary = npc.CommentaryAsync();
            yield return Wait(commentary);
            Assert.Greater(chunks, 0);
            Assert.IsNotEmpty(commentary.Result);

            connection.enabled = false;
            Assert.IsFalse(connection.IsReady);
            Assert.AreEqual(before, KvframeClient.LiveCount);
        }

        private static IEnumerator Wait(Task task)
        {
            float deadline = Time.realtimeSinceStartup + 30f;
            while (!task.IsCompleted && Time.realtimeSinceStartup < deadline) yield return null;
            Assert.IsTrue(task.IsCompleted, "no reply within 30 s");
            task.GetAwaiter().GetResult(); // rethrows a failure
        }
    }
}
