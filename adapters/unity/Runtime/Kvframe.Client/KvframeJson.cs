// A minimal JSON writer for gamecores laid out as keyed objects
// (docs/your_game.md, "Keyed objects, not arrays"), which Unity's JsonUtility
// cannot write: it serializes fields of [Serializable] classes, never a
// Dictionary, so `"units": {"unit_9": {...}}` has no JsonUtility spelling.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Kvframe.Client
{
    /// <summary>
    /// Writes a gamecore built from dictionaries, lists and plain values as minified JSON:
    /// <code>
    /// var units = new Dictionary&lt;string, object&gt; { { "unit_9", new Dictionary&lt;string, object&gt; { { "hp", 40 } } } };
    /// session.SendFrame(KvframeJson.Write(new Dictionary&lt;string, object&gt; { { "turn", 12 }, { "units", units } }));
    /// // {"turn":12,"units":{"unit_9":{"hp":40}}}
    /// </code>
    /// Objects: any <see cref="IDictionary"/> with string keys, written with its keys sorted
    /// (ordinal), so the same state gives the same bytes every frame whatever order a
    /// Dictionary keeps after removals; or a list of <c>KeyValuePair&lt;string, object&gt;</c>,
    /// written in list order (to choose the order the model reads, e.g. scalars first).
    /// Arrays: any other <see cref="IEnumerable"/>. Values: null, bool, string, char, enums
    /// (their name), the integer types, float, double and decimal (invariant culture,
    /// round-trip shortest form; NaN and infinities are refused: JSON has none), and
    /// <see cref="Raw"/> for JSON written elsewhere (JsonUtility.ToJson of a
    /// [Serializable] class, say). Anything else throws <see cref="ArgumentException"/>
    /// naming its path.
    /// </summary>
    public static class KvframeJson
    {
        /// <summary>JSON text written elsewhere, copied as is (not checked).</summary>
        public sealed class RawJson
        {
            public RawJson(string json) { Json = json ?? throw new ArgumentNullException("json"); }
            public string Json { get; private set; }
        }

        /// <summary>Wraps JSON text written elsewhere so that Write copies it as is.</summary>
        public static RawJson Raw(string json) { return new RawJson(json); }

        /// <summary>The value as minified JSON.</summary>
        public static string Write(object value)
        {
            var text = new StringBuilder();
            WriteValue(text, value, "$");
            return text.ToString();
        }

        private static void WriteValue(StringBuilder text, object value, string path)
        {
            if (value == null) { text.Append("null"); return; }
            var raw = value as RawJson;
            if (raw != null) { text.Append(raw.Json); return; }
            if (value is bool) { text.Append((bool)value ? "true" : "false"); return; }
            if (value is string || value is char || value is Enum) { WriteString(text, value.ToString()); return; }
            if (WriteNumber(text, value, path)) return;
            var dictionary = value as IDictionary;
            if (dictionary != null) { WriteObject(text, SortedMembers(dictionary, path), path); return; }
            var pairs = value as IEnumerable<KeyValuePair<string, object>>;
            if (pairs != null) { WriteObject(text, pairs, path); return; }
            var items = value as IEnumerable;
            if (items != null) { WriteArray(text, items, path); return; }
            throw new ArgumentException("kvframe: cannot write a " + value.GetType().Name + " as JSON at " + path +
                                        " (use a dictionary, a list, a plain value or KvframeJson.Raw)");
        }

        private static bool WriteNumber(StringBuilder text, object value, string path)
        {
            if (value is sbyte || value is byte || value is short || value is ushort || value is int || value is uint ||
                value is long || value is ulong)
            {
                text.Append(Convert.ToString(value, CultureInfo.InvariantCulture));
                return true;
            }
            if (value is float || value is double)
            {
                double number = Convert.ToDouble(value, CultureInfo.InvariantCulture);
                if (double.IsNaN(number) || double.IsInfinity(number))
                    throw new ArgumentException("kvframe: " + number + " at " + path + " has no JSON form");
                // float's own round-trip form: 0.1f is 0.1, not 0.100000001490116.
                string shortest = value is float ? ((float)value).ToString("R", CultureInfo.InvariantCulture)
                                                 : number.ToString("R", CultureInfo.InvariantCulture);
                text.Append(shortest.Replace("E+", "e").Replace("E", "e"));
                return true;
            }
            if (value is decimal)
            {
                text.Append(((decimal)value).ToString(CultureInfo.InvariantCulture));
                return true;
            }
            return false;
        }

        private static List<KeyValuePair<string, object>> SortedMembers(IDictionary dictionary, string path)
        {
            var members = new List<KeyValuePair<string, object>>(dictionary.Count);
            foreach (DictionaryEntry entry in dictionary)
            {
                var key = entry.Key as string;
                if (key == null) throw new ArgumentException("kvframe: a key at " + path + " is not a string");
                members.Add(new KeyValuePair<string, object>(key, entry.Value));
            }
            members.Sort((a, b) => string.CompareOrdinal(a.Key, b.Key));
            return members;
        }

        private static void WriteObject(StringBuilder text, IEnumerable<KeyValuePair<string, object>> members, string path)
        {
            text.Append('{');
            bool first = true;
            foreach (KeyValuePair<string, object> member in members)
            {
                if (!first) text.Append(',');
                first = false;
                WriteString(text, member.Key);
                text.Append(':');
                WriteValue(text, member.Value, path + "." + member.Key);
            }
            text.Append('}');
        }

        private static void WriteArray(StringBuilder text, IEnumerable items, string path)
        {
            text.Append('[');
            int index = 0;
            foreach (object item in items)
            {
                if (index > 0) text.Append(',');
                WriteValue(text, item, path + "[" + index + "]");
                index++;
            }
            text.Append(']');
        }

        private static void WriteString(StringBuilder text, string value)
        {
            text.Append('"');
            foreach (char c in value)
            {
                switch (c)
                {
                    case '"': text.Append("\\\""); break;
                    case '\\': text.Append("\\\\"); break;
                    case '\n': text.Append("\\n"); break;
                    case '\r': text.Append("\\r"); break;
                    case '\t': text.Append("\\t"); break;
                    case '\b': text.Append("\\b"); break;
                    case '\f': text.Append("\\f"); break;
                    default:
                        if (c < 0x20) text.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else text.Append(c);
                        break;
                }
            }
            text.Append('"');
        }
    }
}
