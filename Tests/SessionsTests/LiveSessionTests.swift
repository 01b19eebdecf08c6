import ALSAIO
import AudioFiles
import AudioGraph
import Effects
import Foundation
import JACKIO
import MIDIIO
import SMF
import Sampler
import TestSupport
import Testing

@testable import Sessions

#if canImport(Glibc)
    import Glibc
#endif

/// Polls `condition` for up to `seconds`.
private func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// The other side of a network MIDI session, from two plain UDP sockets on loopback: it joins a
/// session (invitations on the control port, then the data port) and sends RTP-MIDI packets.
private final class UDPPeer {
    let control: Int32
    let data: Int32
    let ssrc: UInt32 = 0x5EED_0001
    var sequence: UInt16 = 100

    init() throws {
        control = try Self.bound()
        data = try Self.bound()
    }

    deinit {
        close(control)
        close(data)
    }

    private static func bound() throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = Self.address(port: 0)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard descriptor >= 0, status == 0 else { throw CocoaError(.fileWriteUnknown) }
        return descriptor
    }

    private static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    func send(_ bytes: [UInt8], from descriptor: Int32, to port: Int) {
        var address = Self.address(port: port)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// The next command on `descriptor` (3 s at most).
    func receive(on descriptor: Int32) -> AppleMIDICommand? {
        var buffer = [UInt8](repeating: 0, count: 1_500)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return try? AppleMIDICommand(parsing: Array(buffer.prefix(count)))
    }

    /// Joins the session on `port` (control) and `port + 1` (data); true when both accepted.
    func join(port: Int) -> Bool {
        send(AppleMIDICommand.invitation(token: 7, ssrc: ssrc, name: "UDP Peer").bytes, from: control, to: port)
        guard case .accept = receive(on: control) else { return false }
        send(AppleMIDICommand.invitation(token: 7, ssrc: ssrc, name: "UDP Peer").bytes, from: data, to: port + 1)
        guard case .accept = receive(on: data) else { return false }
        return true
    }

    /// Sends MIDI messages (given as bytes) in one RTP-MIDI packet.
    func play(_ messages: [[UInt8]], port: Int) throws {
        sequence &+= 1
        let commands = messages.map { RTPMIDIPacket.Command(delta: 0, bytes: $0) }
        send(
            try RTPMIDIPacket.serialize(sequence: sequence, timestamp: 0, ssrc: ssrc, commands: commands), from: data,
            to: port + 1)
    }
}

@Suite("Live session: set-up, a network peer, tear-down", .serialized)
struct LiveSessionTests {
    /// Network MIDI on loopback, audio to ALSA's null device, recording on.
    func configuration() -> LiveSession.Configuration {
        var configuration = LiveSession.Configuration(
            soundFonts: [bundledFontPath], device: ALSAOutput.Configuration(device: "null", periodFrames: 256))
        var network = LiveSession.NetworkMIDI(listen: RTPMIDIAddress(host: "127.0.0.1", port: 0))
        network.advertises = false
        configuration.network = network
        configuration.recordsMIDI = true
        configuration.sampler.programOverrides = [SamplerNode.ProgramOverride(channel: 0, program: 4)]
        return configuration
    }

