import FuzzSupport
import HeraldCore

/// Bus messages as XML (seed 000's `<PushNotification>`): the decoder answers every input
/// with an event within the limits or a typed error naming a field and a reason.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventXML(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    EventProperties.check(FuzzCheck.bytes(data, count), contentType: "application/xml")
    return 0
}
