import CJACK

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
            let result = connect(port, to: midiPortName)
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
        let ranked = names.map { (name: $0, distance: editDistance(lower, $0.lowercased())) }
            .filter { $0.distance <= max(3, text.count / 2) }
            .sorted { $0.distance < $1.distance }
        return ranked.prefix(3).map(\.name)
    }

    /// Levenshtein distance.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let (a, b) = (Array(a), Array(b))
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
