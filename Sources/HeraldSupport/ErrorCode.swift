/// The code of one kind of failure: a string under a name, as postgres-nio's codes are, so that
/// a code added later breaks no caller's `switch`. Each error names its own codes in an
/// `extension ErrorCode where Domain == ThatError`; `Domain` keeps them apart, so a store's
/// `timeout` never equals a connection's.
public struct ErrorCode<Domain>: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
}
