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
        var out = ""
        serialize(into: &out)
        return out
    }

    /// Appends the serialized value to `out` (one buffer for the whole value, no temporaries).
    func serialize(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let value):
            if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
                out += String(Int64(value))
            } else {
                out += value.isFinite ? String(value) : "null"
            }
        case .string(let value): Self.quote(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.serialize(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                members[key]!.serialize(into: &out)
            }
            out += "}"
        }
    }

    static func quote(_ text: String) -> String {
        var out = ""
        quote(text, into: &out)
        return out
    }

    /// Appends `text` as a JSON string literal; plain ASCII is appended in one piece.
    static func quote(_ text: String, into out: inout String) {
        out += "\""
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x80 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out += text
            out += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
