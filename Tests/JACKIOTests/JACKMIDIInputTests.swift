import AudioGraph
import Foundation
import JACKIO
import Sampler
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The bundled font, from this file's location.
let bundledFont: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/SoundFonts/PianolaGM.sf2"
}()

// In the JACK output suite, which is serialized: libjack serves one server per process, so
// tests on servers of their own must not overlap.
extension JACKOutputTests {
    @Test("events from a JACK sequencer start notes at their frames inside the period, within FluidSynth's block")
    func sampleAccurateNotes() throws {
        let server = try server()
        var settings = SamplerNode.Settings()
        settings.sampleRate = 48_000
        settings.isReverbEnabled = false
        settings.isChorusEnabled = false
        let sampler = try SamplerNode(settings: settings)
        _ = try sampler.loadSoundFont(at: bundledFont)
        let engine = AudioEngine()
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        let output = try JACKOutput(
            engine: engine,
            configuration: .init(serverName: server.name, connectsToPlayback: false, hasMIDIInput: true))
        #expect(output.midiPortName == "pianola:midi_in")
        output.midiDestination = sampler
        engine.outputDevice = output
        try output.start()
        defer { output.close() }
        // A one-second loop (48 000 frames, not a whole number of 1024-frame periods): middle C at
        // frame 0 and again at frame 20 113 of the loop, 1000 frames each.
        let sequencer = try server.client("jack_midiseq", ["seq", "48000", "0", "60", "1000", "20113", "60", "1000"])
        var found = false
        for _ in 0..<250 where !found {
            found = output.midiSources().contains("seq:out")
            if !found { usleep(20_000) }
        }
        #expect(found, "the sequencer's port never appeared")
        #expect(throws: JACKError.self) { try output.connectMIDI(from: "sqe") }
        do { try output.connectMIDI(from: "nosuch") } catch {
            #expect("\(error)" == "no JACK port 'nosuch'", "\(error)")
        }
        try output.connectMIDI(from: "seq")
        try withTemporaryFolder("jack") { folder in
            let path = folder + "/notes.wav"
            #expect(server.capture([output.portNames[0]], seconds: 3.5, to: path) == 0)
            withExtendedLifetime(sequencer) {}
            #expect(output.midiEventCount >= 6, "\(output.midiEventCount) MIDI events taken in")
            let samples = try readFloatWAVSamples(path)
            // (One port recorded: a mono file.) Onsets: the first sample above −40 dBFS after 5000 frames below −60 dBFS.
            var onsets: [Int] = []
            var quiet = 0
            for (index, sample) in samples.enumerated() {
                let level = abs(sample)
                if level > 0.01 && quiet >= 5_000 { onsets.append(index) }
                quiet = level < 0.001 ? quiet + 1 : (level > 0.01 ? 0 : quiet)
            }
            #expect(onsets.count >= 5, "onsets at \(onsets.map(String.init).joined(separator: ", "))")
            // Consecutive onsets 20 113 and 27 887 frames apart, each within FluidSynth's 64-frame block.
            // (An xrun, the server's cycle late while the machine is busy, loses a whole period of
            // the recording: a gap off by a multiple of the period counts then, and only then.)
            let gaps = zip(onsets.dropFirst(), onsets).map { $0 - $1 }
            let xruns = output.xrunCount
            func error(_ gap: Int, periods: Int) -> Int {
                [20_113, 27_887].flatMap { expected in
                    (-periods...periods).map { abs(gap - expected - server.periodFrames * $0) }
                }.min()!
            }
            let text = gaps.map(String.init).joined(separator: ", ") + " (\(xruns) xruns)"
            #expect(gaps.allSatisfy { error($0, periods: min(xruns, 2)) <= 64 }, "gaps \(text)")
            #expect(gaps.filter { error($0, periods: 0) <= 64 }.count >= 3, "gaps \(text)")
            #expect(Set(gaps.map { abs($0 - 20_113) < 1_000 }).count == 2, "gaps \(text)")
        }
    }
}