    @Test("a session starts, takes a peer's network session, and stops: the peer told, ports closed, files written")
    func setUpAndTearDown() throws {
        try withTemporaryFolder("live") { directory in
            let session = try LiveSession(configuration())
            if session.sequencerInput == nil {
                #expect(session.notes.contains { $0.description.hasSuffix("network MIDI only") }, "\(session.notes)")
            }
            #expect(!session.output.isRunning)
            try session.start()
            #expect(session.output.isRunning)
            // The null device kept to the clock, as live input needs: the engine no further ahead of
            // the time that went by than the buffer (unpaced, it ran about a hundred times ahead).
            #expect(session.output.isPaced)
            let begun = Date()
            let first = session.engine.currentSampleTime
            usleep(300_000)
            let rendered = Double(session.engine.currentSampleTime - first) / session.output.sampleRate
            let ahead = rendered - Date().timeIntervalSince(begun)
            #expect(ahead < session.output.bufferLatency + 0.02, "\(rendered) s rendered in 0.3 s")
            let listener = try #require(session.network)
            #expect(listener.port != 0)

            let peer = RTPMIDIListener(host: "127.0.0.1", port: 0, name: "Peer")
            try peer.start()
            defer { peer.stop() }
            try peer.invite(host: "127.0.0.1", port: listener.port)
            #expect(eventually(5) { session.sources.contains { $0.name == "Peer (network)" && $0.isConnected } })
            var events: [LiveSession.Event] = []
            #expect(
                eventually(5) {
                    events += session.takeEvents()
                    return events.contains { $0.description.hasPrefix("network MIDI: connected: Peer (127.0.0.1:") }
                }, "\(events)")
            #expect(session.latencyMilliseconds > 256.0 / 44.1)

            let port = listener.port
            session.stop()
            #expect(!session.output.isRunning && !session.engine.isRunning)
            // The peer hears BY; the ports are free again.
            #expect(eventually(5) { peer.takeEvents().contains { $0.hasPrefix("ended: Pianola") } })
            let again = RTPMIDIListener(host: "127.0.0.1", port: port, name: "Again")
            try again.start()
            again.stop()
            session.stop()  // twice is harmless

            try session.writeRecording(to: directory + "/take.mid")
            let recorded = try MIDIFile.read(path: directory + "/take.mid")
            #expect(recorded.diagnostics.isEmpty)
            try session.latencyReport().write(to: directory + "/latency.json")
            let report = try JSONDecoder().decode(
                LatencyReport.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/latency.json")))
            #expect(report.notes == 0 && report.periodFrames == 256 && report.sampleRate == 44_100)
        }
    }

