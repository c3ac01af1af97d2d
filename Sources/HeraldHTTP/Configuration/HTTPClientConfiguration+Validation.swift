internal import CCurl
import Foundation

extension HTTPClientConfiguration {
    /// Checks values and files before any request is made.
    ///
    /// - Throws: ``HTTPClientError`` with code `.invalidConfiguration`; for a missing or unreadable
    ///   file its `file` names the file.
    public func validate() throws {
        _ = try resolve()
    }

    /// Validates and precomputes what every transfer needs (timeouts in milliseconds, the CA
    /// bundle as one blob when both a file and PEM bytes are given).
    func resolve() throws -> ResolvedConfiguration {
        func invalid(_ detail: String, file: String? = nil) -> HTTPClientError {
            HTTPClientError(code: .invalidConfiguration, call: "HTTPClientConfiguration.validate", detail: detail, file: file)
        }
        func requireReadable(_ path: String, _ what: String) throws {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw invalid("\(what) does not exist", file: path)
            }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw invalid("\(what) is not readable", file: path)
            }
        }
        func requireText(_ value: String, _ what: String) throws {
            guard !value.utf8.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 }) else {
                throw invalid("\(what) contains CR, LF or NUL")
            }
        }

        guard maxConnectionsPerHost >= 1 else { throw invalid("maxConnectionsPerHost must be at least 1") }
        if let maxTotalConnections, maxTotalConnections < 1 {
            throw invalid("maxTotalConnections must be at least 1")
        }
        guard (1...Int(Int32.max)).contains(maxConcurrentStreamsPerConnection) else {
            throw invalid("maxConcurrentStreamsPerConnection must be between 1 and \(Int32.max)")
        }
        guard requestTimeout > .zero else { throw invalid("requestTimeout must be positive") }
        guard connectTimeout > .zero else { throw invalid("connectTimeout must be positive") }
        guard maxResponseBodySize >= 0 else { throw invalid("maxResponseBodySize must not be negative") }
        if let userAgent { try requireText(userAgent, "userAgent") }

        if httpVersion != .http1_1 {
            let info = curl_version_info(CURLVERSION_ELEVENTH)
            let features = Int(info?.pointee.features ?? 0)
            guard features & Int(CURL_VERSION_HTTP2) != 0 else {
                throw invalid("this libcurl was built without HTTP/2 (nghttp2)")
            }
        }

        // Trust: a CA file, PEM bytes, or both (libcurl lets a blob override the file, so when
        // both are given they are joined into one blob).
        var caBlob: [UInt8]?
        if let caPEM = tls.caPEM {
            guard String(decoding: caPEM, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
                throw invalid("tls.caPEM holds no PEM certificate")
            }
            caBlob = caPEM
        }
        if let caFile = tls.caFile {
            try requireReadable(caFile, "tls.caFile")
            if var blob = caBlob {
                guard let file = FileManager.default.contents(atPath: caFile) else {
                    throw invalid("tls.caFile could not be read", file: caFile)
                }
                blob.append(10)
                blob.append(contentsOf: file)
                caBlob = blob
            }
        }

        if let certificate = tls.clientCertificate {
            switch certificate.storage {
            case .pem(let certificateFile, let keyFile, let keyPassword):
                try requireReadable(certificateFile, "client certificate file")
                try requireReadable(keyFile, "client key file")
                if let keyPassword { try requireText(keyPassword, "client key password") }
            case .pkcs12File(let file, let password):
                try requireReadable(file, "client PKCS#12 file")
                if let password { try requireText(password, "PKCS#12 password") }
            case .pkcs12Data(let data, let password):
                guard !data.isEmpty else { throw invalid("client PKCS#12 data is empty") }
                if let password { try requireText(password, "PKCS#12 password") }
            }
        }

        if let proxy {
            try requireText(proxy.url, "proxy.url")
            let lower = proxy.url.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
                throw invalid("proxy.url must start with http:// or https://")
            }
            let origin = HTTPClientError.origin(of: proxy.url)
            let authority = origin.dropFirst(lower.hasPrefix("https://") ? 8 : 7)
            guard !authority.isEmpty, authority.first != ":" else {
                throw invalid("proxy.url has no host")
            }
            if let user = proxy.user { try requireText(user, "proxy.user") }
            if let password = proxy.password { try requireText(password, "proxy.password") }
            for host in proxy.noProxy {
                try requireText(host, "proxy.noProxy")
                guard !host.contains(","), !host.isEmpty else {
                    throw invalid("proxy.noProxy entries must be single, non-empty hosts")
                }
            }
            if let caFile = proxy.caFile { try requireReadable(caFile, "proxy.caFile") }
        }

        return ResolvedConfiguration(
            configuration: self,
            caBlob: caBlob,
            requestTimeoutMilliseconds: ResolvedConfiguration.milliseconds(requestTimeout),
            connectTimeoutMilliseconds: ResolvedConfiguration.milliseconds(connectTimeout)
        )
    }
}
