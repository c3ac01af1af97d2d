/// Hard limits that keep hostile or broken messages cheap to reject. The defaults are far above
/// what a real event needs (a seed 000 event is under 1 KiB with 3 levels of nesting).
public struct DecodingLimits: Sendable, Hashable, Codable {
    /// Largest document accepted, in bytes; checked before anything else is read.
    public var maxDocumentBytes: Int
    /// Deepest nesting of XML elements or JSON arrays/objects.
    public var maxDepth: Int
    /// Most `EventFilters` entries.
    public var maxFilters: Int
    /// Most `EventParams` entries.
    public var maxParams: Int
    /// Longest `EventId`, in UTF-8 bytes.
    public var maxEventIdBytes: Int

    public init(maxDocumentBytes: Int = 1 << 20, maxDepth: Int = 32, maxFilters: Int = 10_000, maxParams: Int = 1_000, maxEventIdBytes: Int = 256) {
        self.maxDocumentBytes = maxDocumentBytes
        self.maxDepth = maxDepth
        self.maxFilters = maxFilters
        self.maxParams = maxParams
        self.maxEventIdBytes = maxEventIdBytes
    }

    public static let `default` = DecodingLimits()
}
