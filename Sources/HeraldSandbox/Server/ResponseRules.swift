/// HTTP rules both protocol handlers follow when writing a handler's response.
enum ResponseRules {
    /// 1xx, 204 and 304 responses and answers to HEAD carry no body.
    static func allowsBody(status: Int, isHead: Bool) -> Bool {
        !isHead && allowsContentLength(status: status) && status != 304
    }

    /// 1xx and 204 responses must not carry `content-length`.
    static func allowsContentLength(status: Int) -> Bool {
        !(100..<200).contains(status) && status != 204
    }

    /// Headers the server sets itself or that HTTP/2 forbids; handlers' values are ignored.
    static func isManagedHeader(_ lowercasedName: String) -> Bool {
        switch lowercasedName {
        case "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection":
            true
        default:
            lowercasedName.hasPrefix(":")
        }
    }
}
