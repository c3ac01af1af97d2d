import HeraldSupport

/// A provider sender cannot start: a credential file is missing, unreadable or wrong, or a value
/// is malformed. Thrown by ``APNsConfiguration/validate()``, ``FCMConfiguration/validate()`` and
/// the senders' initialisers, so that the worker refuses to start with a message that names the
/// file and the problem instead of failing every delivery later.
///
/// `description` names the file and the problem and never contains key material, passwords or
/// tokens; `debugDescription` adds the underlying library's error text.
public struct SenderConfigurationError: Error, Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<SenderConfigurationError>

    public var code: Code
    /// The file involved, if any.
    public var file: String?
    /// The field involved (`client_email`, `topics`…), if any.
    public var field: String?
    /// What is wrong, for an operator; never contains secrets.
    public var problem: String
    /// The underlying library's message, for `debugDescription` only.
    public var underlying: String?

    public init(_ code: Code, file: String? = nil, field: String? = nil, problem: String, underlying: String? = nil) {
        self.code = code
        self.file = file
        self.field = field
        self.problem = problem
        self.underlying = underlying
    }

    public var description: String {
        var text = ""
        if let file { text += "\(file): " }
        if let field { text += "\(field): " }
        return text + problem
    }

    public var debugDescription: String {
        "SenderConfigurationError.\(code): \(description)" + (underlying.map { " (\($0))" } ?? "")
    }
}

extension ErrorCode where Domain == SenderConfigurationError {
    /// The file does not exist (or is a folder).
    public static let fileMissing = Self("fileMissing")
    /// The file exists but cannot be read.
    public static let fileUnreadable = Self("fileUnreadable")
    /// The file is not PEM text where PEM is expected.
    public static let notPEM = Self("notPEM")
    /// The key is of the wrong type (APNs needs P-256, Google needs RSA) or cannot be parsed.
    public static let wrongKeyType = Self("wrongKeyType")
    /// The key is encrypted; Herald needs it unencrypted (APNs `.p8`, service accounts).
    public static let encryptedKey = Self("encryptedKey")
    /// An APNs key id or team id that is not 10 upper-case letters and digits.
    public static let invalidIdentifier = Self("invalidIdentifier")
    /// A service-account file that is not JSON (truncated, say) or not a service account.
    public static let invalidServiceAccount = Self("invalidServiceAccount")
    /// A required field of a service-account file is absent or empty; `field` names it.
    public static let missingField = Self("missingField")
    /// A certificate or PKCS#12 file that cannot be read (wrong password, not a certificate).
    public static let invalidCertificate = Self("invalidCertificate")
    /// The certificate's `notAfter` is in the past.
    public static let certificateExpired = Self("certificateExpired")
    /// The certificate's `notBefore` is in the future.
    public static let certificateNotYetValid = Self("certificateNotYetValid")
    /// A value that is not a file: no topics, a malformed URL, two projects with one id.
    public static let invalidValue = Self("invalidValue")
}
