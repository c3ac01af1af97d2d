/// The sandbox could not start: files it cannot write or read back, a bad rules file, a port in
/// use (the server's own error is wrapped in `detail`).
public struct SandboxError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
        public static let cannotWriteFiles = Code("cannotWriteFiles")
        public static let invalidFiles = Code("invalidFiles")
        public static let invalidRules = Code("invalidRules")
        public static let cannotListen = Code("cannotListen")
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "sandbox: \(detail)" }
}
