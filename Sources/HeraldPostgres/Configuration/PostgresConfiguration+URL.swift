import Foundation

extension PostgresConfiguration {
    /// Parses `postgres://user:password@host:port/database?key=value&…` (or `postgresql://`).
    ///
    /// Every part is percent-decoded. IPv6 hosts go in brackets (`[::1]`); a Unix-socket
    /// directory can be given as `host=/path` in the query or percent-encoded in the host.
    /// Several hosts, tried in turn by libpq, go in the authority (`h1:5432,h2:5433`) or the
    /// query (`host=h1,h2&port=5432,5433`). Query keys Herald reads: `sslmode`,
    /// `application_name`, `connect_timeout` (seconds), `sslrootcert`, `sslcert`, `sslkey`,
    /// `host`, `port`, `user`, `password`, `dbname`, and its own `pool_size` and
    /// `statement_timeout` (milliseconds). Every other libpq keyword (`target_session_attrs`,
    /// `gssencmode`, `keepalives_idle`, …; what the installed libpq knows) goes to libpq unchanged (``parameters``).
    /// The URL, less Herald's own keys, is checked with libpq's `PQconninfoParse`, so that a
    /// keyword libpq does not know is refused at start-up rather than at the first connection.
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

        var libpqQuery: [String] = []
        var rawPassword: String?
        if let userPart {
            if let colon = userPart.firstIndex(of: ":") {
                rawPassword = String(userPart[userPart.index(after: colon)...])
                user = try Self.decodeComponent(userPart[..<colon], what: "user name")
                password = try Self.decodeComponent(userPart[userPart.index(after: colon)...], what: "password")
            } else {
                user = try Self.decodeComponent(userPart, what: "user name")
            }
            if user?.isEmpty == true { user = nil }
        }

        // `h1:5432,[::1]:5433,h3`: libpq tries the hosts in turn (one port list, "" = default).
        var hosts: [String] = []
        var ports: [Int?] = []
        for entry in Self.splitHosts(hostPart) {
            let (name, portText) = try Self.splitHostPort(entry, fail: fail)
            hosts.append(try Self.decodeComponent(name, what: "host"))
            if let portText { ports.append(try Self.parsePort(portText, fail: fail)) } else { ports.append(nil) }
        }
        if hosts.count == 1 {
            if !hosts[0].isEmpty { host = hosts[0] }
            if let first = ports[0] { port = first }
        } else if hosts.count > 1 {
            guard !hosts.contains(where: \.isEmpty) else { throw fail("an empty host in the host list") }
            host = hosts.joined(separator: ",")
            if ports.contains(where: { $0 != nil }) {
                port = ports.compactMap { $0 }.first ?? port
                parameters["port"] = ports.map { $0.map(String.init) ?? "" }.joined(separator: ",")
            }
        }

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
                case "port" where !value.contains(","):
                    port = try Self.parsePort(Substring(value), fail: fail)
                    parameters["port"] = nil
                case "user": user = value
                case "password": password = value
                case "dbname": database = value
                default: parameters[key] = value
                }
                if key != "pool_size" && key != "statement_timeout" { libpqQuery.append(String(pair)) }
            }
        }
        try validate()
        // libpq reads what Herald passes on: the URL without Herald's own keys.
        var libpqURL = String(url[..<(url.firstIndex(of: "?") ?? url.endIndex)])
        if !libpqQuery.isEmpty { libpqURL += "?" + libpqQuery.joined(separator: "&") }
        try ConninfoCheck.check(libpqURL, secrets: [password, rawPassword].compactMap { $0 })
    }

    /// The comma-separated entries of the authority's host part; a comma inside `[…]` is part
    /// of an IPv6 address.
    private static func splitHosts(_ text: Substring) -> [Substring] {
        var entries: [Substring] = []
        var start = text.startIndex
        var bracketed = false
        for index in text.indices {
            switch text[index] {
            case "[": bracketed = true
            case "]": bracketed = false
            case "," where !bracketed:
                entries.append(text[start..<index])
                start = text.index(after: index)
            default: break
            }
        }
        entries.append(text[start...])
        return entries
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    private static func splitHostPort(_ entry: Substring, fail: (String) -> PostgresError) throws(PostgresError) -> (Substring, Substring?) {
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else { throw fail("unterminated [ in the host") }
            let name = entry[entry.index(after: entry.startIndex)..<close]
            let after = entry[entry.index(after: close)...]
            if after.isEmpty { return (name, nil) }
            guard after.hasPrefix(":") else { throw fail("unexpected text after ]") }
            return (name, after.dropFirst())
        }
        guard let colon = entry.lastIndex(of: ":") else { return (entry, nil) }
        return (entry[..<colon], entry[entry.index(after: colon)...])
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
