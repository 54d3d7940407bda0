namespace Kvframe.Client
{
    // One question about a session's game state: its options (Instruction, Kind, NpcId, OutputSchema,
    // MaxTokens, sampling, Stop, Stream, FrameNumber, deadlines) are KvframeOptions.Generated.cs's,
    // from protocol/options.json. QueryAsync sets Stream when given a chunk handler.
    public sealed partial class KvframeQuery
    {
        public KvframeQuery(string instruction, KvframeTaskKind kind = KvframeTaskKind.Text)
        {
            Instruction = instruction;
            Kind = kind;
        }
    }
}
