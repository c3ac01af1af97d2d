import FuzzSupport
import HeraldPostgres

/// `database.url`: an accepted URL has no NUL in what goes to libpq as C strings, and its
/// description does not depend on the password.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPostgresURL(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let url = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    do {
        let configuration = try PostgresConfiguration(url: url)
        let cStrings = [
            configuration.host, configuration.user, configuration.password, configuration.database,
            configuration.applicationName, configuration.sslRootCertificatePath,
            configuration.sslCertificatePath, configuration.sslKeyPath,
        ].compactMap { $0 }
        FuzzCheck.require(!cStrings.contains { $0.utf8.contains(0) }, "a NUL byte reaches libpq")
        FuzzCheck.require((1...65_535).contains(configuration.port), "port \(configuration.port) accepted")
        if let password = configuration.password {
            var otherPassword = configuration
            otherPassword.password = password + "x"
            FuzzCheck.require(configuration.description == otherPassword.description, "the description depends on the password")
        }
    } catch {
        FuzzCheck.require(error.code == .invalidConfiguration, "unexpected code \(error.code)")
    }
    return 0
}