    @Test("notes from a network peer sound, are recorded, and are released when the session stops")
    func networkNotes() throws {
        try withTemporaryFolder("live") { directory in
            let session = try LiveSession(configuration())
            try session.start()
            let port = try #require(session.network?.port)
            let peer = try UDPPeer()
            #expect(peer.join(port: port))
            #expect(session.status().peak < 1e-4, "sound above -80 dBFS before any note")
            try peer.play([[0x90, 60, 100], [0x90, 64, 100]], port: port)
            // The peak since the last look, not the voices at one instant: on a busy machine a struck
            // piano note can sound and die out between two looks.
            var heard: [LiveStatus] = []
            #expect(
                eventually(5) {
                    heard.append(session.status())
                    return heard.contains { $0.peak > 0.01 }
                }, "no note sounded above -40 dBFS: \(heard.suffix(3))")
            #expect(eventually(5) { session.status().deliveredCount == 2 })
            // Stopping ends the session: the two held notes are released, and so recorded.
            session.stop()
            var ended = false
            while !ended, let command = peer.receive(on: peer.control) {
                if case .end(let token, _) = command { ended = token == 7 }
            }
            #expect(ended, "the peer was not told the session ended (BY)")
            try session.writeRecording(to: directory + "/take.mid")
            let notes = try MIDIFile.read(path: directory + "/take.mid").file.tracks.flatMap { $0.notes() }
            #expect(notes.map(\.key).sorted() == [60, 64], "\(notes)")
            #expect(notes.allSatisfy { !$0.isUnterminated }, "a note was left sounding: \(notes)")
        }
    }

    @Test("with a channel map, a keyboard's channel 2 plays its own synthesizer on outputs 3-4 of a 4-channel device")
    func channelMap() throws {
        try withTemporaryFolder("live") { directory in
            var configuration = configuration()
            // Paced at twice real time (four float channels), to take half the time the null device
            // kept to the clock would.
            let drain = PacedDrain(folder: directory, bytesPerSecond: 44_100 * 16 * 2)
            configuration.device.device = drain.device
            configuration.channelRouting = try ChannelRouting(routes: [.init(midiChannels: [1], outputs: [2, 3])])
            let session = try LiveSession(configuration)
            #expect(session.output.channelCount == 4 && session.samplers.count == 2)
            try session.start()
            let port = try #require(session.network?.port)
            let peer = try UDPPeer()
            #expect(peer.join(port: port))
            // Held notes.
            try peer.play([[0x91, 48, 100]], port: port)
            #expect(eventually(5) { session.samplers[1].activeVoiceCount > 0 }, "channel 2 did not sound on its part")
            #expect(session.samplers[0].activeVoiceCount == 0, "channel 2 sounded on the mix")
            try peer.play([[0x90, 60, 100]], port: port)
            #expect(eventually(5) { session.samplers[0].activeVoiceCount > 0 }, "channel 1 did not sound on the mix")
            #expect(
                session.status().voiceCount == session.samplers[0].activeVoiceCount
                    + session.samplers[1].activeVoiceCount)
            session.stop()

            configuration.recordsAudio = OutputRecording(
                path: FileManager.default.temporaryDirectory.path + "/never.wav", settings: AudioFileTap.Settings())
            #expect(throws: SessionError.self) { try LiveSession(configuration) }
        }
    }

    @Test("--record-audio: the MIDI recording has each note where the audio has it, within a 64-frame block")
    func recordsAlignedAudio() throws {
        try withTemporaryFolder("live") { directory in
            // The output paced at twice real time (a FIFO drained at that rate), to take half the time the
            // null device kept to the clock would.
            let drain = PacedDrain(folder: directory, bytesPerSecond: 44_100 * 8 * 2)
            var configuration = configuration()
            configuration.device.device = drain.device
            var settings = AudioFileTap.Settings()
            settings.encoding = .f32
            configuration.recordsAudio = OutputRecording(path: directory + "/take.wav", settings: settings)
            configuration.sampler.isReverbEnabled = false
            configuration.sampler.isChorusEnabled = false
            let session = try LiveSession(configuration)
            try session.start()
            let port = try #require(session.network?.port)
            let peer = try UDPPeer()
            #expect(peer.join(port: port))
            for key: UInt8 in [60, 67, 72] {
                usleep(200_000)
                try peer.play([[0x90, key, 100]], port: port)
                usleep(100_000)
                try peer.play([[0x80, key, 0]], port: port)
                _ = session.status()
            }
            usleep(300_000)
            session.stop()
            try session.writeRecording(to: directory + "/take.mid")
            let notes = try MIDIFile.read(path: directory + "/take.mid").file.tracks.flatMap { $0.notes() }
            #expect(notes.map(\.key) == [60, 67, 72])
            let audio = try AudioFile.read(from: directory + "/take.wav")
            #expect(audio.frameCount > 0 && session.audioTap?.failure == nil)
            #expect(session.audioTap?.droppedFrameCount == 0)
            for note in notes {
                // 120 BPM at 1920 ticks per quarter: 3840 ticks a second.
                let frame = Int((Double(note.startTick) / 3_840 * audio.sampleRate).rounded())
                // The previous note (released long before, in this unpaced render) is silent by then.
                let onset = (max(0, frame - 4_096)..<audio.frameCount).first { abs(audio.samples[$0 * 2]) > 1e-4 }
                let distance = (onset ?? Int.max) - frame
                // The recording keeps times to the nearest tick (44 100 / 3840 = 11.5 frames), so its
                // time may lie up to 5.7 frames after the placement the audio starts from.
                #expect((-6..<128).contains(distance), "note \(note.key): sound \(distance) frames from its MIDI time")
            }
        }
    }

    @Test("--fx timepitch:pitch=1200 and varispeed:rate=2 transpose what is played an octave up")
    func transposingEffects() throws {
        try withTemporaryFolder("live") { directory in
            /// The strongest frequency (1 Hz steps, 100…2000 Hz) of a held C4 played through `effects`.
            func strongest(_ effects: [String]) throws -> Double {
                let drain = PacedDrain(folder: directory, bytesPerSecond: 44_100 * 8 * 2)
                var configuration = configuration()
                configuration.device.device = drain.device
                configuration.effects = try effects.map { try EffectSpec.parse($0) }
                var settings = AudioFileTap.Settings()
                settings.encoding = .f32
                let take = directory + "/take-\(effects.count)-\(effects.first ?? "").wav"
                configuration.recordsAudio = OutputRecording(path: take, settings: settings)
                configuration.sampler.isReverbEnabled = false
                configuration.sampler.isChorusEnabled = false
                let session = try LiveSession(configuration)
                try session.start()
                let port = try #require(session.network?.port)
                let peer = try UDPPeer()
                #expect(peer.join(port: port))
                try peer.play([[0x90, 60, 100]], port: port)
                usleep(600_000)
                session.stop()
                let audio = try AudioFile.read(from: take)
                #expect(session.audioTap?.droppedFrameCount == 0)
                let onset = try #require((0..<audio.frameCount).first { abs(audio.samples[$0 * 2]) > 1e-3 })
                let start = onset + 2_000
                try #require(audio.frameCount >= start + 8_192, "\(effects): \(audio.frameCount) frames recorded")
                let window = (start..<(start + 8_192)).map { Double(audio.samples[2 * $0]) }
                var best = (frequency: 0.0, power: 0.0)
                for frequency in stride(from: 100.0, through: 2_000, by: 1) {
                    // Goertzel: the power of one frequency.
                    let coefficient = 2 * cos(2 * Double.pi * frequency / audio.sampleRate)
                    var (s1, s2) = (0.0, 0.0)
                    for sample in window { (s1, s2) = (sample + coefficient * s1 - s2, s1) }
                    let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
                    if power > best.power { best = (frequency, power) }
                }
                return best.frequency
            }
            let plain = try strongest([])
            for effects in [["timepitch:pitch=1200"], ["varispeed:rate=2"]] {
                let shifted = try strongest(effects)
                #expect(abs(shifted / plain - 2) < 0.02, "\(effects): \(shifted) Hz, \(plain) Hz without")
            }
        }
    }

    @Test("a session lets go of its device: stopped, or released without a stop, the output closes and is freed")
    func releasesDevice() throws {
        weak var engine: AudioEngine?
        weak var output: ALSAOutput?
        do {
            let session = try LiveSession(configuration())
            try session.start()
            (engine, output) = (session.engine, session.output as? ALSAOutput)
            #expect(output != nil)
            session.stop()
            #expect(!session.output.isOpen)
        }
        #expect(engine == nil && output == nil, "the engine and the device keep each other alive")
        do {
            let session = try LiveSession(configuration())
            try session.start()
            output = session.output as? ALSAOutput
            #expect(output != nil)
        }
        #expect(output == nil, "a session released while running keeps its device")
    }

    @Test("a JACK session that records MIDI lets go of its client: stopped, or released without a stop")
    func releasesJACKClient() throws {
        let server = try JACKServer.started()
        var configuration = configuration()
        configuration.jack = JACKOutput.Configuration(clientName: "pianola-live", serverName: server.name)
        weak var output: JACKOutput?
        do {
            let session = try LiveSession(configuration)
            try session.start()
            output = session.jack
            #expect(output != nil && server.ports().contains("pianola-live:out_1"))
            session.stop()
        }
        #expect(output == nil, "the JACK client and its MIDI recording keep each other alive")
        do {
            let session = try LiveSession(configuration)
            try session.start()
            output = session.jack
            #expect(output != nil)
        }
        #expect(output == nil, "a JACK session released while running keeps its client")
        #expect(!server.ports().contains("pianola-live:out_1"), "the client's ports stayed in the graph")
    }

    @Test("set-up fails with one typed error: a missing SoundFont, a peer that does not resolve, a bad device")
    func setUpErrors() throws {
        var missingFont = configuration()
        missingFont.soundFonts = ["/nonexistent.sf2"]
        #expect {
            try LiveSession(missingFont)
        } throws: { error in
            guard case .soundFont = error as? SessionError else { return false }
            return "\(error)".contains("/nonexistent.sf2")
        }
        var badPeer = configuration()
        badPeer.network?.peers = [RTPMIDIAddress(host: "no-such-host.invalid", port: 5004)]
        #expect {
            try LiveSession(badPeer)
        } throws: { error in
            guard case .midi(.unknownHost) = error as? SessionError else { return false }
            return true
        }
        var badDevice = configuration()
        badDevice.device.device = "nosuchdevice"
        #expect {
            try LiveSession(badDevice)
        } throws: { error in
            guard case .device = error as? SessionError else { return false }
            return "\(error)".contains("nosuchdevice")
        }
        if (try? ALSASequencerInput()) == nil {
            var noInput = configuration()
            noInput.network = nil
            #expect {
                try LiveSession(noInput)
            } throws: { error in
                guard case .midi(.sequencerUnavailable) = error as? SessionError else { return false }
                return true
            }
        }
    }
}
