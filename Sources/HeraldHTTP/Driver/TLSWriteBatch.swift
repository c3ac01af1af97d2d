internal import CCurl

/// Holds a driver pass's TLS records back and sends each connection's in one `send(2)` when the
/// pass ends (the C side, `herald_tls_buffer` in CCurl's shim, says how).
///
/// Why: libcurl 7.88 hands OpenSSL every HTTP/2 frame on its own and OpenSSL writes each record
/// at once, so a push cost several system calls (its HEADERS, its DATA, window updates), each
/// also running the receiving side's TCP input on loopback. Held for the pass, a connection's
/// records leave in one write (docs/performance.md, "Batched TLS writes").
///
/// A connection is batched from its first response on (the handshake and the first request go
/// as libcurl sends them), only when libcurl runs on the same OpenSSL as this process and the
/// TLS session runs directly on the connection's socket (no HTTPS proxy: the held bytes are
/// written to the socket itself). Nothing waits longer than the pass: the driver calls
/// ``flush(into:)`` before every poll and polls the sockets that could not take everything
/// for writing.
///
/// Thread rule: driver thread only, like every libcurl call; freed after `curl_multi_cleanup`.
final class TLSWriteBatch {
    private let buffers: UnsafeMutablePointer<herald_tls_buffers>
    /// Sockets whose buffer could not be emptied, for `curl_multi_poll`'s extra descriptors.
    private var waiting: [curl_waitfd]

    /// Nil when batching does not apply: libcurl's TLS library is not the OpenSSL this process
    /// links, the client tunnels through an HTTPS proxy, or the C side cannot start.
    init?(configuration: HTTPClientConfiguration) {
        guard configuration.httpVersion.kind != .http2PriorKnowledge, Self.sameOpenSSL else { return nil }
        if let proxy = configuration.proxy, proxy.url.lowercased().hasPrefix("https:") { return nil }
        guard herald_tls_buffer_method() != nil, let buffers = herald_tls_buffers_new() else { return nil }
        self.buffers = buffers
        self.waiting = Array(repeating: curl_waitfd(), count: 8)
    }

    deinit {
        herald_tls_buffers_free(buffers)
    }

    /// Whether libcurl's TLS library is the OpenSSL this process links ("OpenSSL/3.0.17" both):
    /// the buffer is put into libcurl's SSL objects, so they must be the same library.
    static let sameOpenSSL: Bool = {
        guard let info = curl_version_info(CURLVERSION_ELEVENTH), let curlSSL = info.pointee.ssl_version,
            let ours = herald_openssl_version()
        else { return false }
        return String(cString: curlSSL) == "OpenSSL/" + String(cString: ours)
    }()

    /// Lets the batch see the sockets `easy` opens and closes; once per easy handle.
    func attach(_ easy: EasyHandle) throws {
        try Curl.check(herald_tls_buffers_attach(easy.raw, buffers), call: "curl_easy_setopt(CURLOPT_SOCKOPTFUNCTION)")
    }

    /// From a transfer's header callback: batches its connection when the transfer opened it.
    func adopt(_ easy: EasyHandle) {
        _ = herald_tls_buffers_adopt(buffers, easy.raw)
    }

    /// Sends what every batched connection holds, then sleeps in `curl_multi_poll` as the driver
    /// would, also waking when a socket that could not take everything can take more.
    func flushAndPoll(_ multi: UnsafeMutableRawPointer, timeoutMilliseconds: Int32) -> CURLMcode {
        waiting.withUnsafeMutableBufferPointer { waiting in
            let pending = Int(herald_tls_buffers_flush(buffers, waiting.baseAddress, Int32(waiting.count)))
            // More full sockets than slots (never with the usual two connections): look again soon.
            let timeout = pending > waiting.count ? min(timeoutMilliseconds, 1) : timeoutMilliseconds
            return curl_multi_poll(multi, waiting.baseAddress, UInt32(min(pending, waiting.count)), timeout, nil)
        }
    }

    /// Connections batched since the client started.
    var connectionsBatched: Int { Int(buffers.pointee.installed) }
    /// `send(2)` calls that carried batched records since the client started.
    var sends: Int { Int(buffers.pointee.sends) }
}
