import HTTPTypes
import Testing

@testable import HeraldHTTP

@Suite("HeaderLines: a request's header lines in one reused block")
struct HeaderLinesTests {
    @Test func linesAreWhatLibcurlExpects() {
        let lines = HeaderLines()
        var fields: HTTPFields = [.contentType: "application/json"]
        fields[HTTPField.Name("apns-topic")!] = "com.example.app"
        fields[HTTPField.Name("x-empty")!] = ""
        _ = lines.fill(fields)
        // An empty value is "Name;"; a body's default content type is not added when one is set,
        // and "Expect:" turns off 100-continue.
        #expect(lines.lines == ["Content-Type: application/json", "apns-topic: com.example.app", "x-empty;", "Expect:"])
    }

    @Test func theBlockIsRefilledForTheNextRequest() {
        let lines = HeaderLines()
        var many = HTTPFields()
        for index in 0..<40 { many.append(HTTPField(name: HTTPField.Name("x-field-\(index)")!, value: String(repeating: "v", count: 100))) }
        _ = lines.fill(many)
        #expect(lines.lines.count == 42)
        #expect(lines.lines[39] == "x-field-39: " + String(repeating: "v", count: 100))
        _ = lines.fill([.expect: "", .authorization: "bearer Zoë ✓"])
        #expect(lines.lines == ["Expect;", "Authorization: bearer Zoë ✓", "Content-Type:"])
        _ = lines.fill([:])
        #expect(lines.lines == ["Content-Type:", "Expect:"])
    }
}
