import AudioGraph
import MIDICore
import SMF
import TestSupport
import Testing

@testable import Sequencer

/// A destination that keeps the messages it is handed.
private final class MessageLog: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    var messages: [MIDIMessage] = []
    init() { super.init(name: "message log") }
    func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) { messages.append(message) }
}

@Suite("MIDI router and fan-out: a wrong table is a typed error, an empty fan-out a sink")
struct MIDIRoutingTests {
    @Test("a router with no destinations, not 16 routes, or a route to no destination throws")
    func routerTables() throws {
        let band = MessageLog()
        let drums = MessageLog()
        let toBand = [Int](repeating: 0, count: 16)
        #expect(throws: MIDIChannelRouterError.noDestinations) {
            try MIDIChannelRouter(destinations: [], channelRoutes: toBand)
        }
        for count in [0, 15, 17] {
            #expect(throws: MIDIChannelRouterError.wrongRouteCount(count)) {
                try MIDIChannelRouter(destinations: [band], channelRoutes: [Int](repeating: 0, count: count))
            }
        }
        for wrong in [2, -1, Int.max] {
            var routes = toBand
            routes[9] = wrong
            #expect(throws: MIDIChannelRouterError.noSuchDestination(channel: 9, index: wrong, destinationCount: 2)) {
                try MIDIChannelRouter(destinations: [band, drums], channelRoutes: routes)
            }
        }
        let router = try MIDIChannelRouter(
            destinations: [band, drums], channelRoutes: (0..<16).map { $0 == 9 ? 1 : 0 })
        router.receive(on(36, channel: 9), atFrameOffset: 0)
        router.receive(on(60), atFrameOffset: 0)
        router.receive(.systemReset, atFrameOffset: 0)
        #expect(band.messages == [on(60), .systemReset])
        #expect(drums.messages == [on(36, channel: 9), .systemReset])
    }

    @Test("a fan-out to no destinations drops what it is sent, also as a player's destination")
    func emptyFanOut() throws {
        let nowhere = MIDIFanOut(destinations: [])
        #expect(nowhere.destinations.isEmpty)
        nowhere.receive(on(60), atFrameOffset: 0)
        [UInt8](arrayLiteral: 0x7E, 0x7F).withUnsafeBufferPointer {
            nowhere.receiveSystemExclusive($0, atFrameOffset: 0)
        }
        nowhere.streamInterrupted(.stopped, atFrameOffset: 0)
        let engine = AudioEngine()
        let sound = RecordingNode()
        try engine.attach(sound)
        try engine.connect(sound, to: engine.mainMixerNode)
        let player = MusicPlayer(
            sequence: MusicSequence(file: makeFile(tracks: [[(0, on(60)), (480, off(60))]])), destination: nowhere)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 4_800)
        player.play()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4_800)
        for _ in 0..<20 { try engine.renderOffline(frameCount: 4_800, into: buffer) }
        #expect(player.isFinished)
        #expect(sound.received.isEmpty)
    }
}
