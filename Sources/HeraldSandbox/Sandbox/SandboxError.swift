import HeraldSupport

/// The sandbox could not start: files it cannot write or read back, a bad rules file, a port in
/// use (the server's own error is wrapped in `detail`).
public struct SandboxError: Error, Sendable, CustomStringConvertible {
    public typealias Code = ErrorCode<SandboxError>

    public var code: Code
    public var detail: String

    public init(_ code: Code, detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "sandbox: \(detail)" }
}

extension ErrorCode where Domain == SandboxError {
    public static let cannotWriteFiles = Self("cannotWriteFiles")
    public static let invalidFiles = Self("invalidFiles")
    public static let invalidRules = Self("invalidRules")
    public static let cannotListen = Self("cannotListen")
}
