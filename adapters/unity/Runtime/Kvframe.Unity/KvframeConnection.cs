using System;
using System.Threading.Tasks;
using Kvframe.Client;
using UnityEngine;
using UnityEngine.Events;

namespace Kvframe.Unity
{
    /// <summary>
    /// A connection to kvframe-serve and one session: the game state its KvframeNpc
    /// components read. Connects when enabled (on a worker thread: the main thread never
    /// waits), pumps replies in Update (so query results, chunks and errors arrive on the
    /// main thread), and closes the client when disabled or destroyed. Use one per view
    /// of the game: NPCs that must not see each other's hidden state get their own.
    /// </summary>
    [DisallowMultipleComponent]
    [AddComponentMenu("Kvframe/Kvframe Connection")]
    public sealed class KvframeConnection : MonoBehaviour
    {
        [SerializeField] private string endpoint = "tcp://127.0.0.1:5555";
        [Tooltip("Free text for the server's logs and stats.")]
        [SerializeField] private string gameId = "";
        [Tooltip("json_blocker rules (JSON); empty: the defaults.")]
        [SerializeField] private TextAsset rules;
        [Tooltip("Empty: the model's default.")]
        [SerializeField, TextArea(2, 6)] private string systemPrompt = "";
        [SerializeField] private KvframeMode mode = KvframeMode.Block;

        public UnityEvent onReady = new UnityEvent();
        /// <summary>Connect / open failures and frames the server rejected.</summary>
        public UnityEvent<string> onError = new UnityEvent<string>();

        private KvframeClient client;
        private KvframeSession session;
        private TaskCompletionSource<KvframeSession> ready = NewReady();
        private int generation; // bumped on every close: a connect that finishes later is stale

        /// <summary>Takes effect on the next enable or Reconnect.</summary>
        public string Endpoint { get { return endpoint; } set { endpoint = value; } }
        public bool IsReady { get { return session != null; } }
        /// <summary>The open session; null until ready.</summary>
        public KvframeSession Session { get { return session; } }

        /// <summary>Completes (on the main thread) once the session is open; faults when
        /// connecting fails or the component is disabled first.</summary>
        public Task<KvframeSession> WhenReady() { return ready.Task; }

        /// <summary>Sends this frame's game state. Frames before the session is ready are
        /// dropped (returns 0): the next whole frame carries the whole state.</summary>
        public ulong SendFrame(string json, KvframeFrameFormat format = KvframeFrameFormat.Whole)
        {
            return session == null ? 0 : session.SendFrame(json, format);
        }

        /// <summary>Closes and connects again (e.g. after the server was not up at first).</summary>
        public void Reconnect()
        {
            Close();
            Open();
        }

        private void OnEnable() { Open(); }
        private void OnDisable() { Close(); }

        private void Update()
        {
            if (client != null) client.Poll(0);
        }

        private async void Open()
        {
            int mine = generation;
            KvframeClient connecting = null;
            try
            {
                var options = new KvframeClientOptions
                {
                    Endpoint = endpoint,
                    ClientName = "unity " + Application.unityVersion + " / " + Application.productName,
                };
                connecting = await KvframeClient.ConnectAsync(options);
                var sessionOptions = new KvframeSessionOptions
                {
                    GameId = gameId,
                    RulesJson = rules != null ? rules.text : null,
                    SystemPrompt = systemPrompt.Length > 0 ? systemPrompt : null,
                    Mode = mode,
                };
                KvframeSession opened = await connecting.OpenSessionAsync(sessionOptions);
                if (mine != generation) // disabled while connecting
                {
                    connecting.Dispose();
                    return;
                }
                client = connecting;
                session = opened;
                client.Error += e => onError.Invoke(e.Message);
                ready.TrySetResult(session);
                onReady.Invoke();
            }
            catch (Exception e)
            {
                if (connecting != null) connecting.Dispose();
                if (mine != generation) return;
                Debug.LogWarning("kvframe: " + e.Message, this);
                ready.TrySetException(e);
                onError.Invoke(e.Message);
            }
        }

        private void Close()
        {
            generation++;
            ready.TrySetException(new KvframeException(KvframeStatus.Closed, name + " was disabled"));
            ready = NewReady();
            session = null;
            if (client != null) client.Dispose(); // bounded: returns within a second even with the server gone
            client = null;
        }

        // Awaiting NPCs resume on the next main-thread tick, not inside Open or Close.
        private static TaskCompletionSource<KvframeSession> NewReady()
        {
            return new TaskCompletionSource<KvframeSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }
}
