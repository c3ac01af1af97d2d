import Foundation

extension PostgresConfiguration {
    /// Parses `postgres://user:password@host:port/database?key=value&…` (or `postgresql://`).
    ///
    /// Every part is percent-decoded. IPv6 hosts go in brackets (`[::1]`); a Unix-socket
    /// directory can be given as `host=/path` in the query or percent-encoded in the host.
    /// Query keys: `sslmode`, `application_name`, `connect_timeout` (seconds), `sslrootcert`,
    /// `sslcert`, `sslkey`, `host`, `port`, `user`, `password`, `dbname`, and Herald's own
    /// `pool_size` and `statement_timeout` (milliseconds). Any other key is rejected so that a
    /// typo does not pass silently. Several hosts (`h1,h2`) are not supported.
    ///
    /// - Throws: ``PostgresError`` with code ``PostgresError/Code/invalidConfiguration``; its
    ///   message never contains the password.
    public init(url: String) throws(PostgresError) {
        func fail(_ message: String) -> PostgresError {
            PostgresError(code: .invalidConfiguration, message: "invalid PostgreSQL URL: \(message)")
        }
        var rest = Substring(url)
        let lowered = url.lowercased()
        if lowered.hasPrefix("postgres://") {
            rest = rest.dropFirst("postgres://".count)
        } else if lowered.hasPrefix("postgresql://") {
            rest = rest.dropFirst("postgresql://".count)
        } else {
            throw fail("the scheme must be postgres:// or postgresql://")
        }
        if rest.contains("#") { throw fail("a fragment (#) is not allowed") }

        var queryPart: Substring?
        if let mark = rest.firstIndex(of: "?") {
            queryPart = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var pathPart: Substring?
        if let slash = rest.firstIndex(of: "/") {
            pathPart = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var hostPart = rest
        var userPart: Substring?
        if let at = rest.lastIndex(of: "@") {
            userPart = rest[..<at]
            hostPart = rest[rest.index(after: at)...]
        }

        self.init(host: nil)

        if let userPart {
            if let colon = userPart.firstIndex(of: ":") {
                user = try Self.decodeComponent(userPart[..<colon], what: "user name")
                password = try Self.decodeComponent(userPart[userPart.index(after: colon)...], what: "password")
            } else {
                user = try Self.decodeComponent(userPart, what: "user name")
            }
            if user?.isEmpty == true { user = nil }
        }

        var portText: Substring?
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else { throw fail("unterminated [ in the host") }
            host = String(hostPart[hostPart.index(after: hostPart.startIndex)..<close])
            let after = hostPart[hostPart.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("unexpected text after ]") }
                portText = after.dropFirst()
            }
        } else {
            if let colon = hostPart.lastIndex(of: ":") {
                portText = hostPart[hostPart.index(after: colon)...]
                hostPart = hostPart[..<colon]
            }
            if !hostPart.isEmpty { host = try Self.decodeComponent(hostPart, what: "host") }
        }
        if let host, host.contains(",") { throw fail("several hosts are not supported") }
        if let portText { port = try Self.parsePort(portText, fail: fail) }

        if let pathPart {
            if pathPart.contains("/") { throw fail("the database name must not contain /") }
            let name = try Self.decodeComponent(pathPart, what: "database name")
            database = name.isEmpty ? nil : name
        }

        if let queryPart, !queryPart.isEmpty {
            for pair in queryPart.split(separator: "&", omittingEmptySubsequences: true) {
                guard let equals = pair.firstIndex(of: "=") else { throw fail("query item without =") }
                let key = try Self.decodeComponent(pair[..<equals], what: "query key")
                let value = try Self.decodeComponent(pair[pair.index(after: equals)...], what: "value of \(key)")
                switch key {
                case "sslmode":
                    guard let mode = SSLMode(rawValue: value) else { throw fail("unknown sslmode \"\(value)\"") }
                    sslMode = mode
                case "application_name": applicationName = value
                case "connect_timeout":
                    guard let seconds = Int(value), seconds > 0 else { throw fail("connect_timeout must be a positive number of seconds") }
                    connectTimeout = .seconds(seconds)
                case "statement_timeout":
                    guard let ms = Int(value), ms >= 0 else { throw fail("statement_timeout must be milliseconds >= 0") }
                    statementTimeout = ms == 0 ? nil : .milliseconds(ms)
                case "pool_size":
                    guard let size = Int(value), size >= 1 else { throw fail("pool_size must be at least 1") }
                    poolSize = size
                case "sslrootcert": sslRootCertificatePath = value
                case "sslcert": sslCertificatePath = value
                case "sslkey": sslKeyPath = value
                case "host": host = value
                case "port": port = try Self.parsePort(Substring(value), fail: fail)
                case "user": user = value
                case "password": password = value
                case "dbname": database = value
                default: throw fail("unsupported query parameter \"\(key)\"")
                }
            }
        }
        try validate()
    }

    private static func parsePort(_ text: Substring, fail: (String) -> PostgresError) throws(PostgresError) -> Int {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(text), (1...65535).contains(port)
        else { throw fail("the port must be a number in 1...65535") }
        return port
    }

    /// Percent-decodes one URL component (Foundation's codec); rejects bad escapes, invalid UTF-8
    /// and NUL.
    static func decodeComponent(_ text: Substring, what: String) throws(PostgresError) -> String {
        func fail(_ message: String) -> PostgresError {
            PostgresError(code: .invalidConfiguration, message: "invalid PostgreSQL URL: \(what): \(message)")
        }
        guard let decoded = String(text).removingPercentEncoding else { throw fail("bad percent escape, or not valid UTF-8 once decoded") }
        guard !decoded.utf8.contains(0) else { throw fail("NUL is not allowed") }
        return decoded
    }
}
