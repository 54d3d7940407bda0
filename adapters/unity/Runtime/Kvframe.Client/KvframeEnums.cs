// Mirrors of the C enums in include/kvframe/client/kvframe_client.h. The
// values are the wire protocol's (protocol/kvframe.fbs) and never change.
namespace Kvframe.Client
{
    public enum KvframeStatus
    {
        Ok = 0,
        Malformed = 1,
        TooLarge = 2,
        WrongVersion = 3,
        UnknownSession = 4,
        BadRequest = 5,
        BadJson = 6,
        OutOfOrder = 7,
        Deadline = 8,
        Busy = 9,
        ContextFull = 10,
        Engine = 11,
        Unsupported = 12,
        ShuttingDown = 13,
        Internal = 14,
        Unsatisfiable = 15,
        QuotaExceeded = 16,
        StaleBase = 17,
        /// <summary>The session names an adapter the server has not loaded (the message lists them).</summary>
        UnknownAdapter = 18,
        Timeout = 100,
        Disconnected = 101,
        InvalidArgument = 200,
        Closed = 201,
        Empty = 202,
        Connect = 203,
        /// <summary>KvframeActionValue: no such key or index.</summary>
        NotFound = 204,
        /// <summary>KvframeActionValue: the value is not of the type asked for.</summary>
        TypeMismatch = 205,
        /// <summary>An error code these bindings' library does not know, from a newer server
        /// (the message carries the number the server sent).</summary>
        Unknown = 206,
    }

    public enum KvframeMode { Full = 0, Prefix = 1, Block = 2 }

    public enum KvframeFrameFormat { Whole = 0, MergePatch = 1, JsonPatch = 2 }

    public enum KvframeTaskKind { Text = 0, NpcAction = 1, Commentary = 2 }

    /// <summary>Why the answer ended. Complete: the output schema's JSON value is whole.</summary>
    public enum KvframeStopReason { StopToken = 0, MaxTokens = 1, ContextFull = 2, StopString = 3, Complete = 4 }

    /// <summary>kvf_value_type: what a KvframeActionValue holds. Int: a JSON integer within
    /// a long; Double: any other number.</summary>
    public enum KvframeValueType { None = 0, Null = 1, Bool = 2, Int = 3, Double = 4, String = 5, Array = 6, Object = 7 }
}
