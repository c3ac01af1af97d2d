internal import CCurl
import HTTPTypes

/// One request while libcurl carries it: the easy handle (whose ``HeaderLines`` libcurl reads
/// while sending), and the response as it arrives through the write and header callbacks.
///
/// Thread rule: driver thread only. libcurl calls the callbacks from inside
/// `curl_multi_perform`, which the driver calls, so they run on the driver thread too. The
/// driver keeps the transfer alive (in its table) for as long as the easy handle is in the multi
/// handle; the callbacks receive it unretained through `WRITEDATA`/`HEADERDATA`.
final class Transfer {
    let pending: PendingRequest
    let easy: EasyHandle
    private var responseHeaders = HTTPFields()
    private var body: [UInt8] = []
    private let bodyLimit: Int
    private(set) var bodyTooLarge = false
    private let writeBatch: TLSWriteBatch?

    init(pending: PendingRequest, easy: EasyHandle, bodyLimit: Int, writeBatch: TLSWriteBatch?) {
        self.pending = pending
        self.easy = easy
        self.bodyLimit = bodyLimit
        self.writeBatch = writeBatch
    }

    /// Sets the request's options on its easy handle: all of them on a new handle, only what
    /// changes from request to request (URL, method and body, header fields, timeout, callback
    /// data) on a recycled one, whose connection-level options are still set.
    func configure(_ resolved: ResolvedConfiguration) throws {
        let request = pending.request
        if !easy.isConfigured {
            try configureHandle(resolved)
            easy.isConfigured = true
        }
        let this = Unmanaged.passUnretained(self).toOpaque()
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_WRITEDATA, pointer: this)
        try easy.set(CURLOPT_HEADERDATA, pointer: this)
        let timeout = request.timeout.map(ResolvedConfiguration.milliseconds) ?? resolved.requestTimeoutMilliseconds
        try easy.set(CURLOPT_TIMEOUT_MS, timeout)
        try configureMethodAndBody(request)
        try configureHeaders(request.headerFields)
    }

    /// What every request of the client shares: callbacks, protocol, timeouts, TLS, proxy.
    private func configureHandle(_ resolved: ResolvedConfiguration) throws {
        let configuration = resolved.configuration
        try easy.set(CURLOPT_NOSIGNAL, true)
        try easy.attachErrorBuffer()
        try easy.set(
            CURLOPT_WRITEFUNCTION,
            callback: { buffer, size, count, userdata in
                guard let buffer, let userdata else { return 0 }
                let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
                return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
            })
        try easy.set(
            CURLOPT_HEADERFUNCTION,
            callback: { buffer, size, count, userdata in
                guard let buffer, let userdata else { return 0 }
                let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
                transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: size * count))
                return size * count
            })

        switch configuration.httpVersion.kind {
        case .http2TLS: try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        case .http2PriorKnowledge:
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
            if Curl.priorKnowledgeReuseBroken {
                try easy.set(CURLOPT_FRESH_CONNECT, true)
                try easy.set(CURLOPT_FORBID_REUSE, true)
            }
        case .http1_1: try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        }
        // Without PIPEWAIT a burst of requests opens one connection each before the first
        // connection has confirmed it can multiplex.
        try easy.set(CURLOPT_PIPEWAIT, true)
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, resolved.connectTimeoutMilliseconds)
        // Provider connections live long and idle between bursts; TCP keepalive notices a peer
        // (or a NAT or proxy in between) that silently went away.
        try easy.set(CURLOPT_TCP_KEEPALIVE, true)

        try configureTLS(configuration.tls, caBlob: resolved.caBlob)
        try configureProxy(configuration.proxy)
        if let userAgent = configuration.userAgent {
            try easy.set(CURLOPT_USERAGENT, userAgent)
        }
        try writeBatch?.attach(easy)
    }

    private func configureTLS(_ tls: HTTPClientConfiguration.TLS, caBlob: [UInt8]?) throws {
        try easy.set(CURLOPT_SSL_VERIFYPEER, tls.verifyPeer)
        try easy.set(CURLOPT_SSL_VERIFYHOST, tls.verifyHost ? 2 : 0)
        if let caBlob {
            try easy.set(CURLOPT_CAINFO_BLOB, blob: caBlob)
        } else if let caFile = tls.caFile {
            try easy.set(CURLOPT_CAINFO, caFile)
        }
        guard let certificate = tls.clientCertificate else { return }
        switch certificate.storage {
        case .pem(let certificateFile, let keyFile, let keyPassword):
            try easy.set(CURLOPT_SSLCERTTYPE, "PEM")
            try easy.set(CURLOPT_SSLCERT, certificateFile)
            try easy.set(CURLOPT_SSLKEYTYPE, "PEM")
            try easy.set(CURLOPT_SSLKEY, keyFile)
            if let keyPassword { try easy.set(CURLOPT_KEYPASSWD, keyPassword) }
        case .pkcs12File(let file, let password):
            try easy.set(CURLOPT_SSLCERTTYPE, "P12")
            try easy.set(CURLOPT_SSLCERT, file)
            if let password { try easy.set(CURLOPT_KEYPASSWD, password) }
        case .pkcs12Data(let data, let password):
            try easy.set(CURLOPT_SSLCERTTYPE, "P12")
            try easy.set(CURLOPT_SSLCERT_BLOB, blob: data)
            if let password { try easy.set(CURLOPT_KEYPASSWD, password) }
        }
    }

    private func configureProxy(_ proxy: HTTPClientConfiguration.Proxy?) throws {
        guard let proxy else {
            // An empty string disables proxies, including the ones libcurl would otherwise read
            // from `http_proxy`/`https_proxy`: libraries take configuration, not environment.
            try easy.set(CURLOPT_PROXY, "")
            return
        }
        try easy.set(CURLOPT_PROXY, proxy.url)
        try easy.set(CURLOPT_HTTPPROXYTUNNEL, true)
        // The proxy's answer to CONNECT is not part of the response the caller asked for.
        try easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, true)
        if let user = proxy.user { try easy.set(CURLOPT_PROXYUSERNAME, user) }
        if let password = proxy.password { try easy.set(CURLOPT_PROXYPASSWORD, password) }
        // An empty list must still be set, or libcurl reads `no_proxy` from the environment.
        try easy.set(CURLOPT_NOPROXY, proxy.noProxy.joined(separator: ","))
        if let caFile = proxy.caFile { try easy.set(CURLOPT_PROXY_CAINFO, caFile) }
        try easy.set(CURLOPT_PROXY_SSL_VERIFYPEER, proxy.verifyPeer)
        try easy.set(CURLOPT_PROXY_SSL_VERIFYHOST, proxy.verifyPeer ? 2 : 0)
    }

    /// Sets every method option, so that nothing is left over from the handle's last request.
    private func configureMethodAndBody(_ request: HTTPClientRequest) throws {
        let method = request.method
        if method == .head {
            try easy.set(CURLOPT_NOBODY, true)
            try easy.clear(CURLOPT_CUSTOMREQUEST)
        } else if !request.body.isEmpty || method == .post || method == .put || method == .patch {
            try easy.set(CURLOPT_NOBODY, false)
            try easy.setBody(request.body)
            if method == .post {
                try easy.clear(CURLOPT_CUSTOMREQUEST)
            } else {
                try easy.set(CURLOPT_CUSTOMREQUEST, method.rawValue)
            }
        } else {
            try easy.set(CURLOPT_HTTPGET, true)
            if method == .get {
                try easy.clear(CURLOPT_CUSTOMREQUEST)
            } else {
                try easy.set(CURLOPT_CUSTOMREQUEST, method.rawValue)
            }
        }
    }

    private func configureHeaders(_ fields: HTTPFields) throws {
        try easy.set(CURLOPT_HTTPHEADER, list: easy.headerLines.fill(fields))
    }

    // MARK: Callbacks (inside curl_multi_perform, on the driver thread)

    /// Appends body bytes; returning less than offered makes libcurl abort with
    /// `CURLE_WRITE_ERROR`, which the driver reports as `.responseTooLarge`.
    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= bodyLimit else {
            bodyTooLarge = true
            return 0
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// One header line as libcurl delivers it, CRLF included. A status line starts a new
    /// header block, so informational (1xx) responses leave nothing behind.
    private func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var line = bytes[...]
        while let last = line.last, last == 13 || last == 10 { line = line.dropLast() }
        if line.isEmpty { return }
        if line.starts(with: "HTTP/".utf8) {
            responseHeaders.removeAll(keepingCapacity: true)
            // The first answer on a connection this transfer opened: batch its writes from now on.
            writeBatch?.adopt(easy)
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
            let name = HTTPField.Name(String(decoding: Self.trimmed(line[..<colon]), as: UTF8.self))
        else { return }
        responseHeaders.append(HTTPField(name: name, lenientValue: Self.trimmed(line[(colon + 1)...])))
    }

    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var bytes = bytes
        while let first = bytes.first, first == 32 || first == 9 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 32 || last == 9 { bytes = bytes.dropLast() }
        return bytes
    }

    // MARK: Completion

    /// New connections this transfer opened (`CURLINFO_NUM_CONNECTS`).
    var connectionsOpened: Int { easy.info(CURLINFO_NUM_CONNECTS) ?? 0 }

    /// How long the server took, on the wire: libcurl's total time less its pre-transfer time,
    /// so without the time the request waited for this driver or for a connection to be made.
    /// With libcurl 7.88 it includes a wait for a free stream on a connection at the server's
    /// stream limit (libcurl 8.6's queue time would tell it apart).
    var answerTime: Duration? {
        guard let total = easy.offsetInfo(CURLINFO_TOTAL_TIME_T), let start = easy.offsetInfo(CURLINFO_PRETRANSFER_TIME_T), total >= start
        else { return nil }
        return .microseconds(total - start)
    }

    /// The response of a transfer that ended with `CURLE_OK` (``connectionsOpened`` read once by
    /// the driver, which counts it too).
    func response(connectionsOpened: Int) -> HTTPClientResponse {
        let version: HTTPClientResponse.Version =
            switch easy.info(CURLINFO_HTTP_VERSION) ?? 0 {
            case Int(CURL_HTTP_VERSION_1_0): .http1_0
            case Int(CURL_HTTP_VERSION_2_0): .http2
            case Int(CURL_HTTP_VERSION_3): .http3
            default: .http1_1
            }
        return HTTPClientResponse(
            status: HTTPResponse.Status(code: min(999, max(0, easy.info(CURLINFO_RESPONSE_CODE) ?? 0))),
            headerFields: responseHeaders,
            body: body,
            version: version,
            localPort: easy.info(CURLINFO_LOCAL_PORT),
            connectionsOpened: connectionsOpened,
            answerTime: answerTime
        )
    }

    /// The error of a transfer that ended with `code`, messages captured now.
    func failure(_ code: CURLcode, viaProxy: Bool) -> HTTPClientError {
        let url = pending.request.url
        if bodyTooLarge {
            return HTTPClientError(
                code: .responseTooLarge,
                call: "curl_multi_info_read",
                curlCode: Int(code.rawValue),
                curlMessage: String(cString: curl_easy_strerror(code)),
                detail: "response body exceeds \(bodyLimit) bytes",
                url: url
            )
        }
        var proxyStatus: Int?
        if viaProxy, let connectCode = easy.info(CURLINFO_HTTP_CONNECTCODE), connectCode != 0, connectCode / 100 != 2 {
            proxyStatus = connectCode
        }
        return Curl.error(code: code, call: "curl_multi_info_read", detail: easy.errorText, url: url, proxyStatus: proxyStatus)
    }
}
