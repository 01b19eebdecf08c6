import CALSASequencer

/// A port of the ALSA sequencer, as `aconnect -l` shows it.
public struct MIDISequencerPort: Hashable, Sendable, CustomStringConvertible {
    /// The client's number, the `CLIENT` of `CLIENT:PORT` (0 is the sequencer's own System client).
    public var client: Int
    /// The port's number within its client, the `PORT` of `CLIENT:PORT`.
    public var port: Int
    /// The client's name as the sequencer reports it (a keyboard's, a program's, `Midi Through`).
    public var clientName: String
    /// The port's name as the sequencer reports it.
    public var portName: String
    /// Other clients can read from it (subscribe to it): a keyboard, a player.
    public var isSource: Bool
    /// Other clients can write to it: a synthesizer.
    public var isDestination: Bool
    /// Backed by a kernel driver (a USB keyboard, a virtual raw MIDI port) rather than a program.
    public var isKernelClient: Bool

    /// `CLIENT:PORT`, the address `--connect` and `aconnect` take.
    public var address: String { "\(client):\(port)" }
    public var description: String { "\(clientName):\(portName) (\(address))" }

    init(_ info: pianola_seq_port_info) {
        client = Int(info.client)
        port = Int(info.port)
        clientName = withUnsafeBytes(of: info.client_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        portName = withUnsafeBytes(of: info.port_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let capability = Int32(bitPattern: info.capability)
        let noExport = capability & Int32(PIANOLA_SEQ_CAP_NO_EXPORT) != 0
        isSource =
            !noExport && capability & Int32(PIANOLA_SEQ_CAP_READ) != 0
            && capability & Int32(PIANOLA_SEQ_CAP_SUBS_READ) != 0
        isDestination =
            !noExport && capability & Int32(PIANOLA_SEQ_CAP_WRITE) != 0
            && capability & Int32(PIANOLA_SEQ_CAP_SUBS_WRITE) != 0
        isKernelClient = info.is_kernel_client != 0
    }

    /// Whether autoconnect takes it: a source that is not the sequencer's own (System, Midi
    /// Through) and not the excluded client.
    func isAutoconnectCandidate(excludingClient excluded: Int) -> Bool {
        isSource && client != 0 && client != excluded && clientName != "Midi Through"
    }
}
