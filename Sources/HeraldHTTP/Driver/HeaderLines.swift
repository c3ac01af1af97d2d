internal import CCurl
import HTTPTypes

/// A request's header lines as libcurl reads them (`CURLOPT_HTTPHEADER`, a `curl_slist`),
/// written into one block that the easy handle keeps for its next request.
///
/// Why: `curl_slist_append` copies each line and makes a node (two allocations per line, ~16 per
/// APNs push, plus a formatted string each); here a request writes its lines into memory its
/// handle already has. libcurl does not copy the list and reads it while the transfer runs, so
/// the block is refilled only when the handle's next request is configured.
///
/// Thread rule: driver thread only, owned by one ``EasyHandle``.
final class HeaderLines {
    private var nodes: UnsafeMutablePointer<curl_slist>?
    private var nodeCapacity = 0
    private var bytes: UnsafeMutablePointer<UInt8>?
    private var byteCapacity = 0
    private var head: UnsafeMutablePointer<curl_slist>?

    deinit {
        nodes?.deallocate()
        bytes?.deallocate()
    }

    /// Writes `fields` as lines ("Name: value", or "Name;" for an empty value, libcurl's way to
    /// send one), then "Content-Type:" and "Expect:" when the request has none (they remove what
    /// libcurl would add for a body: a form content type and, over HTTP/1.1, a 100-continue
    /// round trip). Returns the list's head.
    func fill(_ fields: HTTPFields) -> UnsafeMutablePointer<curl_slist> {
        var hasContentType = false
        var hasExpect = false
        var lineCount = 0
        var byteCount = 0
        for field in fields {
            if field.name == .contentType { hasContentType = true }
            if field.name == .expect { hasExpect = true }
            lineCount += 1
            // "name: value\0" or "name;\0"
            let valueCount = field.withUnsafeBytesOfValue { $0.count }
            byteCount += field.name.rawName.utf8.count + (valueCount == 0 ? 2 : 3 + valueCount)
        }
        let removals: [StaticString] = (hasContentType ? [] : ["Content-Type:"]) + (hasExpect ? [] : ["Expect:"])
        lineCount += removals.count
        byteCount += removals.reduce(0) { $0 + $1.utf8CodeUnitCount + 1 }

        let nodes = reserveNodes(max(1, lineCount))
        var cursor = reserveBytes(byteCount)
        var line = 0
        func finishLine(from start: UnsafeMutablePointer<UInt8>) {
            cursor.pointee = 0
            cursor += 1
            nodes[line] = curl_slist(data: UnsafeMutableRawPointer(start).assumingMemoryBound(to: CChar.self), next: nil)
            if line > 0 { nodes[line - 1].next = nodes + line }
            line += 1
        }
        func write(_ utf8: UnsafeBufferPointer<UInt8>) {
            guard let base = utf8.baseAddress, !utf8.isEmpty else { return }
            cursor.update(from: base, count: utf8.count)
            cursor += utf8.count
        }
        for field in fields {
            let start = cursor
            var name = field.name.rawName
            name.withUTF8 { write($0) }
            field.withUnsafeBytesOfValue { value in
                if value.isEmpty {
                    cursor.pointee = UInt8(ascii: ";")
                    cursor += 1
                } else {
                    cursor[0] = UInt8(ascii: ":")
                    cursor[1] = UInt8(ascii: " ")
                    cursor += 2
                    write(value)
                }
            }
            finishLine(from: start)
        }
        for removal in removals {
            let start = cursor
            cursor.update(from: removal.utf8Start, count: removal.utf8CodeUnitCount)
            cursor += removal.utf8CodeUnitCount
            finishLine(from: start)
        }
        head = nodes
        return nodes
    }

    /// The lines of the last ``fill(_:)``, as libcurl reads them (for tests).
    var lines: [String] {
        var lines: [String] = []
        var node = head
        while let current = node {
            lines.append(String(cString: current.pointee.data))
            node = current.pointee.next
        }
        return lines
    }

    private func reserveNodes(_ count: Int) -> UnsafeMutablePointer<curl_slist> {
        Self.reserve(count, minimum: 16, in: &nodes, capacity: &nodeCapacity)
    }

    private func reserveBytes(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        Self.reserve(count, minimum: 1024, in: &bytes, capacity: &byteCapacity)
    }

    /// `buffer` when it holds `count`, else a new one of at least `minimum` (the old one freed:
    /// its contents are written anew by every fill).
    private static func reserve<Element>(
        _ count: Int, minimum: Int, in buffer: inout UnsafeMutablePointer<Element>?, capacity: inout Int
    ) -> UnsafeMutablePointer<Element> {
        if let buffer, capacity >= count { return buffer }
        buffer?.deallocate()
        capacity = max(count, minimum)
        let fresh = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        buffer = fresh
        return fresh
    }
}
