using System;

namespace Kvframe.Client
{
    /// <summary>A failed call or an Error reply. Code is the protocol's error code (1..15,
    /// from the server), or the client's own (Timeout, Disconnected, InvalidArgument,
    /// Closed, Connect).</summary>
    public sealed class KvframeException : Exception
    {
        public KvframeStatus Code { get; }
        /// <summary>The session the error is about; 0 when none.</summary>
        public ulong SessionId { get; }
        /// <summary>The request that failed (a query's or a frame's); 0 for a call that failed before sending.</summary>
        public ulong RequestId { get; }

        public KvframeException(KvframeStatus code, string message, ulong sessionId = 0, ulong requestId = 0)
            : base(code + ": " + message)
        {
            Code = code;
            SessionId = sessionId;
            RequestId = requestId;
        }
    }
}
