/// A small JSON value with deterministic (sorted-key) serialization, for `--json` output that
/// pipelines consume.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    func serialized() -> String {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        serialize(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the serialized value to `out` as UTF-8 (one buffer for the whole value, no
    /// temporaries; appending bytes costs a fraction of appending to a String).
    func serialize(into out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let value): out += (value ? "true" : "false").utf8
        case .number(let value):
            if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
                out += String(Int64(value)).utf8
            } else {
                out += (value.isFinite ? String(value) : "null").utf8
            }
        case .string(let value): Self.quote(value, into: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Sorted as pairs: no second hash lookup per key.
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.quote(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func quote(_ text: String) -> String {
        var out: [UInt8] = []
        quote(text, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text` as a JSON string literal. UTF-8 beyond ASCII is valid JSON as it is, so
    /// only quotes, backslashes and control characters are escaped.
    static func quote(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var contiguous = text  // withUTF8 may make a bridged string contiguous first
        contiguous.withUTF8 { bytes in
            // The runs between escapes are copied whole.
            var runStart = 0
            for index in bytes.indices where bytes[index] < 0x20 || bytes[index] == 0x22 || bytes[index] == 0x5C {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                switch bytes[index] {
                case 0x22: out += "\\\"".utf8
                case 0x5C: out += "\\\\".utf8
                case 0x0A: out += "\\n".utf8
                case 0x0D: out += "\\r".utf8
                case 0x09: out += "\\t".utf8
                default:
                    let digits = Array("0123456789abcdef".utf8)
                    out += "\\u00".utf8
                    out += [digits[Int(bytes[index] >> 4)], digits[Int(bytes[index] & 0x0F)]]
                }
                runStart = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
