import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

/// The payloads of seed 000's 20 events, as HeraldCoreTests' golden files hold them for every
/// profile (`Golden/SeedEvents/*.jsonl`: legacy, legacy-exact, modern), pass the checks the
/// sandbox makes for Google and Apple: the FCM bodies, every field of `android` and
/// `android.notification` included, and the APNs bodies.
@Suite struct SeedEventPayloadTests {
    static let goldenFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("HeraldCoreTests/Golden/SeedEvents")

    /// The lines of one golden file.
    static func bodies(_ name: String) throws -> [[UInt8]] {
        let data = try #require(FileManager.default.contents(atPath: goldenFolder.appendingPathComponent(name).path), "missing \(name)")
        return data.split(separator: 0x0A).map { Array($0) }
    }

    @Test(arguments: ["legacy", "legacy-exact", "modern"])
    func fcmTakesEveryAndroidPayload(_ variant: String) async throws {
        let bodies = try Self.bodies("\(variant)-android.jsonl")
        #expect(bodies.count == 20)
        try await SandboxFixture.with { fixture in
            let token = try await fixture.accessToken()
            for body in bodies {
                let response = try await fixture.fcm(json: String(decoding: body, as: UTF8.self), accessToken: token)
                #expect(response.status == 200, "\(response.bodyText)")
            }
            #expect(fixture.sandbox.pushes.count == bodies.count)
        }
    }

    @Test(arguments: ["legacy", "legacy-exact", "modern"])
    func apnsTakesEveryIOSPayload(_ variant: String) async throws {
        let bodies = try Self.bodies("\(variant)-ios.jsonl")
        #expect(bodies.count == 20)
        try await SandboxFixture.with { fixture in
            for body in bodies {
                let response = try await fixture.apns(body: body)
                #expect(response.status == 200, "\(response.bodyText)")
            }
            #expect(fixture.sandbox.pushes.count == bodies.count)
        }
    }
}
