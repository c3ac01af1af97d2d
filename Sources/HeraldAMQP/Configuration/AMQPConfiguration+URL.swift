import Foundation

extension AMQPConfiguration {
    /// Parses an AMQP URL: `amqp[s]://[user[:password]@]host[:port][,host[:port]…][/vhost][?query]`.
    ///
    /// - Several hosts, comma separated, are the nodes of a cluster: connections try them in turn
    ///   (``nodes``), each with its own port or the scheme's default.
    /// - User, password, host and vhost are percent-decoded (`%2F` is `/`, so `/%2F` and a missing
    ///   or empty path both mean the default vhost `/`). A vhost path with an unescaped `/` inside
    ///   is rejected. Without user info, `guest`/`guest` is used; without a host, `localhost`.
    /// - The default port is 5672 (`amqp`) or 5671 (`amqps`). IPv6 hosts go in brackets.
    /// - `amqps` turns TLS on with peer verification; query keys `cacertfile`, `certfile`,
    ///   `keyfile` and `verify=verify_none|verify_peer` adjust it.
    /// - Query keys `heartbeat` (seconds), `connection_timeout` (milliseconds), `frame_max`,
    ///   `channel_max` and `connection_name` set the matching fields; other keys are ignored, as
    ///   RabbitMQ's own clients do.
    ///
    /// - Throws: ``AMQPError`` with code ``AMQPError/Code/invalidURL``. The message names the part
    ///   that is wrong and never repeats the password. A NUL character (`%00`) is refused
    ///   anywhere: librabbitmq would cut the value short at it.
    public init(url: String) throws(AMQPError) {
        self.init()
        func invalid(_ why: String) -> AMQPError {
            AMQPError(code: .invalidURL, call: "AMQPConfiguration(url:)", message: why)
        }

        guard let schemeEnd = url.firstRange(of: "://") else { throw invalid("missing scheme (amqp:// or amqps://)") }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        switch scheme {
        case "amqp": tls = nil; port = 5672
        case "amqps": tls = AMQPTLSConfiguration(); port = 5671
        default: throw invalid("unsupported scheme '\(scheme)'; expected amqp or amqps")
        }
        var rest = Substring(url[schemeEnd.upperBound...])
        if rest.contains("#") { throw invalid("fragments (#) are not allowed") }
        if rest.contains(where: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
            throw invalid("whitespace is not allowed")
        }

        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[slash...]
            rest = rest[..<slash]
        }

        // Authority: [userinfo@]host[:port]
        var hostPort = rest
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            hostPort = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.percentDecode(userInfo[..<colon], part: "user", invalid)
                password = try Self.percentDecode(userInfo[userInfo.index(after: colon)...], part: "password", invalid)
            } else {
                user = try Self.percentDecode(userInfo, part: "user", invalid)
                password = ""
            }
        }

        let entries = hostPort.split(separator: ",", omittingEmptySubsequences: false)
        let defaultPort = port
        for (index, entry) in entries.enumerated() {
            if entries.count > 1, entry.isEmpty { throw invalid("an empty host in the node list") }
            let (nodeHost, nodePort) = try Self.node(entry, defaultPort: defaultPort, invalid)
            if index == 0 {
                host = nodeHost
                port = nodePort
            } else {
                otherNodes.append(AMQPNode(host: nodeHost, port: nodePort))
            }
        }

        // Path: the vhost, one segment.
        let vhostPath = path.dropFirst()
        if vhostPath.contains("/") {
            throw invalid("the vhost must be one path segment (escape '/' as %2F)")
        }
        let decodedVhost = try Self.percentDecode(vhostPath, part: "vhost", invalid)
        virtualHost = decodedVhost.isEmpty ? "/" : decodedVhost

        try applyQuery(query, invalid)
    }

    /// One `host[:port]` of the authority (`[v6]:port` for IPv6).
    private static func node(_ hostPort: Substring, defaultPort: Int, _ invalid: (String) -> AMQPError) throws(AMQPError) -> (String, Int) {
        var hostText: Substring
        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw invalid("unterminated IPv6 host") }
            hostText = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after IPv6 host") }
                portText = after.dropFirst()
            }
            if hostText.isEmpty { throw invalid("empty IPv6 host") }
        } else {
            let colons = hostPort.filter { $0 == ":" }.count
            if colons > 1 { throw invalid("IPv6 hosts must be written in brackets") }
            if let colon = hostPort.firstIndex(of: ":") {
                hostText = hostPort[..<colon]
                portText = hostPort[hostPort.index(after: colon)...]
            } else {
                hostText = hostPort
            }
        }
        let decodedHost = try Self.percentDecode(hostText, part: "host", invalid)
        let host = decodedHost.isEmpty ? "localhost" : decodedHost
        guard let portText else { return (host, defaultPort) }
        guard !portText.isEmpty else { throw invalid("empty port") }
        guard portText.allSatisfy(\.isASCII), let value = Int(portText), (1...65_535).contains(value) else {
            // Not echoed: with an unescaped '/' in the password, what is read as the port
            // is the start of the password (`amqp://user:pa/ss@host`).
            throw invalid("the port is not a number in 1…65535 (escape '/', '?' and '#' in the password as %2F, %3F, %23)")
        }
        return (host, value)
    }

    private mutating func applyQuery(_ query: Substring, _ invalid: (String) -> AMQPError) throws(AMQPError) {
        guard !query.isEmpty else { return }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try Self.percentDecode(parts[0], part: "query key", invalid)
            let value = parts.count > 1 ? try Self.percentDecode(parts[1], part: "query value", invalid) : ""
            func number(_ range: ClosedRange<Int>) throws(AMQPError) -> Int {
                guard let n = Int(value), range.contains(n) else {
                    throw invalid("query '\(key)' must be a number in \(range.lowerBound)…\(range.upperBound)")
                }
                return n
            }
            switch key {
            case "heartbeat": heartbeat = .seconds(try number(0...65_535))
            case "connection_timeout": connectTimeout = .milliseconds(try number(1...3_600_000))
            case "frame_max": frameMax = try number(4_096...Int(Int32.max))
            case "channel_max": channelMax = try number(0...65_535)
            case "connection_name": connectionName = value
            case "cacertfile": tls?.caCertificatePath = value
            case "certfile": tls?.clientCertificatePath = value
            case "keyfile": tls?.clientKeyPath = value
            case "verify":
                switch value {
                case "verify_peer": tls?.verifyPeer = true
                case "verify_none":
                    tls?.verifyPeer = false
                    tls?.verifyHostname = false
                default: throw invalid("query 'verify' must be verify_peer or verify_none")
                }
            default: continue
            }
        }
    }

    private static func percentDecode(
        _ text: Substring,
        part: String,
        _ invalid: (String) -> AMQPError
    ) throws(AMQPError) -> String {
        // librabbitmq takes C strings: a NUL would silently cut the value short.
        guard !text.utf8.contains(0) else { throw invalid("the \(part) contains a NUL character") }
        guard text.contains("%") else { return String(text) }
        guard let decoded = String(text).removingPercentEncoding else {
            throw invalid("bad percent-escape in the \(part), or not UTF-8 once decoded")
        }
        guard !decoded.utf8.contains(0) else { throw invalid("the \(part) contains a NUL character (%00)") }
        return decoded
    }
}
