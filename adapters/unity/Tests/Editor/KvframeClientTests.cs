// Edit Mode tests of the pure C# layer that need only the native library in the
// project (no server). The same layer is driven against a live server by
// tests/adapters/UnityClientTest.cs under mono in CI.
using System;
using Kvframe.Client;
using NUnit.Framework;

namespace Kvframe.Tests
{
    public sealed class KvframeClientTests
    {
        [Test]
        public void ParametersStartFromTheLibraryDefaults()
        {
            var query = new KvframeQuery("What now?");
            Assert.AreEqual(KvframeTaskKind.Text, query.Kind);
            Assert.AreEqual(64u, query.MaxTokens);
            Assert.AreEqual(1f, query.TopP);
            Assert.AreEqual(KvframeMode.Block, new KvframeSessionOptions().Mode);
            Assert.AreEqual(5000, new KvframeClientOptions().ConnectTimeoutMs);
        }

        [Test]
        public void ConnectingToNoServerFailsAndLeavesNoClient()
        {
            int before = KvframeClient.LiveCount;
            var options = new KvframeClientOptions { Endpoint = "tcp://127.0.0.1:1", ConnectTimeoutMs = 200 };
            var error = Assert.Throws<AggregateException>(() => KvframeClient.ConnectAsync(options).Wait(5000));
            Assert.IsInstanceOf<KvframeException>(error.InnerException);
            Assert.AreEqual(before, KvframeClient.LiveCount);
        }
    }
}
