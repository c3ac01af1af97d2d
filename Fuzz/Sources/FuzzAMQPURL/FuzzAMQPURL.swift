import FuzzSupport
import HeraldAMQP

/// `amqp.url` (an operator's setting, so not hostile, but a typo must give a clear error and
/// never a crash): an accepted URL has no NUL in what goes to librabbitmq as C strings, and
/// its description does not depend on the password.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAMQPURL(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let url = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    do {
        let configuration = try AMQPConfiguration(url: url)
        let cStrings = [
            configuration.host, configuration.user, configuration.password, configuration.virtualHost,
            configuration.connectionName ?? "", configuration.tls?.caCertificatePath ?? "",
            configuration.tls?.clientCertificatePath ?? "", configuration.tls?.clientKeyPath ?? "",
        ]
        FuzzCheck.require(!cStrings.contains { $0.utf8.contains(0) }, "a NUL byte reaches librabbitmq")
        FuzzCheck.require((1...65_535).contains(configuration.port), "port \(configuration.port) accepted")
        var otherPassword = configuration
        otherPassword.password = configuration.password + "x"
        FuzzCheck.require(configuration.description == otherPassword.description, "the description depends on the password")
    } catch {
        FuzzCheck.require(error.code == .invalidURL, "unexpected code \(error.code)")
    }
    return 0
}
