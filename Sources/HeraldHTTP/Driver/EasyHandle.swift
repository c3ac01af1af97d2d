internal import CCurl

/// Owns one libcurl easy handle (`CURL *`) and its error buffer.
///
/// Thread rule: created, used and freed only on the client's driver thread. The handle is freed
/// once, in `deinit`, after the driver has removed it from the multi handle.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    /// `CURLOPT_ERRORBUFFER`: libcurl writes a specific message here when a transfer fails.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private static let errorBufferSize = Int(CURL_ERROR_SIZE) + 1

    init() throws {
        guard let raw = curl_easy_init() else {
            throw HTTPClientError(code: .internalFailure, call: "curl_easy_init", detail: "returned NULL")
        }
        self.raw = raw
        errorBuffer = .allocate(capacity: Self.errorBufferSize)
        errorBuffer.initialize(repeating: 0, count: Self.errorBufferSize)
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    /// Identifies the handle in the driver's tables and in `curl_multi_info_read` messages.
    var key: Int { Int(bitPattern: raw) }

    /// The current request's header lines (`CURLOPT_HTTPHEADER`), rewritten for each request.
    let headerLines = HeaderLines()

    /// The options every request of the client shares are set (``Transfer`` sets them once per
    /// handle, and only the request's own options on a recycled handle).
    var isConfigured = false

    /// Ready for the next request: the error buffer cleared, every option kept (connections
    /// live in the multi handle, not here).
    func recycle() {
        errorBuffer[0] = 0
    }

    /// The error buffer's text, or nil when libcurl wrote none.
    var errorText: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    func attachErrorBuffer() throws {
        errorBuffer[0] = 0
        try Curl.check(herald_curl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer), call: Self.setopt(CURLOPT_ERRORBUFFER))
    }

    func set(_ option: CURLoption, _ value: Int) throws {
        try Curl.check(herald_curl_easy_setopt_long(raw, option, value), call: Self.setopt(option))
    }

    func set(_ option: CURLoption, _ value: Bool) throws {
        try set(option, value ? 1 : 0)
    }

    /// libcurl copies string options (since 7.17), so the C string need only live for the call.
    func set(_ option: CURLoption, _ value: String) throws {
        let code = value.withCString { herald_curl_easy_setopt_string(raw, option, $0) }
        try Curl.check(code, call: Self.setopt(option))
    }

    /// Sets a string option back to NULL (libcurl's default).
    func clear(_ option: CURLoption) throws {
        try Curl.check(herald_curl_easy_setopt_pointer(raw, option, nil), call: Self.setopt(option))
    }

    func set(_ option: CURLoption, offset value: Int64) throws {
        try Curl.check(herald_curl_easy_setopt_offset(raw, option, curl_off_t(value)), call: Self.setopt(option))
    }

    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws {
        try Curl.check(herald_curl_easy_setopt_pointer(raw, option, value), call: Self.setopt(option))
    }

    func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) throws {
        try Curl.check(herald_curl_easy_setopt_slist(raw, option, value), call: Self.setopt(option))
    }

    func set(_ option: CURLoption, callback: herald_curl_data_callback) throws {
        try Curl.check(herald_curl_easy_setopt_data_callback(raw, option, callback), call: Self.setopt(option))
    }

    /// A blob option with `CURL_BLOB_COPY`: libcurl keeps its own copy.
    func set(_ option: CURLoption, blob bytes: [UInt8]) throws {
        let code = bytes.withUnsafeBytes { buffer -> CURLcode in
            var blob = curl_blob(
                data: UnsafeMutableRawPointer(mutating: buffer.baseAddress),
                len: buffer.count,
                flags: UInt32(CURL_BLOB_COPY)
            )
            return herald_curl_easy_setopt_blob(raw, option, &blob)
        }
        try Curl.check(code, call: Self.setopt(option))
    }

    /// `CURLOPT_COPYPOSTFIELDS` with an explicit size first, so that binary bodies (with NUL
    /// bytes) are sent whole; libcurl copies the bytes, the array may go away afterwards.
    func setBody(_ bytes: [UInt8]) throws {
        try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(bytes.count))
        let code = bytes.withUnsafeBytes { buffer -> CURLcode in
            if let base = buffer.baseAddress, buffer.count > 0 {
                return herald_curl_easy_setopt_pointer(raw, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base))
            }
            return "".withCString { herald_curl_easy_setopt_string(raw, CURLOPT_COPYPOSTFIELDS, $0) }
        }
        try Curl.check(code, call: Self.setopt(CURLOPT_COPYPOSTFIELDS))
    }

    /// A `long` item of `curl_easy_getinfo`, or nil if libcurl refused it.
    func info(_ item: CURLINFO) -> Int? {
        var value = 0
        guard herald_curl_easy_getinfo_long(raw, item, &value) == CURLE_OK else { return nil }
        return value
    }

    /// A `curl_off_t` item of `curl_easy_getinfo` (the `…_TIME_T` items, in microseconds), or nil
    /// if libcurl refused it.
    func offsetInfo(_ item: CURLINFO) -> Int64? {
        var value: curl_off_t = 0
        guard herald_curl_easy_getinfo_offset(raw, item, &value) == CURLE_OK else { return nil }
        return Int64(value)
    }

    /// The socket of the connection the transfer uses, if it has one.
    var socket: Int32? {
        var value: curl_socket_t = -1
        guard herald_curl_easy_getinfo_socket(raw, CURLINFO_ACTIVESOCKET, &value) == CURLE_OK, value >= 0 else { return nil }
        return value
    }

    private static func setopt(_ option: CURLoption) -> String {
        "curl_easy_setopt(option \(option.rawValue))"
    }
}
