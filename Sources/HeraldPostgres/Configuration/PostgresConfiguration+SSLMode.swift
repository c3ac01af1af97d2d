extension PostgresConfiguration {
    /// libpq's `sslmode`, as an extensible value (see the libpq documentation for each mode).
    public struct SSLMode: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        /// Accepts only the modes libpq 15 knows, so that a typo fails at parse time.
        public init?(rawValue: String) {
            guard Self.known.contains(rawValue) else { return nil }
            self.rawValue = rawValue
        }

        private init(known rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        public static let disable = SSLMode(known: "disable")
        public static let allow = SSLMode(known: "allow")
        public static let prefer = SSLMode(known: "prefer")
        public static let require = SSLMode(known: "require")
        public static let verifyCA = SSLMode(known: "verify-ca")
        public static let verifyFull = SSLMode(known: "verify-full")

        private static let known: Set<String> = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]
    }
}
