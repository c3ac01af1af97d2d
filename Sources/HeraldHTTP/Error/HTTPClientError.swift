import HeraldSupport

/// Why an HTTP request (or the client itself) failed.
///
/// Only transport failures are errors: a response with any HTTP status is returned, not thrown.
/// `code` is what callers switch on; the other fields say which libcurl call failed and with
/// what message (`curl_easy_strerror` plus the transfer's `CURLOPT_ERRORBUFFER` text), captured
/// the moment the failure was seen. `description` is safe for logs: it shows only the URL's
/// origin (APNs paths carry device tokens) and never a password. `debugDescription` adds the
/// full URL.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<HTTPClientError>

    public var code: Code
    /// The libcurl call or client step that failed, e.g. `curl_multi_info_read`.
    public var call: String
    /// The numeric `CURLcode` (or `CURLMcode` for multi calls), when libcurl reported one.
    public var curlCode: Int?
    /// libcurl's generic message for `curlCode` (`curl_easy_strerror`).
    public var curlMessage: String?
    /// libcurl's specific message for this transfer (`CURLOPT_ERRORBUFFER`), or a message from
    /// the client itself.
    public var detail: String?
    /// The configuration file involved, for `.invalidConfiguration`.
    public var file: String?
    /// The URL of the failed request. Shown only by `debugDescription`.
    public var url: String?
    /// The proxy's answer to CONNECT when it refused the tunnel (e.g. 407).
    public var proxyStatus: Int?

    public init(
        code: Code,
        call: String,
        curlCode: Int? = nil,
        curlMessage: String? = nil,
        detail: String? = nil,
        file: String? = nil,
        url: String? = nil,
        proxyStatus: Int? = nil
    ) {
        self.code = code
        self.call = call
        self.curlCode = curlCode
        self.curlMessage = curlMessage
        self.detail = detail
        self.file = file
        self.url = url
        self.proxyStatus = proxyStatus
    }

    public var description: String {
        render(url: url.map(Self.origin(of:)))
    }

    public var debugDescription: String {
        render(url: url)
    }

    private func render(url: String?) -> String {
        var text = "HTTPClientError.\(code): \(call)"
        if let curlCode { text += " failed with CURLcode \(curlCode)" }
        if let curlMessage { text += " (\(curlMessage))" }
        if let detail, !detail.isEmpty { text += ": \(detail)" }
        if let proxyStatus { text += "; proxy answered \(proxyStatus)" }
        if let file { text += "; file: \(file)" }
        if let url { text += "; url: \(url)" }
        return text
    }

    /// `scheme://host[:port]` of a URL, without user info, path or query.
    static func origin(of url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return "<url>" }
        let rest = url[schemeEnd.upperBound...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") {
            authority = authority[authority.index(after: at)...]
        }
        return String(url[..<schemeEnd.upperBound]) + authority
    }
}

extension ErrorCode where Domain == HTTPClientError {
    /// The request (or connecting) took longer than its timeout.
    public static let timeout = Self("timeout")
    /// The TCP connection to the server was refused or failed.
    public static let couldNotConnect = Self("couldNotConnect")
    /// The server's host name did not resolve.
    public static let couldNotResolve = Self("couldNotResolve")
    /// The TLS handshake failed: untrusted or mismatched server certificate, a rejected or
    /// unreadable client certificate, no common protocol.
    public static let tlsFailure = Self("tlsFailure")
    /// The configured proxy could not be reached, refused the tunnel (`proxyStatus`, e.g. 407
    /// for bad credentials), or failed to reach the server.
    public static let proxyFailure = Self("proxyFailure")
    /// Sending on an established connection failed.
    public static let sendFailure = Self("sendFailure")
    /// Receiving failed, or the server closed the connection before a full response.
    public static let receiveFailure = Self("receiveFailure")
    /// An HTTP/2 framing or stream error (a reset stream, GOAWAY mid-request).
    public static let http2Failure = Self("http2Failure")
    /// The response body was larger than ``HTTPClientConfiguration/maxResponseBodySize``.
    public static let responseTooLarge = Self("responseTooLarge")
    /// The configuration is unusable (missing file, bad value); `file` names the file.
    public static let invalidConfiguration = Self("invalidConfiguration")
    /// The request is malformed (bad URL, a header with CR/LF).
    public static let invalidRequest = Self("invalidRequest")
    /// The client was shut down before or while the request ran.
    public static let shutdown = Self("shutdown")
    /// Any other libcurl transfer failure; `curlCode` and the messages say which.
    public static let transferFailed = Self("transferFailed")
    /// The libcurl multi interface itself failed (out of memory, internal error).
    public static let internalFailure = Self("internalFailure")

}
