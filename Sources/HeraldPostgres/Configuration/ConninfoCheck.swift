internal import CLibPQ
import Foundation

/// libpq's own reading of a connection string (`PQconninfoParse`), used to check a URL at
/// start-up: a keyword libpq does not know, or a URL libpq cannot read, is then a clear
/// configuration error naming the problem rather than a failed connection later. Pure: no
/// connection, no thread rule.
enum ConninfoCheck {
    /// Throws ``PostgresError/Code/invalidConfiguration`` with libpq's message, in which
    /// each of `secrets` (the password as written and decoded) is replaced by `***`.
    static func check(_ conninfo: String, secrets: [String]) throws(PostgresError) {
        var message: UnsafeMutablePointer<CChar>?
        let options = PQconninfoParse(conninfo, &message)
        if let options {
            PQconninfoFree(options)
            return
        }
        var text = message.map { String(cString: $0) } ?? "libpq cannot read it (out of memory?)"
        if let message { PQfreemem(message) }
        text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        for secret in secrets where !secret.isEmpty { text = text.replacingOccurrences(of: secret, with: "***") }
        throw PostgresError(code: .invalidConfiguration, message: "invalid PostgreSQL URL: \(text)", call: "PQconninfoParse")
    }
}
