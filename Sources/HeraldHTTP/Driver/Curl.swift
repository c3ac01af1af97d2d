internal import CCurl

/// The one funnel between Swift and libcurl's return codes: every `CURLcode`/`CURLMcode` is
/// turned into an ``HTTPClientError`` here, with libcurl's own message captured at once and the
/// call named. Also owns the process-wide `curl_global_init`.
enum Curl {
    /// `curl_global_init` runs exactly once per process (Swift runs a static `let` initialiser
    /// once, thread-safely), before the first handle is made. It is never undone: libcurl's
    /// global cleanup is not safe while any other thread might use libcurl.
    private static let globalInitResult: Int = Int(curl_global_init(Int(CURL_GLOBAL_ALL)).rawValue)

    static func initializeOnce() throws {
        let result = globalInitResult
        guard result == Int(CURLE_OK.rawValue) else {
            throw error(code: CURLcode(rawValue: UInt32(result)), call: "curl_global_init", detail: nil, url: nil)
        }
    }

    /// libcurl 7.88.0 and 7.88.1 break a reused HTTP/2 prior-knowledge (h2c) connection: the
    /// second request on it fails with CURLE_HTTP2 ("Error in the HTTP2 framing layer"; curl
    /// issue 10634, fixed in 8.0.0). Debian 12 ships 7.88.1, so prior-knowledge transfers get a
    /// connection each there. HTTP/2 over TLS is not affected.
    static let priorKnowledgeReuseBroken: Bool = {
        guard let info = curl_version_info(CURLVERSION_ELEVENTH) else { return true }
        return (0x075800...0x0758FF).contains(Int(info.pointee.version_num))
    }()

    /// Throws unless `code` is `CURLE_OK`.
    static func check(_ code: CURLcode, call: @autoclosure () -> String, detail: String? = nil, url: String? = nil) throws {
        guard code != CURLE_OK else { return }
        throw error(code: code, call: call(), detail: detail, url: url)
    }

    /// Throws unless `code` is `CURLM_OK`.
    static func check(_ code: CURLMcode, call: @autoclosure () -> String) throws {
        guard code != CURLM_OK else { return }
        throw error(multiCode: code, call: call())
    }

    static func error(code: CURLcode, call: String, detail: String?, url: String?, proxyStatus: Int? = nil) -> HTTPClientError {
        HTTPClientError(
            code: proxyStatus != nil ? .proxyFailure : classify(code),
            call: call,
            curlCode: Int(code.rawValue),
            curlMessage: String(cString: curl_easy_strerror(code)),
            detail: detail,
            url: url,
            proxyStatus: proxyStatus
        )
    }

    static func error(multiCode: CURLMcode, call: String) -> HTTPClientError {
        HTTPClientError(
            code: .internalFailure,
            call: call,
            curlCode: Int(multiCode.rawValue),
            curlMessage: String(cString: curl_multi_strerror(multiCode))
        )
    }

    /// Maps a transfer's `CURLcode` to the code callers switch on.
    static func classify(_ code: CURLcode) -> HTTPClientError.Code {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            .timeout
        case CURLE_COULDNT_CONNECT:
            .couldNotConnect
        case CURLE_COULDNT_RESOLVE_HOST:
            .couldNotResolve
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_PROXY:
            .proxyFailure
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CLIENTCERT:
            .tlsFailure
        case CURLE_SEND_ERROR:
            .sendFailure
        case CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE:
            .receiveFailure
        case CURLE_HTTP2, CURLE_HTTP2_STREAM:
            .http2Failure
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT:
            .invalidRequest
        case CURLE_UNKNOWN_OPTION, CURLE_NOT_BUILT_IN, CURLE_FAILED_INIT:
            .invalidConfiguration
        default:
            .transferFailed
        }
    }
}
