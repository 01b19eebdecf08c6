/// Turns a MIDI 1.0 byte stream into messages, the way a receiving device does: running status,
/// real-time bytes interleaved anywhere (even inside SysEx), SysEx split across any number of
/// `decode` calls, and garbage skipped with a diagnostic rather than thrown.
///
/// It keeps state between calls, so feed it chunks as they arrive (ALSA raw MIDI, network packets).
/// Call `reset()` where the protocol says running status ends (RTP-MIDI resets it per packet).
public struct MIDIStreamDecoder: Sendable {
    /// Something in the stream that was skipped.
    public enum Diagnostic: Hashable, Sendable {
        /// F4, F5, F9 or FD: no message is defined for it; skipped.
        case undefinedStatus(UInt8)
        /// A data byte with no status to belong to; skipped.
        case dataWithoutStatus(UInt8)
        /// A SysEx cut short by a status byte other than F7 (or by `reset`); its bytes are dropped.
        case unterminatedSysEx(byteCount: Int)
        /// An F7 with no SysEx open: it ends running status and any partial message (reported
        /// before it as `incompleteMessage`), as any status byte other than real-time does.
        case strayEndOfExclusive
        /// A message cut short by a new status byte; the partial message is dropped.
        case incompleteMessage(status: UInt8)
    }

    /// The longest SysEx kept; longer ones are dropped whole with a diagnostic.
    public var maximumSysExLength: Int

    private var status: UInt8 = 0
    private var runningStatus: UInt8 = 0
    private var firstData: UInt8 = 0
    private var dataCount = 0
    private var sysEx: [UInt8]? = nil
    private var sysExOverflowed = false

    /// Creates a decoder with no running status that keeps SysEx messages of up to
    /// `maximumSysExLength` payload bytes (`F0` and `F7` not counted; 1 MiB by default).
    public init(maximumSysExLength: Int = 1 << 20) {
        self.maximumSysExLength = maximumSysExLength
    }

    /// Forgets running status and any partial message or SysEx.
    public mutating func reset(reportingTo diagnose: (Diagnostic) -> Void = { _ in }) {
        if let sysEx { diagnose(.unterminatedSysEx(byteCount: sysEx.count)) }
        sysEx = nil
        status = 0
        runningStatus = 0
        dataCount = 0
    }

