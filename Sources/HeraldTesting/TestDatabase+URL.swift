import Foundation

extension TestDatabase {
    /// The database as a URL, for a `herald` child process (`HERALD_DATABASE_URL`): the test
    /// server's URL with this database's name.
    public var url: String {
        var url = TestEnvironment.databaseURL
        if let query = url.firstIndex(of: "?") { url = String(url[..<query]) }
        guard let scheme = url.range(of: "://"),
            let slash = url.range(of: "/", options: .backwards, range: scheme.upperBound..<url.endIndex)
        else { return url + "/" + name }
        return String(url[..<slash.lowerBound]) + "/" + name
    }
}
