// KvframeJson (adapters/unity/Runtime/Kvframe.Client/KvframeJson.cs), the writer
// for keyed-object gamecores that Unity's JsonUtility cannot write, under mono:
// the bytes it writes for dictionaries, pair lists, arrays and every value type,
// and what it refuses. No server. Usage: mono UnityJsonTest.exe; exit 0: all passed.
using System;
using System.Collections.Generic;
using Kvframe.Client;

static class UnityJsonTest
{
    static int checks;

    static void Same(string expected, string actual, string what)
    {
        if (expected != actual) throw new Exception("FAILED: " + what + ": expected " + expected + ", got " + actual);
        checks++;
        Console.WriteLine("ok   " + what);
    }

    static void Refused(object value, string path, string what)
    {
        try
        {
            KvframeJson.Write(value);
        }
        catch (ArgumentException e)
        {
            if (!e.Message.Contains(path)) throw new Exception("FAILED: " + what + ": no " + path + " in " + e.Message);
            checks++;
            Console.WriteLine("ok   " + what);
            return;
        }
        throw new Exception("FAILED: " + what + ": expected an ArgumentException");
    }

    enum Team { Radiant, Dire }

    static int Main()
    {
        // The guide's keyed layout: units by id, a history keyed by hand.
        var units = new Dictionary<string, object>
        {
            { "unit_9", new Dictionary<string, object> { { "kind", "ward" }, { "hp", 1 } } },
            { "unit_1", new Dictionary<string, object> { { "kind", "creep" }, { "hp", 550 }, { "x", 100.5 } } },
        };
        Same("{\"unit_1\":{\"hp\":550,\"kind\":\"creep\",\"x\":100.5},\"unit_9\":{\"hp\":1,\"kind\":\"ward\"}}",
             KvframeJson.Write(units), "a Dictionary is an object, keys sorted (ordinal)");

        // A Dictionary that lost and regained a key enumerates in another order; the text is the same.
        var a = new Dictionary<string, object> { { "b", 1 }, { "a", 2 }, { "c", 3 } };
        var b = new Dictionary<string, object> { { "a", 2 }, { "b", 1 }, { "c", 3 } };
        b.Remove("a");
        b["a"] = 2;
        Same(KvframeJson.Write(a), KvframeJson.Write(b), "the same entries give the same bytes, whatever the insertion order");

        var ordered = new List<KeyValuePair<string, object>>
        {
            new KeyValuePair<string, object>("turn", 12),
            new KeyValuePair<string, object>("units", units),
            new KeyValuePair<string, object>("board", new[] { "Ah", "7c" }),
        };
        Same("{\"turn\":12,\"units\":{\"unit_1\":{\"hp\":550,\"kind\":\"creep\",\"x\":100.5},\"unit_9\":{\"hp\":1,\"kind\":\"ward\"}},\"board\":[\"Ah\",\"7c\"]}",
             KvframeJson.Write(ordered), "a list of pairs is an object in list order; an array is an array");

        Same("[null,true,false,\"x\",\"c\",\"Dire\",-7,255,18446744073709551615,0.1,0.25,1.5,1e21,1e-05,2.50]",
             KvframeJson.Write(new List<object>
             {
                 null, true, false, "x", 'c', Team.Dire, -7, (byte)255, ulong.MaxValue, 0.1f, 0.25, 1.5f, 1e21, 0.00001,
                 2.50m,
             }),
             "values: null, bools, strings, chars, enums by name, integers, floats in shortest form, decimals");

        Same("\"quote \\\" backslash \\\\ newline \\n tab \\t bell \\u0007 Zoë ♠\"",
             KvframeJson.Write("quote \" backslash \\ newline \n tab \t bell \u0007 Zoë ♠"),
             "strings escaped as JSON requires, the rest as is");

        Same("{\"state\":{\"pot\":60},\"npcs\":{}}",
             KvframeJson.Write(new List<KeyValuePair<string, object>>
             {
                 new KeyValuePair<string, object>("state", KvframeJson.Raw("{\"pot\":60}")),
                 new KeyValuePair<string, object>("npcs", new Dictionary<string, object>()),
             }),
             "Raw JSON (JsonUtility's, say) is copied as is; an empty dictionary is {}");

        Refused(new Dictionary<string, object> { { "hp", double.NaN } }, "$.hp", "NaN is refused, with its path");
        Refused(new List<object> { 1, new object() }, "$[1]", "an object of no known shape is refused, with its path");
        Refused(new Dictionary<int, object> { { 3, 1 } }, "$", "a key that is not a string is refused");

        Console.WriteLine(checks + " checks passed");
        return 0;
    }
}
