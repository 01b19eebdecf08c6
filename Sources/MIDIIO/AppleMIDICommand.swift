/// An AppleMIDI session command (Apple's "MIDI Network Driver Protocol"): the packets that start
/// with `FF FF` on either port of a session.
public enum AppleMIDICommand: Equatable, Sendable {
    /// `IN`: an invitation to join a session.
    case invitation(token: UInt32, ssrc: UInt32, name: String)
    /// `OK`: an invitation accepted.
    case accept(token: UInt32, ssrc: UInt32, name: String)
    /// `NO`: an invitation refused.
    case reject(token: UInt32, ssrc: UInt32)
    /// `BY`: the session ends.
    case end(token: UInt32, ssrc: UInt32)
    /// `CK`: clock synchronization; `count` 0, 1 or 2 says how many timestamps (100 µs ticks) are set.
    case clockSync(ssrc: UInt32, count: UInt8, timestamps: [UInt64])
    /// `RS`: receiver feedback, the last sequence number received.
    case receiverFeedback(ssrc: UInt32, sequence: UInt32)
    /// `RL`: a bitrate limit (rare; accepted and ignored).
    case bitrateLimit(ssrc: UInt32, bitsPerSecond: UInt32)

    /// Whether `bytes` is a session command (starts with `FF FF`) rather than an RTP packet.
    public static func isCommand(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count >= 2 && bytes.first == 0xFF && bytes.dropFirst().first == 0xFF
    }

    /// Parses a session command.
    public init(parsing bytes: [UInt8]) throws(RTPMIDIPacketError) {
        guard bytes.count >= 4 else { throw .tooShort(needed: 4, got: bytes.count) }
        guard bytes[0] == 0xFF, bytes[1] == 0xFF else { throw .notRTPMIDI("no FF FF signature") }
        let name = String(decoding: bytes[2..<4], as: UTF8.self)
        var reader = ByteReader(bytes, from: 4)
        switch name {
        case "IN", "OK", "NO", "BY":
            let version = try reader.u32()
            guard version == 2 else { throw .unsupportedVersion(version) }
            let token = try reader.u32()
            let ssrc = try reader.u32()
            let sessionName = reader.nulTerminatedString()
            switch name {
            case "IN": self = .invitation(token: token, ssrc: ssrc, name: sessionName)
            case "OK": self = .accept(token: token, ssrc: ssrc, name: sessionName)
            case "NO": self = .reject(token: token, ssrc: ssrc)
            default: self = .end(token: token, ssrc: ssrc)
            }
        case "CK":
            let ssrc = try reader.u32()
            let count = try reader.u8()
            guard count <= 2 else { throw .malformedCommandList("clock sync count \(count)") }
            try reader.skip(3)
            let timestamps = [try reader.u64(), try reader.u64(), try reader.u64()]
            self = .clockSync(ssrc: ssrc, count: count, timestamps: timestamps)
        case "RS":
            self = .receiverFeedback(ssrc: try reader.u32(), sequence: try reader.u32())
        case "RL":
            self = .bitrateLimit(ssrc: try reader.u32(), bitsPerSecond: try reader.u32())
        default:
            throw .unknownCommand(name.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 32 } ? name : "?")
        }
    }

    /// The command's bytes.
    public var bytes: [UInt8] {
        var out: [UInt8] = [0xFF, 0xFF]
        func append32(_ value: UInt32) { out += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        func append64(_ value: UInt64) {
            out += [56, 48, 40, 32, 24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
        }
        switch self {
        case .invitation(let token, let ssrc, let name), .accept(let token, let ssrc, let name):
            if case .invitation = self { out += Array("IN".utf8) } else { out += Array("OK".utf8) }
            append32(2)
            append32(token)
            append32(ssrc)
            out += Array(name.utf8) + [0]
        case .reject(let token, let ssrc), .end(let token, let ssrc):
            if case .reject = self { out += Array("NO".utf8) } else { out += Array("BY".utf8) }
            append32(2)
            append32(token)
            append32(ssrc)
        case .clockSync(let ssrc, let count, let timestamps):
            out += Array("CK".utf8)
            append32(ssrc)
            out += [count, 0, 0, 0]
            for index in 0..<3 { append64(index < timestamps.count ? timestamps[index] : 0) }
        case .receiverFeedback(let ssrc, let sequence):
            out += Array("RS".utf8)
            append32(ssrc)
            append32(sequence)
        case .bitrateLimit(let ssrc, let limit):
            out += Array("RL".utf8)
            append32(ssrc)
            append32(limit)
        }
        return out
    }
}
