import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

@Suite("HTTPClient TLS", .timeLimit(.minutes(2)))
struct HTTPClientTLSTests {
    @Test("An untrusted server certificate fails with .tlsFailure; trusting the CA file succeeds")
    func untrustedThenTrusted() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(HTTPClientConfiguration()) { client in
                let error = await expectHTTPError(.tlsFailure) {
                    _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                }
                #expect(error?.curlCode == 60)  // CURLE_PEER_FAILED_VERIFICATION
            }
            try await withClient(trustingConfiguration(fixture)) { client in
                let response = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                #expect(response.status == 200)
                #expect(response.version == .http2)
            }
            // CA as PEM bytes instead of a file.
            let pem = Array(fixture.certificate.ca.certificatePEM.utf8)
            try await withClient(HTTPClientConfiguration(tls: .init(caPEM: pem))) { client in
                let status = try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(server.port)/hello")).status
                #expect(status == 200)
            }
        }
    }

    @Test("A certificate for another host fails with .tlsFailure unless host verification is off")
    func hostMismatch() async throws {
        let fixture = try TLSFixture.make(hosts: ["other.invalid"])
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                await expectHTTPError(.tlsFailure) {
                    _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                }
            }
            try await withClient(trustingConfiguration(fixture) { $0.tls.verifyHost = false }) { client in
                let status = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")).status
                #expect(status == 200)
            }
        }
    }

    @Test("A server that requires a client certificate accepts PEM and PKCS#12, and refuses none")
    func clientCertificates() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let client = try fixture.certificate.issueClientCertificate(commonName: "Herald Test Client", userID: "com.example.herald")
        let certificateFile = fixture.directory.appendingPathComponent("client.pem")
        let keyFile = fixture.directory.appendingPathComponent("client-key.pem")
        try client.write(certificateTo: certificateFile, keyTo: keyFile)
        let p12File = fixture.path("client.p12")
        try exportPKCS12(certificate: certificateFile.path, key: keyFile.path, to: p12File, password: "s3cret")

        try await withServer(tls: fixture, clientCertificateTrustPEM: fixture.certificate.ca.certificatePEM) { server in
            let url = "\(server.baseURL)/whoami"

            // No certificate: the server refuses it. Under TLS 1.3 the client finishes its side of
            // the handshake before the server's verdict arrives, so libcurl may report the alert
            // as a TLS error or as the connection failing on its first send or receive.
            try await withClient(trustingConfiguration(fixture)) { http in
                do {
                    _ = try await http.execute(HTTPClientRequest(url: url))
                    Issue.record("a request without a client certificate succeeded")
                } catch let error as HTTPClientError {
                    #expect([.tlsFailure, .sendFailure, .receiveFailure].contains(error.code), "\(error.debugDescription)")
                }
            }
            #expect(server.ledger.snapshot().totalRequestsServed == 0)

            let certificates: [(String, HTTPClientConfiguration.ClientCertificate)] = [
                ("PEM", .pem(certificateFile: certificateFile.path, keyFile: keyFile.path)),
                ("PKCS#12 file", .pkcs12(file: p12File, password: "s3cret")),
                ("PKCS#12 bytes", .pkcs12(data: Array(try Data(contentsOf: URL(fileURLWithPath: p12File))), password: "s3cret")),
            ]
            for (name, certificate) in certificates {
                try await withClient(trustingConfiguration(fixture) { $0.tls.clientCertificate = certificate }) { http in
                    let response = try await http.execute(HTTPClientRequest(url: url))
                    #expect(response.status == 200, "\(name)")
                    let subject = response.headerFields["x-client-subject"] ?? ""
                    #expect(subject.contains("Herald Test Client"), "\(name): \(subject)")
                    #expect(subject.contains("com.example.herald"), "\(name): \(subject)")
                }
            }

            // A wrong PKCS#12 password is a TLS (certificate) problem, named as such.
            try await withClient(trustingConfiguration(fixture) { $0.tls.clientCertificate = .pkcs12(file: p12File, password: "wrong") }) { http in
                await expectHTTPError(.tlsFailure) {
                    _ = try await http.execute(HTTPClientRequest(url: url))
                }
            }
        }
    }

    @Test("Missing files are reported up front, naming the file")
    func missingFiles() throws {
        let missing = "/nonexistent/herald/ca.pem"
        #expect {
            try HTTPClient(configuration: HTTPClientConfiguration(tls: .init(caFile: missing)))
        } throws: { error in
            let error = error as? HTTPClientError
            return error?.code == .invalidConfiguration && error?.file == missing
        }
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        let key = "/nonexistent/herald/key.pem"
        let pem = HTTPClientConfiguration.ClientCertificate.pem(certificateFile: fixture.files.certificate.path, keyFile: key, keyPassword: "hidden")
        #expect {
            try HTTPClientConfiguration(tls: .init(clientCertificate: pem)).validate()
        } throws: { error in
            (error as? HTTPClientError)?.file == key
        }
        #expect(!"\(pem)".contains("hidden"))
        #expect {
            try HTTPClientConfiguration(tls: .init(clientCertificate: .pkcs12(file: "/nonexistent/a.p12", password: nil))).validate()
        } throws: { error in
            (error as? HTTPClientError)?.file == "/nonexistent/a.p12"
        }
        #expect {
            try HTTPClientConfiguration(maxConnectionsPerHost: 0).validate()
        } throws: { error in
            (error as? HTTPClientError)?.code == .invalidConfiguration
        }
        #expect {
            try HTTPClientConfiguration(proxy: .init(url: "socks5://127.0.0.1:1080")).validate()
        } throws: { error in
            (error as? HTTPClientError)?.code == .invalidConfiguration
        }
        #expect {
            try HTTPClientConfiguration(proxy: .init(url: "http://:3128")).validate()
        } throws: { error in
            (error as? HTTPClientError)?.code == .invalidConfiguration
        }
        #expect {
            try HTTPClientConfiguration(tls: .init(caPEM: Array("not a certificate".utf8))).validate()
        } throws: { error in
            (error as? HTTPClientError)?.code == .invalidConfiguration
        }
    }

    /// `openssl pkcs12 -export` into the test's temporary folder.
    private func exportPKCS12(certificate: String, key: String, to output: String, password: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "pkcs12", "-export", "-in", certificate, "-inkey", key, "-out", output,
            "-passout", "pass:\(password)", "-name", "herald-test",
        ]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try #require(process.terminationStatus == 0, "openssl pkcs12 -export failed: \(message)")
    }
}
