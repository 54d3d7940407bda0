using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Kvframe.Client;
using Kvframe.Unity;
using UnityEngine;
using UnityEngine.Events;

namespace Kvframe.Samples
{
    /// <summary>
    /// A Hold'em-ish table played by model NPCs. Every change to the table is sent as a
    /// whole gamecore frame (kvframe re-encodes only the blocks that changed); each
    /// player's turn is an NpcAction query constrained by a JSON Schema, and a commentator
    /// streams a line after every street. Not a poker engine: no side pots, no hand
    /// ranking (the showdown winner is drawn at random).
    ///
    /// Scene: one KvframeConnection, two or more KvframeNpc players, one KvframeNpc
    /// commentator, this component referencing them. Player ids are set here (p1, p2, ...).
    /// Hole cards stay out of the shared frame: NPCs that should see their own cards need
    /// a KvframeConnection (a session) each.
    /// </summary>
    public sealed class HoldemTable : MonoBehaviour
    {
        private const string ActionSchema =
            "{\"type\":\"object\",\"properties\":{" +
            "\"action\":{\"enum\":[\"fold\",\"check\",\"call\",\"raise\"]}," +
            "\"amount\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000}}," +
            "\"required\":[\"action\"]}";
        private const int BigBlind = 10;
        private static readonly string[] Streets = { "preflop", "flop", "turn", "river" };

        [SerializeField] private KvframeConnection connection;
        [SerializeField] private KvframeNpc[] players = new KvframeNpc[0];
        [SerializeField] private KvframeNpc commentator;
        [SerializeField] private int hands = 3;
        [SerializeField] private float secondsBetweenTurns = 0.5f;

        /// <summary>Each finished line of commentary (wire it to a UI label).</summary>
        public UnityEvent<string> onCommentary = new UnityEvent<string>();

        // The game's own state; Frame() writes what the model sees from it.
        [Serializable] private sealed class Gamecore { public Table state = new Table(); public Dictionary<string, string> history = new Dictionary<string, string>(); }
        [Serializable] private sealed class Table
        {
            public string street = "preflop";
            public List<string> board = new List<string>();
            public int pot;
            public string to_act = "";
            public List<Seat> players = new List<Seat>();
        }
        [Serializable] private sealed class Seat { public string id; public string name; public int chips = 1000; public int bet; public string status = "active"; }
        [Serializable] private sealed class PlayerAction { public string action = "fold"; public int amount = 0; } // filled by JsonUtility

        private readonly Gamecore game = new Gamecore();
        private readonly System.Random random = new System.Random(7);

        private async void Start()
        {
            for (int i = 0; i < players.Length; i++)
            {
                players[i].NpcId = "p" + (i + 1);
                players[i].ActionSchema = ActionSchema;
                game.state.players.Add(new Seat { id = players[i].NpcId, name = players[i].name });
            }
            try
            {
                await connection.WhenReady();
                for (int hand = 1; hand <= hands && this != null; hand++) await PlayHand(hand);
            }
            catch (KvframeException e)
            {
                Debug.LogWarning("holdem: " + e.Message, this); // the NPCs' onError has it too
            }
        }

        private async Task PlayHand(int hand)
        {
            List<string> deck = Deck();
            Table table = game.state;
            table.board.Clear();
            table.pot = 0;
            foreach (Seat seat in table.players) { seat.bet = 0; seat.status = seat.chips > 0 ? "active" : "out"; }
            foreach (string street in Streets)
            {
                table.street = street;
                int cards = street == "preflop" ? 0 : street == "flop" ? 3 : 1;
                for (int c = 0; c < cards; c++) { table.board.Add(deck[0]); deck.RemoveAt(0); }
                await BettingRound();
                if (Active().Count < 2) break;
                connection.SendFrame(Frame());
                string line = await commentator.CommentaryAsync();
                if (this == null) return;
                onCommentary.Invoke(line);
            }
            List<Seat> left = Active();
            Seat winner = left[random.Next(left.Count)];
            winner.chips += table.pot;
            game.history["hand_" + hand.ToString("D4")] = winner.id + " won " + table.pot;
            connection.SendFrame(Frame());
        }

