import FuzzSupport
import HeraldCore

/// The event-metadata file (`templates/events.json`): every input gives one entry per event
/// with a time to live of at most 28 days, or an `invalidMetadata` error with a reason.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventMetadata(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    do {
        let events = try EventMetadataFile.parse(FuzzCheck.bytes(data, count))
        FuzzCheck.require(Set(events.map(\.eventId)).count == events.count, "two entries for one event")
        FuzzCheck.require(
            events.allSatisfy { ($0.timeToLiveSeconds ?? 0) >= 0 && ($0.timeToLiveSeconds ?? 0) <= 28 * 86_400 },
            "a time to live out of range"
        )
    } catch {
        FuzzCheck.require(error.code == .invalidMetadata, "unexpected code \(error.code)")
        FuzzCheck.require(!error.reason.isEmpty, "error without a reason")
    }
    return 0
}
