internal import CRabbitMQ
import Foundation

/// Converts between ``AMQPTable`` and librabbitmq's `amqp_table_t`.
///
/// Encoding writes into a ``CArena`` (the table must outlive the librabbitmq call that sends it);
/// decoding copies everything into Swift values at once, because librabbitmq's decoded tables live
/// in connection pools that `amqp_maybe_release_buffers` recycles.
enum FieldTableCodec {
    // MARK: Swift → C

    static func encode(_ table: AMQPTable, in arena: CArena) -> amqp_table_t {
        guard !table.isEmpty else { return amqp_table_t(num_entries: 0, entries: nil) }
        let keys = table.keys.sorted()
        let entries = arena.array(of: amqp_table_entry_t.self, count: keys.count)
        for (index, key) in keys.enumerated() {
            (entries + index).initialize(
                to: amqp_table_entry_t(key: arena.bytes(key), value: encode(table[key]!, in: arena))
            )
        }
        return amqp_table_t(num_entries: Int32(keys.count), entries: entries)
    }

    static func encode(_ value: AMQPFieldValue, in arena: CArena) -> amqp_field_value_t {
        var field = amqp_field_value_t()
        switch value {
        case .bool(let flag):
            field.kind = UInt8(ascii: "t")
            field.value.boolean = flag ? 1 : 0
        case .int(let number):
            field.kind = UInt8(ascii: "l")
            field.value.i64 = number
        case .double(let number):
            field.kind = UInt8(ascii: "d")
            field.value.f64 = number
        case .decimal(let number, let scale):
            field.kind = UInt8(ascii: "D")
            field.value.decimal = amqp_decimal_t(decimals: scale, value: number)
        case .string(let text):
            field.kind = UInt8(ascii: "S")
            field.value.bytes = arena.bytes(text)
        case .bytes(let raw):
            field.kind = UInt8(ascii: "x")
            field.value.bytes = arena.bytes(raw)
        case .timestamp(let date):
            field.kind = UInt8(ascii: "T")
            field.value.u64 = UInt64(max(0, date.timeIntervalSince1970.rounded(.down)))
        case .array(let values):
            field.kind = UInt8(ascii: "A")
            let entries = arena.array(of: amqp_field_value_t.self, count: values.count)
            for (index, element) in values.enumerated() {
                (entries + index).initialize(to: encode(element, in: arena))
            }
            field.value.array = amqp_array_t(num_entries: Int32(values.count), entries: values.isEmpty ? nil : entries)
        case .table(let nested):
            field.kind = UInt8(ascii: "F")
            field.value.table = encode(nested, in: arena)
        case .void:
            field.kind = UInt8(ascii: "V")
        }
        return field
    }

    // MARK: C → Swift

    static func decode(_ table: amqp_table_t) -> AMQPTable {
        guard table.num_entries > 0, let entries = table.entries else { return [:] }
        var result = AMQPTable(minimumCapacity: Int(table.num_entries))
        for index in 0..<Int(table.num_entries) {
            let entry = entries[index]
            result[string(entry.key)] = decode(entry.value)
        }
        return result
    }

    static func decode(_ field: amqp_field_value_t) -> AMQPFieldValue {
        let value = field.value
        switch field.kind {
        case UInt8(ascii: "t"): return .bool(value.boolean != 0)
        case UInt8(ascii: "b"): return .int(Int64(value.i8))
        case UInt8(ascii: "B"): return .int(Int64(value.u8))
        case UInt8(ascii: "s"): return .int(Int64(value.i16))
        case UInt8(ascii: "u"): return .int(Int64(value.u16))
        case UInt8(ascii: "I"): return .int(Int64(value.i32))
        case UInt8(ascii: "i"): return .int(Int64(value.u32))
        case UInt8(ascii: "l"): return .int(value.i64)
        case UInt8(ascii: "L"): return .int(Int64(clamping: value.u64))
        case UInt8(ascii: "f"): return .double(Double(value.f32))
        case UInt8(ascii: "d"): return .double(value.f64)
        case UInt8(ascii: "D"): return .decimal(value: value.decimal.value, scale: value.decimal.decimals)
        case UInt8(ascii: "S"):
            let raw = byteArray(value.bytes)
            if let text = String(validating: raw, as: UTF8.self) { return .string(text) }
            return .bytes(raw)
        case UInt8(ascii: "x"): return .bytes(byteArray(value.bytes))
        case UInt8(ascii: "T"): return .timestamp(Date(timeIntervalSince1970: TimeInterval(value.u64)))
        case UInt8(ascii: "A"):
            let array = value.array
            guard array.num_entries > 0, let entries = array.entries else { return .array([]) }
            return .array((0..<Int(array.num_entries)).map { decode(entries[$0]) })
        case UInt8(ascii: "F"): return .table(decode(value.table))
        default: return .void
        }
    }

    /// The bytes as a buffer (empty for a zero-length or null one): valid while librabbitmq
    /// keeps the frame.
    private static func buffer(_ bytes: amqp_bytes_t) -> UnsafeRawBufferPointer {
        guard bytes.len > 0, let base = bytes.bytes else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base, count: bytes.len)
    }

    static func string(_ bytes: amqp_bytes_t) -> String {
        String(decoding: buffer(bytes), as: UTF8.self)
    }

    /// `known` when `bytes` spell it (no new string: a consumer sees the same exchange, routing
    /// key and consumer tag on every delivery, each usually longer than a string kept inline),
    /// otherwise a new one.
    static func string(_ bytes: amqp_bytes_t, reusing known: String?) -> String {
        guard let known, equals(bytes, known) else { return string(bytes) }
        return known
    }

    /// Whether `bytes` are `text`'s UTF-8: the lengths, then one `memcmp` (three times a delivery;
    /// the generic element-by-element comparison was a twentieth of the connection thread).
    static func equals(_ bytes: amqp_bytes_t, _ text: String) -> Bool {
        let wire = buffer(bytes)
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.count == wire.count else { return false }
            guard let start = utf8.baseAddress, let other = wire.baseAddress else { return true }
            return memcmp(start, other, wire.count) == 0
        }
    }

    static func byteArray(_ bytes: amqp_bytes_t) -> [UInt8] {
        Array(buffer(bytes))
    }

    static func data(_ bytes: amqp_bytes_t) -> Data {
        Data(buffer(bytes))
    }
}
