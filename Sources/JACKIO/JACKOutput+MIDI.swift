import CJACK
import MIDICore
import PianolaSupport

#if canImport(Glibc)
    import Glibc
#endif

extension JACKOutput {
    /// The MIDI sources in the server's graph (output ports of MIDI type), by full name.
    public func midiSources() -> [String] {
        ports(type: JACK_DEFAULT_MIDI_TYPE, flags: UInt(JackPortIsOutput.rawValue))
    }

    /// Connects `source` to the MIDI input port: a MIDI output port's full name (`seq:out`), or a
    /// client's name (every MIDI output port of that client). After `start()`. A name that
    /// matches nothing throws `unknownPort` with the nearest names.
    public func connectMIDI(from source: String) throws(JACKError) {
        guard let midiPortName else { throw .portFailed("the JACK output has no MIDI input port") }
        for port in try midiSourcePorts(named: source) {
            // A client's ports appear before it is activated, and cannot be connected until it is:
            // one that just appeared gets half a second.
            var result = connect(port, to: midiPortName)
            for _ in 0..<50 where result != 0 && result != EEXIST {
                usleep(10_000)
                result = connect(port, to: midiPortName)
            }
            guard result == 0 || result == EEXIST else {
                throw .portFailed("JACK could not connect \(port) to \(midiPortName) (error \(result))")
            }
        }
    }

    /// The MIDI output ports `source` names: the port of that full name, or every MIDI output port
    /// of the client of that name. Throws `unknownPort` with the nearest names when there is none.
    public func midiSourcePorts(named source: String) throws(JACKError) -> [String] {
        let sources = midiSources()
        var chosen = sources.filter { $0 == source }
        if chosen.isEmpty { chosen = sources.filter { $0.hasPrefix(source + ":") } }
        guard !chosen.isEmpty else {
            // Near matches among the ports and their clients' names.
            var clients: [String] = []
            for port in sources {
                let client = String(port.prefix { $0 != ":" })
                if !clients.contains(client) { clients.append(client) }
            }
            throw .unknownPort(source, nearMatches: Self.nearest(to: source, in: clients + sources))
        }
        return chosen
    }

    /// Connects every physical MIDI source (a keyboard on an interface, as JACK's ALSA MIDI
    /// bridge shows it) to the MIDI input port; the sources connected.
    @discardableResult
    public func connectPhysicalMIDISources() -> [String] {
        guard let midiPortName else { return [] }
        let physical = ports(
            type: JACK_DEFAULT_MIDI_TYPE, flags: UInt(JackPortIsOutput.rawValue | JackPortIsPhysical.rawValue))
        return physical.filter { connect($0, to: midiPortName) == 0 }
    }

    /// Up to three of `names` nearest to `text`: those containing it (or contained in it, ignoring
    /// case), then by edit distance.
    static func nearest(to text: String, in names: [String]) -> [String] {
        let lower = text.lowercased()
        let containing = names.filter { $0.lowercased().contains(lower) || lower.contains($0.lowercased()) }
        if !containing.isEmpty { return Array(containing.prefix(3)) }
        let ranked = names.map { (name: $0, distance: TextMatching.editDistance(text, $0)) }
            .filter { $0.distance <= max(3, text.count / 2) }
            .sorted { $0.distance < $1.distance }
        return ranked.prefix(3).map(\.name)
    }
}
