/// The string members of FCM's `android` object: `collapse_key` (only with
/// ``PayloadBuilder/fcmCollapseKey``), `priority`, `ttl` (when the event has one). One rule for
/// both ways a payload is made: written straight into bytes on the legacy fast path (no array
/// of pairs and no `"…s"` string per delivery), or as ``members`` for a ``JSONValue`` tree.
struct AndroidOptions {
    let collapseKey: String?
    let isHighPriority: Bool
    let timeToLiveSeconds: Int?

    init(metadata: EventMetadata, deliveryKey: DeliveryKey, silent: Bool, collapseKey: Bool) {
        self.collapseKey = collapseKey ? deliveryKey.rawValue : nil
        isHighPriority = metadata.priority == .high && !silent
        timeToLiveSeconds = metadata.timeToLiveSeconds
    }

    private var priority: StaticString { isHighPriority ? "HIGH" : "NORMAL" }

    /// The members in key order.
    var members: [(key: String, value: String)] {
        var members: [(key: String, value: String)] = []
        if let collapseKey { members.append(("collapse_key", collapseKey)) }
        members.append(("priority", priority.description))
        if let ttl = timeToLiveSeconds { members.append(("ttl", "\(ttl)s")) }
        return members
    }

    /// Room to reserve for what ``write(to:)`` appends (a collapse key is a hex digest, with
    /// nothing to escape; more only grows the buffer).
    var byteCountBound: Int { 72 + (collapseKey?.utf8.count ?? 0) }

    /// The members, in key order, as the canonical serialization writes them (no braces).
    func write(to out: inout [UInt8]) {
        if let collapseKey {
            out.append(literal: #""collapse_key":"#)
            JSONValue.writeString(collapseKey, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(literal: #""priority":""#)
        out.append(literal: priority)
        out.append(UInt8(ascii: "\""))
        if let ttl = timeToLiveSeconds {
            out.append(literal: #","ttl":""#)
            out.append(contentsOf: String(ttl).utf8)  // a small string: no allocation
            out.append(literal: #"s""#)
        }
    }
}
