import AudioGraph
import MIDICore
import Testing

@testable import Sampler

/// Issue 43, point 11: the note API used to return and do nothing for a number out of range.
@Suite("Sampler note API: numbers out of range", .serialized)
struct SamplerValueRangeTests {
    @Test("each call throws MIDIValueError naming the field, and sends nothing")
    func noteAPIRefuses() throws {
        let sampler = try SamplerNode(settings: dryLeadSettings())
        try sampler.loadSoundFont(at: bundledFont)
        #expect(throws: MIDIValueError(field: "note", value: 200, range: 0...127)) {
            try sampler.startNote(200, withVelocity: 100, onChannel: 0)
        }
        #expect(throws: MIDIValueError(field: "channel", value: 16, range: 0...15)) {
            try sampler.startNote(60, withVelocity: 100, onChannel: 16)
        }
        #expect(throws: MIDIValueError(field: "velocity", value: 128, range: 0...127)) {
            try sampler.startNote(60, withVelocity: 128, onChannel: 0)
        }
        #expect(throws: MIDIValueError(field: "channel", value: 99, range: 0...15)) {
            try sampler.sendController(200, withValue: 200, onChannel: 99)
        }
        #expect(throws: MIDIValueError(field: "controller", value: 200, range: 0...127)) {
            try sampler.sendController(200, withValue: 0, onChannel: 0)
        }
        #expect(throws: MIDIValueError(field: "value", value: 16_384, range: 0...16_383)) {
            try sampler.sendPitchBend(16_384, onChannel: 0)
        }
        #expect(throws: MIDIValueError(field: "pressure", value: 128, range: 0...127)) {
            try sampler.sendPressure(128, onChannel: 0)
        }
        #expect(throws: MIDIValueError(field: "note", value: 128, range: 0...127)) {
            try sampler.sendPressure(forKey: 128, withValue: 1, onChannel: 0)
        }
        #expect(throws: MIDIValueError(field: "note", value: 130, range: 0...127)) {
            try sampler.stopNote(130, onChannel: 0)
        }
        #expect(throws: MIDIValueError(field: "SysEx byte", value: 0xF7, range: 0...127)) {
            try sampler.sendMIDI(.systemExclusive([0x7F, 0xF7]))
        }
        // A refused program change changes nothing, not even the bank selects before it.
        try sampler.sendProgramChange(19, onChannel: 2)
        #expect(throws: MIDIValueError(field: "program", value: 128, range: 0...127)) {
            try sampler.sendProgramChange(128, bankMSB: 1, onChannel: 2)
        }
        #expect(sampler.program(onChannel: 2)?.program == 19)
        #expect(sampler.program(onChannel: 2)?.bank == 0)
        // Nothing sounds: no refused note reached the synthesizer.
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4096)
        sampler.render(
            into: buffer, inputs: .none, frameCount: 4096, time: AudioTime(sampleTime: 0, sampleRate: 44_100))
        #expect(sampler.activeVoiceCount == 0)
        // The edges of the ranges are accepted and play.
        try sampler.startNote(127, withVelocity: 127, onChannel: 15)
        try sampler.startNote(0, withVelocity: 1, onChannel: 0)
        sampler.render(
            into: buffer, inputs: .none, frameCount: 4096, time: AudioTime(sampleTime: 4096, sampleRate: 44_100))
        #expect(sampler.activeVoiceCount >= 2)
    }
}
