import HeraldAMQP
import Testing

@Suite("AMQP URL parsing")
struct AMQPConfigurationTests {
    @Test func testEnvironmentURL() throws {
        let configuration = try AMQPConfiguration(url: "amqp://guest:guest@127.0.0.1:5672/")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 5672)
        #expect(configuration.user == "guest")
        #expect(configuration.password == "guest")
        #expect(configuration.virtualHost == "/")
        #expect(configuration.tls == nil)
        #expect(configuration.heartbeat == .seconds(30))
    }

    @Test func defaultsWithoutUserPortOrPath() throws {
        let configuration = try AMQPConfiguration(url: "amqp://rabbit.internal")
        #expect(configuration.host == "rabbit.internal")
        #expect(configuration.port == 5672)
        #expect(configuration.user == "guest")
        #expect(configuration.password == "guest")
        #expect(configuration.virtualHost == "/")
    }

    @Test func percentDecoding() throws {
        let configuration = try AMQPConfiguration(url: "amqp://us%40er:p%3Ass%2Fw%40rd@rabbit.example:5673/my%2Fvhost")
        #expect(configuration.user == "us@er")
        #expect(configuration.password == "p:ss/w@rd")
        #expect(configuration.host == "rabbit.example")
        #expect(configuration.port == 5673)
        #expect(configuration.virtualHost == "my/vhost")
    }

    @Test(arguments: [
        ("amqp://h", "/"), ("amqp://h/", "/"), ("amqp://h/%2F", "/"), ("amqp://h/%2f", "/"),
        ("amqp://h/herald", "herald"), ("amqp://h/a%20b", "a b"),
    ])
    func vhost(url: String, expected: String) throws {
        #expect(try AMQPConfiguration(url: url).virtualHost == expected)
    }

    @Test func amqpsUsesTLSAndPort5671() throws {
        let configuration = try AMQPConfiguration(
            url: "amqps://u:p@broker:5671/?cacertfile=%2Fetc%2Fca.pem&certfile=%2Fc.pem&keyfile=%2Fk.pem&verify=verify_none"
        )
        let tls = try #require(configuration.tls)
        #expect(configuration.port == 5671)
        #expect(tls.caCertificatePath == "/etc/ca.pem")
        #expect(tls.clientCertificatePath == "/c.pem")
        #expect(tls.clientKeyPath == "/k.pem")
        #expect(tls.verifyPeer == false)
        #expect(try AMQPConfiguration(url: "AMQPS://broker").port == 5671)
        #expect(try AMQPConfiguration(url: "amqps://broker").tls?.verifyPeer == true)
    }

    @Test func ipv6Host() throws {
        let configuration = try AMQPConfiguration(url: "amqp://u:p@[::1]:5673/v")
        #expect(configuration.host == "::1")
        #expect(configuration.port == 5673)
        #expect(try AMQPConfiguration(url: "amqp://[fe80::1]").port == 5672)
    }

    @Test func queryParameters() throws {
        let configuration = try AMQPConfiguration(
            url: "amqp://h/?heartbeat=10&connection_timeout=2500&frame_max=65536&channel_max=64&connection_name=worker%201&unknown=x"
        )
        #expect(configuration.heartbeat == .seconds(10))
        #expect(configuration.connectTimeout == .milliseconds(2500))
        #expect(configuration.frameMax == 65536)
        #expect(configuration.channelMax == 64)
        #expect(configuration.connectionName == "worker 1")
    }

    @Test(arguments: [
        "http://h", "amqp//h", "h:5672", "amqp://h:99999", "amqp://h:0", "amqp://h:abc", "amqp://h:",
        "amqp://h/a/b", "amqp://u:%zz@h", "amqp://u:%4@h", "amqp://h?heartbeat=-1", "amqp://h?heartbeat=x",
        "amqp://::1", "amqp://[::1", "amqp://h/#frag", "amqp://h /v", "amqp://h?verify=maybe", "amqp://h/%FF",
    ])
    func badURLsThrowInvalidURL(url: String) {
        #expect {
            try AMQPConfiguration(url: url)
        } throws: { error in
            (error as? AMQPError)?.code == .invalidURL
        }
    }

    /// Regression (found by the FuzzAMQPURL fuzz target): a NUL character, raw or as `%00`,
    /// was accepted and would have cut the C string librabbitmq gets short (`amqp://u:pa%00x@h`
    /// logging in with the password `pa`).
    @Test(arguments: [
        "amqp://local\u{1}\0\0\0\0\0\0\0ost?ve)ify=verify_none",
        "amqp://u:pa%00x@h/", "amqp://u%00@h/", "amqp://h%00evil/", "amqp://h/v%00", "amqp://h/?connection_name=a%00b",
        "amqps://h/?cacertfile=/etc/ca.pem%00.txt",
    ])
    func aNULCharacterIsRefused(url: String) {
        #expect {
            try AMQPConfiguration(url: url)
        } throws: { error in
            (error as? AMQPError)?.code == .invalidURL && "\(error)".contains("NUL")
        }
    }

    @Test func errorsAndDescriptionsNeverShowThePassword() throws {
        do {
            _ = try AMQPConfiguration(url: "amqp://user:sekret@h:bad/")
            Issue.record("expected an error")
        } catch {
            let error = try #require(asAMQPError(error))
            #expect(error.code == .invalidURL)
            #expect(!error.description.contains("sekret"))
            #expect(!error.debugDescription.contains("sekret"))
        }
        // An unescaped '/' ends the authority: "user:pa5" reads as host and port.
        do {
            _ = try AMQPConfiguration(url: "amqp://user:pa5/sw0rd@h/")
            Issue.record("expected an error")
        } catch {
            #expect(!"\(error)".contains("pa5"), "\(error)")
        }
        let configuration = try AMQPConfiguration(url: "amqp://user:sekret@h/v")
        #expect(!configuration.description.contains("sekret"))
        #expect(!configuration.redactedURL.contains("sekret"))
        #expect(configuration.redactedURL == "amqp://user@h:5672/v")
    }
}
