import Foundation
import HeraldCore
import Testing

@testable import HeraldDelivery

@Suite struct LogSenderTests {
    static func delivery(_ n: Int, platform: Platform = .ios) throws -> PushDelivery {
        let key = DeliveryKey(messageKey: "m\(n)", deviceId: "device-\(n)", userId: "user-\(n)")
        let target = PushTarget(platform: platform, token: "token-\(n)", userId: "user-\(n)", app: n.isMultiple(of: 2) ? "com.example.a" : nil)
        let json = JSONValue.object(["aps": .object(["alert": .string("Вам поступил перевод. \"quoted\"")])])
        let payload = PushPayload(platform: platform, profile: .legacy, json: json, apns: nil, deliveryKey: key, wasShortened: false)
        return PushDelivery(
            deliveryKey: key, deviceId: "device-\(n)", userId: "user-\(n)", eventId: "TransferIssued", position: Int64(n), target: target, payload: payload)
    }

    func temporaryFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("herald-log-\(UUID().uuidString).jsonl").path
    }

    @Test func everyLineHasEveryFieldAndTheExactPayload() async throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sender = try LogSender(path: path)
        for n in 0..<3 {
            #expect(await sender.send(try Self.delivery(n)) == .sent)
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        for (n, line) in lines.enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let delivery = try Self.delivery(n)
            #expect(object["delivery_key"] as? String == delivery.deliveryKey.rawValue)
            #expect(object["device_id"] as? String == "device-\(n)")
            #expect(object["platform"] as? String == "ios")
            #expect(object["token"] as? String == "token-\(n)")
            #expect(object["user_id"] as? String == "user-\(n)")
            #expect(object["event_id"] as? String == "TransferIssued")
            #expect(object["position"] as? Int == n)
            #expect(object["time"] is String)
            #expect((object["app"] as? String) == (n.isMultiple(of: 2) ? "com.example.a" : nil))
            // The payload is embedded byte for byte.
            let payloadStart = try #require(line.range(of: "\"payload\":"))
            #expect(Array(line[payloadStart.upperBound...].dropLast().utf8) == delivery.payload.body)
        }
    }

    @Test func reconcileReadsKeysBackFromAnEarlierRun() async throws {
        let path = temporaryFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try LogSender(path: path)
        _ = await first.send(try Self.delivery(1))
        // A torn last line (a kill mid-write) is ignored, not fatal.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"delivery_key\":\"tor".utf8))
        try handle.close()

        let second = try LogSender(path: path)
        #expect(await second.reconcile(try Self.delivery(1).deliveryKey) == .delivered)
        #expect(await second.reconcile(try Self.delivery(2).deliveryKey) == .notDelivered)
        #expect(await LogSender().reconcile(try Self.delivery(1).deliveryKey) == .unknown)

        // The next line starts on a line of its own, not glued to the torn one.
        #expect(await second.send(try Self.delivery(2)) == .sent)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.last?.hasPrefix("{\"time\":") == true)
        #expect(await (try LogSender(path: path)).reconcile(try Self.delivery(2).deliveryKey) == .delivered)
    }

    @Test func unopenableFileIsATypedErrorNamingThePath() {
        let error = #expect(throws: LogSenderError.self) { try LogSender(path: "/nonexistent-dir/log.jsonl") }
        #expect(error?.code == .cannotOpen)
        #expect(error?.description.contains("/nonexistent-dir/log.jsonl") == true)
    }

    @Test func nullSenderCountsAndAcceptsEverything() async throws {
        let sender = NullSender()
        await withTaskGroup(of: Void.self) { group in
            for n in 0..<100 {
                group.addTask { #expect(await sender.send(try! Self.delivery(n)) == .sent) }
            }
        }
        #expect(sender.count == 100)
        #expect(await sender.reconcile(try Self.delivery(1).deliveryKey) == .unknown)
    }
}
