/// A validated configuration with what every transfer needs precomputed.
struct ResolvedConfiguration: Sendable {
    let configuration: HTTPClientConfiguration
    /// The CA bundle to pass as `CURLOPT_CAINFO_BLOB`, when PEM bytes were configured.
    let caBlob: [UInt8]?
    let requestTimeoutMilliseconds: Int
    let connectTimeoutMilliseconds: Int

    /// A positive duration in whole milliseconds, at least 1 (libcurl reads 0 as "no timeout").
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return Int.max }
        return max(1, Int(total.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