    /// Decodes `bytes`, calling `emit` for each complete message and `diagnose` for skipped bytes.
    public mutating func decode(
        _ bytes: some Sequence<UInt8>, emit: (MIDIMessage) -> Void, diagnose: (Diagnostic) -> Void = { _ in }
    ) {
        // Contiguous bytes (an array, a buffer) take a loop the compiler sees whole; a generic
        // sequence from another module would cost a witness call per byte.
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            for byte in buffer { decode(byte: byte, emit: emit, diagnose: diagnose) }
        }
        guard contiguous == nil else { return }
        for byte in bytes { decode(byte: byte, emit: emit, diagnose: diagnose) }
    }

    /// Decodes `bytes` into arrays of messages and diagnostics.
    public mutating func decode(_ bytes: some Sequence<UInt8>) -> (messages: [MIDIMessage], diagnostics: [Diagnostic]) {
        var messages: [MIDIMessage] = []
        var diagnostics: [Diagnostic] = []
        decode(bytes, emit: { messages.append($0) }, diagnose: { diagnostics.append($0) })
        return (messages, diagnostics)
    }

    /// Decodes one byte, calling `emit` when it completes a message and `diagnose` when it is skipped
    /// or cuts something short. Real-time bytes are emitted at once, even inside a SysEx or a partial
    /// message, and change no state. Only SysEx allocates (its payload array); neither closure escapes.
    public mutating func decode(byte: UInt8, emit: (MIDIMessage) -> Void, diagnose: (Diagnostic) -> Void) {
        if byte >= 0xF8 {
            // Real-time bytes may appear anywhere and change no state.
            switch byte {
            case 0xF8: emit(.timingClock)
            case 0xFA: emit(.start)
            case 0xFB: emit(.continue)
            case 0xFC: emit(.stop)
            case 0xFE: emit(.activeSensing)
            case 0xFF: emit(.systemReset)
            default: diagnose(.undefinedStatus(byte))
            }
            return
        }
        if byte < 0x80 {
            decodeData(byte, emit: emit, diagnose: diagnose)
            return
        }
        // A status byte other than real-time ends any SysEx and any partial message, and running
        // status: an F7 too, whether it closes a SysEx or comes alone.
        if byte == 0xF7 {
            if let data = sysEx {
                if sysExOverflowed {
                    diagnose(.unterminatedSysEx(byteCount: maximumSysExLength))
                } else {
                    emit(.systemExclusive(data))
                }
                sysEx = nil
            } else {
                if status != 0 && dataCount > 0 { diagnose(.incompleteMessage(status: status)) }
                diagnose(.strayEndOfExclusive)
            }
            status = 0
            runningStatus = 0
            dataCount = 0
            return
        }
        if let data = sysEx {
            diagnose(.unterminatedSysEx(byteCount: data.count))
            sysEx = nil
        } else if status != 0 && dataCount > 0 {
            diagnose(.incompleteMessage(status: status))
        }
        dataCount = 0
        switch byte {
        case 0xF0:
            sysEx = []
            sysExOverflowed = false
            status = 0
            runningStatus = 0
        case 0xF4, 0xF5:
            diagnose(.undefinedStatus(byte))
            status = 0
            runningStatus = 0
        case 0xF6:
            emit(.tuneRequest)
            status = 0
            runningStatus = 0
        case 0xF1...0xF3:
            status = byte
            runningStatus = 0
        default:
            status = byte
            runningStatus = byte
        }
    }

    private mutating func decodeData(_ byte: UInt8, emit: (MIDIMessage) -> Void, diagnose: (Diagnostic) -> Void) {
        if sysEx != nil {
            if sysEx!.count < maximumSysExLength {
                sysEx!.append(byte)
            } else {
                sysExOverflowed = true
            }
            return
        }
        if status == 0 {
            guard runningStatus != 0 else {
                diagnose(.dataWithoutStatus(byte))
                return
            }
            status = runningStatus
        }
        let needed = MIDIMessage.dataLength(ofStatus: status) ?? 0
        if dataCount == 0 && needed == 2 {
            firstData = byte
            dataCount = 1
            return
        }
        let message: MIDIMessage?
        switch status {
        case 0xF1: message = .timeCodeQuarterFrame(byte)
        case 0xF2: message = .songPositionPointer(UInt16(firstData) | UInt16(byte) << 7)
        case 0xF3: message = .songSelect(byte)
        default:
            message =
                needed == 2
                ? MIDIMessage(channelStatus: status, firstData, byte) : MIDIMessage(channelStatus: status, byte)
        }
        dataCount = 0
        // Channel messages keep their status for running status; system common messages do not.
        status = status < 0xF0 ? status : 0
        if let message { emit(message) }
    }
}

/// Encodes messages into a byte stream, optionally with running status.
public struct MIDIStreamEncoder: Sendable {
    /// Whether a channel message with the same status byte as the previous one is written without it
    /// (running status). Off by default; any system common or SysEx message ends running status.
    public var usesRunningStatus: Bool
    private var runningStatus: UInt8 = 0

    /// Creates an encoder with no running status in force, writing every status byte by default.
    public init(usesRunningStatus: Bool = false) {
        self.usesRunningStatus = usesRunningStatus
    }

    /// Forgets the running status, so the next channel message is written with its status byte.
    public mutating func reset() { runningStatus = 0 }

    /// Appends the message's bytes to `bytes`, leaving out the status byte when running status is on
    /// and the previous channel message had the same one. Real-time messages are one byte and keep
    /// running status; SysEx (framed by `F0` … `F7`) and system common messages end it. Throws
    /// ``MIDIValueError``, appending nothing, when a number is out of range.
    public mutating func encode(_ message: MIDIMessage, into bytes: inout [UInt8]) throws(MIDIValueError) {
        if let error = message.firstValueOutOfRange { throw error }
        let status = message.statusByte
        if status >= 0xF8 {
            bytes.append(status)
            return
        }
        if status >= 0xF0 {
            runningStatus = 0
            message.encode(into: &bytes, withStatus: true)
            return
        }
        if usesRunningStatus && status == runningStatus {
            message.encode(into: &bytes, withStatus: false)
        } else {
            message.encode(into: &bytes, withStatus: true)
            runningStatus = usesRunningStatus ? status : 0
        }
    }
}
