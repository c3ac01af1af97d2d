import Foundation

/// Where and how to reach PostgreSQL, and how the pool behaves.
///
/// Why a value type: the `herald` executable builds one from its configuration file or
/// `HERALD_DATABASE_URL` (``init(url:)``) and hands it to ``PostgresClient``; libraries never
/// read the environment themselves. ``description`` never shows the password.
///
/// Every connection is opened with `PQconnectdbParams` from keyword/value arrays (no
/// conninfo string is ever assembled, so nothing needs escaping) and with the session
/// settings HeraldPostgres relies on for decoding: `client_encoding=UTF8`, `TimeZone=UTC`,
/// `DateStyle=ISO`, `bytea_output=hex`, `extra_float_digits=1`.
public struct PostgresConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Host name, IP address, or a Unix-socket directory (starting with `/`); several, comma
    /// separated, are tried in turn by libpq. `nil` lets libpq pick its default (the local Unix
    /// socket).
    public var host: String?
    /// The port of every host; a per-host list is `parameters["port"]`.
    public var port: Int
    /// `nil` lets libpq use the operating-system user name.
    public var user: String?
    public var password: String?
    /// `nil` lets libpq use the user name.
    public var database: String?
    public var sslMode: SSLMode
    /// Shown in `pg_stat_activity.application_name`.
    public var applicationName: String?
    /// `sslrootcert`, `sslcert` and `sslkey` file paths, passed to libpq unchanged.
    public var sslRootCertificatePath: String?
    public var sslCertificatePath: String?
    public var sslKeyPath: String?

    /// How many connections (each with its own thread) ``PostgresClient`` opens at most.
    public var poolSize: Int
    /// Per connection attempt. libpq rounds to whole seconds and treats less than 2 s as 2 s.
    public var connectTimeout: Duration
    /// Sent as the session's `statement_timeout`; a statement exceeding it fails with
    /// ``PostgresError/Code/timeout``. `nil` leaves the server's setting.
    public var statementTimeout: Duration?
    /// After a failed connection attempt a connection slot fails fast for this long before
    /// trying again, doubling up to ``reconnectMaxDelay``. The first reconnect after a lost
    /// connection is immediate.
    public var reconnectInitialDelay: Duration
    public var reconnectMaxDelay: Duration
    /// Prepared statements kept per connection; the oldest is deallocated beyond this.
    public var preparedStatementCacheSize: Int
    /// Any other libpq connection keyword, passed unchanged (`target_session_attrs`,
    /// `gssencmode`, a per-host `port` list…). A keyword here wins over the field that
    /// sets it; `options` is added before Herald's own session settings.
    public var parameters: [String: String]

    public init(
        host: String? = "127.0.0.1",
        port: Int = 5432,
        user: String? = nil,
        password: String? = nil,
        database: String? = nil,
        sslMode: SSLMode = .prefer
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.sslMode = sslMode
        self.applicationName = "herald"
        self.poolSize = 4
        self.connectTimeout = .seconds(10)
        self.statementTimeout = nil
        self.reconnectInitialDelay = .milliseconds(100)
        self.reconnectMaxDelay = .seconds(2)
        self.preparedStatementCacheSize = 256
        self.parameters = [:]
    }

    /// The URL form, with the password replaced by `***`.
    public var description: String {
        var text = "postgres://"
        if let user {
            text += Self.percentEncode(user)
            if password != nil { text += ":***" }
            text += "@"
        }
        if let host {
            text += host.split(separator: ",").map { $0.contains(":") ? "[\($0)]" : Self.percentEncode(String($0)) }.joined(separator: ",")
        }
        text += ":\(port)"
        if let database { text += "/" + Self.percentEncode(database) }
        var query = ["sslmode=\(sslMode.rawValue)"]
        if let applicationName { query.append("application_name=\(Self.percentEncode(applicationName))") }
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) {
            query.append("\(key)=\(key.contains("password") ? "***" : Self.percentEncode(value))")
        }
        text += "?" + query.joined(separator: "&")
        text += " (pool \(poolSize))"
        return text
    }

    /// Throws ``PostgresError/Code/invalidConfiguration`` when a field cannot work.
    func validate() throws(PostgresError) {
        func fail(_ message: String) -> PostgresError {
            PostgresError(code: .invalidConfiguration, message: message)
        }
        guard poolSize >= 1 else { throw fail("poolSize must be at least 1, got \(poolSize)") }
        guard (1...65535).contains(port) else { throw fail("port must be in 1...65535, got \(port)") }
        guard connectTimeout > .zero else { throw fail("connectTimeout must be positive") }
        guard preparedStatementCacheSize >= 1 else { throw fail("preparedStatementCacheSize must be at least 1") }
        guard reconnectInitialDelay >= .zero, reconnectMaxDelay >= reconnectInitialDelay else {
            throw fail("reconnect delays must satisfy 0 <= initial <= max")
        }
        for (name, value) in [
            ("host", host), ("user", user), ("password", password), ("database", database),
            ("applicationName", applicationName),
        ] {
            if let value, value.utf8.contains(0) { throw fail("\(name) must not contain a NUL character") }
        }
    }

    /// The keyword/value pairs for `PQconnectdbParams`, in order.
    /// This configuration with a dead peer found within about `timeout` on both ends: for a
    /// session whose advisory locks say who owns what, so that a process cut from the database
    /// loses them (the server ends the session) and learns it (its statements fail) in seconds
    /// rather than after TCP's minutes. Keepalive probes from both sides and `tcp_user_timeout`
    /// (unacknowledged data) on both; no effect over a Unix socket.
    public func detectingDeadPeer(within timeout: Duration) -> PostgresConfiguration {
        var copy = self
        let milliseconds = max(1_000, Int(timeout.components.seconds) * 1_000)
        let probe = String(max(1, milliseconds / 4_000))  // seconds: idle, then 3 probes apart
        for (key, value) in [("keepalives_idle", probe), ("keepalives_interval", probe), ("keepalives_count", "3")] {
            copy.parameters[key] = value
        }
        copy.parameters["tcp_user_timeout"] = String(milliseconds)
        let server =
            "-c tcp_keepalives_idle=\(probe) -c tcp_keepalives_interval=\(probe) -c tcp_keepalives_count=3 -c tcp_user_timeout=\(milliseconds)"
        copy.parameters["options"] = [parameters["options"], server].compactMap { $0 }.joined(separator: " ")
        return copy
    }

    func connectionParameters(applicationNameSuffix: String? = nil) -> [(String, String)] {
        var parameters: [(String, String)] = []
        if let host { parameters.append(("host", host)) }
        parameters.append(("port", String(port)))
        if let user { parameters.append(("user", user)) }
        if let password { parameters.append(("password", password)) }
        if let database { parameters.append(("dbname", database)) }
        parameters.append(("sslmode", sslMode.rawValue))
        if let sslRootCertificatePath { parameters.append(("sslrootcert", sslRootCertificatePath)) }
        if let sslCertificatePath { parameters.append(("sslcert", sslCertificatePath)) }
        if let sslKeyPath { parameters.append(("sslkey", sslKeyPath)) }
        if var name = applicationName {
            if let applicationNameSuffix { name += applicationNameSuffix }
            parameters.append(("application_name", name))
        }
        let seconds = max(1, Int((connectTimeout.components.seconds)) + (connectTimeout.components.attoseconds > 0 ? 1 : 0))
        parameters.append(("connect_timeout", String(seconds)))
        parameters.append(("client_encoding", "UTF8"))
        // Keepalives find a half-open TCP connection (the listener may idle for hours).
        parameters.append(("keepalives", "1"))
        parameters.append(("keepalives_idle", "30"))
        parameters.append(("keepalives_interval", "10"))
        parameters.append(("keepalives_count", "3"))
        var options = "-c TimeZone=UTC -c DateStyle=ISO -c bytea_output=hex -c extra_float_digits=1"
        if let statementTimeout {
            let ms = max(1, statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000)
            options += " -c statement_timeout=\(ms)"
        }
        if let extra = self.parameters["options"], !extra.isEmpty { options = extra + " " + options }
        parameters.append(("options", options))
        for (key, value) in self.parameters.sorted(by: { $0.key < $1.key }) where key != "options" {
            if let index = parameters.firstIndex(where: { $0.0 == key }) {
                parameters[index].1 = value
            } else {
                parameters.append((key, value))
            }
        }
        return parameters
    }

    /// Percent-encodes a URL component: everything but RFC 3986's unreserved characters, with
    /// Foundation's codec.
    static func percentEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlUnreserved) ?? text
    }
}

extension CharacterSet {
    /// RFC 3986's unreserved characters.
    static let urlUnreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
