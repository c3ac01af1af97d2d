import FuzzSupport
import HeraldCore

/// Bus messages as JSON (seed 000's second format): the decoder answers every input with an
/// event within the limits or a typed error naming a field and a reason.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventJSON(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    EventProperties.check(FuzzCheck.bytes(data, count), contentType: "application/json")
    return 0
}