        // One pass around the table: each active player acts once. Enough for a sample.
        private async Task BettingRound()
        {
            for (int i = 0; i < players.Length && Active().Count > 1; i++)
            {
                Seat seat = game.state.players[i];
                if (seat.status != "active") continue;
                game.state.to_act = seat.id;
                connection.SendFrame(Frame());
                string json = await players[i].RequestActionAsync(Instruction(seat), ActionSchema);
                if (this == null) return;
                Apply(seat, json);
                await Task.Delay(TimeSpan.FromSeconds(secondsBetweenTurns));
            }
        }

        // The gamecore as keyed objects (docs/your_game.md, "Keyed objects, not arrays"): players
        // by id, history by hand, scalars first. JsonUtility writes the fields of [Serializable]
        // classes, never a dictionary; KvframeJson writes dictionaries (keys sorted) and lists
        // of pairs (in order).
        private string Frame()
        {
            Table table = game.state;
            var seats = new Dictionary<string, object>();
            foreach (Seat seat in table.players)
            {
                seats[seat.id] = new Dictionary<string, object>
                {
                    { "name", seat.name }, { "chips", seat.chips }, { "bet", seat.bet }, { "status", seat.status },
                };
            }
            var history = new Dictionary<string, object>();
            foreach (KeyValuePair<string, string> entry in game.history) history[entry.Key] = entry.Value;
            return KvframeJson.Write(new List<KeyValuePair<string, object>>
            {
                Member("state", new List<KeyValuePair<string, object>>
                {
                    Member("street", table.street), Member("pot", table.pot), Member("to_act", table.to_act),
                    Member("board", table.board), Member("players", seats),
                }),
                Member("history", history),
            });
        }

        private static KeyValuePair<string, object> Member(string key, object value)
        {
            return new KeyValuePair<string, object>(key, value);
        }

        // This turn's question: who acts and what a call costs, which the Inspector's fixed text cannot say.
        private string Instruction(Seat seat)
        {
            int highest = 0;
            foreach (Seat other in game.state.players) highest = Math.Max(highest, other.bet);
            int toCall = Math.Min(highest - seat.bet, seat.chips);
            return "You are " + seat.id + " (" + seat.name + "). It is your turn. " +
                   (toCall > 0 ? "You may call " + toCall + ", raise or fold." : "You may check or raise.") +
                   " Choose your action.";
        }

        private void Apply(Seat seat, string json)
        {
            PlayerAction action;
            try { action = JsonUtility.FromJson<PlayerAction>(json) ?? new PlayerAction(); }
            catch (ArgumentException) { action = new PlayerAction(); } // not JSON: treat as a fold
            int highest = 0;
            foreach (Seat other in game.state.players) highest = Math.Max(highest, other.bet);
            int owed = action.action == "call" ? highest - seat.bet
                     : action.action == "raise" ? highest - seat.bet + Math.Max(action.amount, BigBlind)
                     : 0;
            if (action.action == "fold") seat.status = "folded";
            owed = Math.Min(owed, seat.chips);
            seat.chips -= owed;
            seat.bet += owed;
            game.state.pot += owed;
            Debug.Log(seat.id + ": " + json, this);
        }

        private List<Seat> Active()
        {
            return game.state.players.FindAll(seat => seat.status == "active");
        }

        private List<string> Deck()
        {
            var deck = new List<string>();
            foreach (char rank in "23456789TJQKA")
                foreach (char suit in "cdhs") deck.Add(rank.ToString() + suit);
            for (int i = deck.Count - 1; i > 0; i--)
            {
                int j = random.Next(i + 1);
                string swap = deck[i]; deck[i] = deck[j]; deck[j] = swap;
            }
            return deck;
        }
    }
}
