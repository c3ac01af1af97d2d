import FuzzSupport
import HeraldCore

/// `.resx` template files (what `herald templates import` reads): every input gives string
/// entries with distinct, non-empty names, or a typed error with a reason.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResx(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    do {
        let entries = try ResxReader.entries(FuzzCheck.bytes(data, count), source: "fuzz.resx")
        FuzzCheck.require(entries.allSatisfy { !$0.name.isEmpty }, "an entry without a name")
        FuzzCheck.require(Set(entries.map(\.name)).count == entries.count, "two entries with one name")
    } catch {
        FuzzCheck.require(error.code == .invalidResource, "unexpected code \(error.code)")
        FuzzCheck.require(!error.reason.isEmpty, "error without a reason")
    }
    return 0
}
