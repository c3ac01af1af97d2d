import Foundation
import Testing

@testable import HeraldSandbox

@Suite struct SandboxRecorderTests {
    static func push(_ n: Int, body: String = #"{"aps":{"alert":"hi \"there\"\n"}}"#) -> RecordedPush {
        RecordedPush(
            provider: n.isMultiple(of: 2) ? .apns : .fcm, time: Date(timeIntervalSince1970: 1_700_000_000.123 + Double(n)), connectionID: 1,
            streamID: 2 * n + 1, path: "/3/device/\(n)", headers: ["apns-topic": "com.example.herald", "x-quote": "a\"b\\c"], body: Array(body.utf8),
            token: "token-\(n)", app: "com.example.herald", bodyIsJSONObject: true
        )
    }

    /// Pushes recorded from many threads all reach the file, one valid JSON line each, once
    /// flushed; memory keeps the most recent ones in order.
    @Test func recordsEveryPushAsOneJSONLine() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("herald-recorder-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let recorder = try SandboxRecorder(file: file, memoryLimit: 100)
        DispatchQueue.concurrentPerform(iterations: 4) { part in
            for n in stride(from: part, to: 2000, by: 4) { recorder.record(Self.push(n)) }
        }
        recorder.flush()
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2000)
        var tokens = Set<String>()
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            tokens.insert(try #require(object["token"] as? String))
            #expect(((object["body"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? String == "hi \"there\"\n")
            #expect((object["headers"] as? [String: String])?["x-quote"] == "a\"b\\c")
            #expect((object["time"] as? String)?.hasSuffix("Z") == true)
        }
        #expect(tokens.count == 2000)
        #expect(recorder.count == 2000)
        #expect(recorder.pushes.count == 100)
        recorder.finish()
    }

    @Test func theLineMatchesWhatJSONSerializationWouldWrite() throws {
        var line: [UInt8] = []
        Self.push(4).appendJSONLine(to: &line)
        #expect(line.last == 10)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.dropLast())) as? [String: Any])
        #expect(object["time"] as? String == "2023-11-14T22:13:24.123Z")
        #expect(object["provider"] as? String == "apns")
        #expect(object["connection"] as? Int == 1)
        #expect(object["stream"] as? Int == 9)
        #expect(object["path"] as? String == "/3/device/4")
        #expect(object["app"] as? String == "com.example.herald")
        // A body that is not JSON is kept as text.
        var text: [UInt8] = []
        var notJSON = Self.push(1, body: "not json")
        notJSON.bodyIsJSONObject = false
        notJSON.appendJSONLine(to: &text)
        let textObject = try #require(try JSONSerialization.jsonObject(with: Data(text.dropLast())) as? [String: Any])
        #expect(textObject["body_text"] as? String == "not json")
        #expect(textObject["body"] == nil)
    }

    /// `herald sandbox` keeps no pushes in memory: the record file still gets every one.
    @Test func aLimitOfZeroKeepsNoneInMemoryButRecordsAll() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("herald-recorder-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let recorder = try SandboxRecorder(file: file, memoryLimit: 0)
        for n in 0..<50 { recorder.record(Self.push(n)) }
        recorder.flush()
        #expect(try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").count == 50)
        #expect(recorder.count == 50)
        #expect(recorder.pushes.isEmpty)
        recorder.finish()
    }

    @Test func afterFinishPushesStayInMemoryOnly() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("herald-recorder-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let recorder = try SandboxRecorder(file: file)
        recorder.record(Self.push(1))
        recorder.finish()
        recorder.record(Self.push(2))
        recorder.flush()
        #expect(try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").count == 1)
        #expect(recorder.pushes.count == 2)
    }
}
