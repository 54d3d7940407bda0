using System;
using System.Threading.Tasks;
using Kvframe.Client;
using UnityEngine;
using UnityEngine.Events;

namespace Kvframe.Unity
{
    /// <summary>
    /// An NPC that asks the model about its KvframeConnection's game state: an action
    /// (JSON, constrained by a schema) or streamed commentary. Results, chunks and errors
    /// arrive on the main thread, both as the returned Task and as UnityEvents (to wire in
    /// the Inspector); nothing is raised after the component is destroyed.
    /// </summary>
    [AddComponentMenu("Kvframe/Kvframe NPC")]
    public sealed class KvframeNpc : MonoBehaviour
    {
        [Tooltip("The session this NPC reads; empty: the first KvframeConnection in the scene.")]
        [SerializeField] private KvframeConnection connection;
        [SerializeField] private string npcId = "npc";
        [Tooltip("What to do now; {npc} is replaced by the NPC id.")]
        [SerializeField, TextArea(2, 6)] private string actionInstruction = "It is {npc}'s turn. Choose {npc}'s action.";
        [Tooltip("JSON Schema the action must satisfy; empty: none.")]
        [SerializeField, TextArea(3, 12)] private string actionSchema = "";
        [Tooltip("What to comment on; {npc} is replaced by the NPC id.")]
        [SerializeField, TextArea(2, 6)] private string commentaryInstruction = "As {npc}, comment on what just happened in one sentence.";
        [Tooltip("0: the library default.")]
        [SerializeField] private uint maxTokens;
        [Tooltip("0: greedy.")]
        [SerializeField, Range(0f, 2f)] private float temperature;

        /// <summary>The action JSON of RequestAction.</summary>
        public UnityEvent<string> onAction = new UnityEvent<string>();
        /// <summary>Commentary text as it is produced, in order.</summary>
        public UnityEvent<string> onChunk = new UnityEvent<string>();
        public UnityEvent<string> onError = new UnityEvent<string>();

        public string NpcId { get { return npcId; } set { npcId = value; } }
        public string ActionSchema { get { return actionSchema; } set { actionSchema = value ?? ""; } }
        /// <summary>The instruction RequestAction() sends; {npc} is replaced by the NPC id.</summary>
        public string ActionInstruction { get { return actionInstruction; } set { actionInstruction = value ?? ""; } }
        /// <summary>The instruction Commentary() sends; {npc} is replaced by the NPC id.</summary>
        public string CommentaryInstruction { get { return commentaryInstruction; } set { commentaryInstruction = value ?? ""; } }
        public KvframeConnection Connection { get { return connection; } set { connection = value; } }

        /// <summary>Asks for this NPC's action with the Inspector's instruction and schema; returns the
        /// action JSON (also raised as onAction).</summary>
        public Task<string> RequestActionAsync()
        {
            return RequestActionAsync(actionInstruction, actionSchema);
        }

        /// <summary>Asks for this NPC's action with this turn's instruction and schema (built from the
        /// moves legal now, docs/your_game.md; null or empty: none), leaving the Inspector's as they are.
        /// Returns the action JSON (also raised as onAction).</summary>
        public async Task<string> RequestActionAsync(string instruction, string schema)
        {
            if (instruction == null) throw new ArgumentNullException("instruction");
            KvframeQuery query = NewQuery(instruction, KvframeTaskKind.NpcAction);
            if (!string.IsNullOrEmpty(schema)) query.OutputSchema = schema;
            KvframeResult result = await RunAsync(query, null);
            if (this != null) onAction.Invoke(result.ActionJson);
            return result.ActionJson;
        }

        /// <summary>Asks for commentary, streamed to onChunk; returns the whole text.</summary>
        public Task<string> CommentaryAsync()
        {
            return CommentaryAsync(commentaryInstruction);
        }

        /// <summary>Asks for commentary on this turn's instruction, streamed to onChunk; returns the whole text.</summary>
        public async Task<string> CommentaryAsync(string instruction)
        {
            if (instruction == null) throw new ArgumentNullException("instruction");
            KvframeQuery query = NewQuery(instruction, KvframeTaskKind.Commentary);
            KvframeResult result = await RunAsync(query, chunk =>
            {
                if (this != null) onChunk.Invoke(chunk.Text);
            });
            return result.Text;
        }

        /// <summary>RequestActionAsync for UnityEvents and buttons: the result goes to onAction, failures to onError.</summary>
        public void RequestAction() { Forget(RequestActionAsync()); }

        /// <summary>CommentaryAsync for UnityEvents and buttons.</summary>
        public void Commentary() { Forget(CommentaryAsync()); }

        private KvframeQuery NewQuery(string instruction, KvframeTaskKind kind)
        {
            var query = new KvframeQuery(instruction.Replace("{npc}", npcId), kind) { NpcId = npcId };
            if (maxTokens > 0) query.MaxTokens = maxTokens;
            if (temperature > 0) query.Temperature = temperature;
            return query;
        }

        private async Task<KvframeResult> RunAsync(KvframeQuery query, Action<KvframeChunk> onChunkText)
        {
            try
            {
                KvframeSession session = await FindConnection().WhenReady();
                return await session.QueryAsync(query, onChunkText);
            }
            catch (KvframeException e)
            {
                if (this != null) onError.Invoke(e.Message);
                throw;
            }
        }

        private KvframeConnection FindConnection()
        {
            if (connection == null) connection = FindObjectOfType<KvframeConnection>();
            if (connection == null) throw new InvalidOperationException("kvframe: no KvframeConnection in the scene for " + name);
            return connection;
        }

        // Failures were raised as onError already; anything else reaches Unity's log.
        private static async void Forget(Task task)
        {
            try { await task; }
            catch (KvframeException) { }
        }
    }
}
