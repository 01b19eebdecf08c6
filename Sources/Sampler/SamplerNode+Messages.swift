import CFluidSynth
import MIDICore

extension SamplerNode {
    /// FluidSynth's system reset, or, keeping the presets, every sound off and every
    /// controller reset (which selects no preset).
    func reset(keepingPresets: Bool) {
        guard keepingPresets else {
            fluid_synth_system_reset(synth.synth)
            applyProgramOverrides()
            return
        }
        // (A range of `Int`: iterating one of `Int32` allocates in debug builds, on the render thread.)
        for channel in 0..<16 {
            fluid_synth_all_sounds_off(synth.synth, Int32(channel))
            fluid_synth_cc(synth.synth, Int32(channel), 121, 0)
        }
    }

    /// Applies one message to the synthesizer (its owner only: see `applyProgramOverrides`).
    func apply(_ message: MIDIMessage) {
        let handle = synth.synth
        switch message {
        case .noteOn(let channel, let note, let velocity):
            if velocity == 0 {
                fluid_synth_noteoff(handle, Int32(channel), Int32(note))
            } else if mutedChannelMask & 1 << UInt16(channel & 15) == 0 {
                fluid_synth_noteon(handle, Int32(channel), Int32(note), Int32(velocity))
            }
        case .controlChange(let channel, let controller, _)
        where (controller == 0 || controller == 32) && overriddenChannels & 1 << UInt16(channel & 15) != 0:
            break  // the override's bank stays
        case .programChange(let channel, _) where overriddenChannels & 1 << UInt16(channel & 15) != 0:
            break
        case .noteOff(let channel, let note, _):
            fluid_synth_noteoff(handle, Int32(channel), Int32(note))
        case .controlChange(let channel, let controller, let value):
            fluid_synth_cc(handle, Int32(channel), Int32(controller), Int32(value))
        case .programChange(let channel, let program):
            fluid_synth_program_change(handle, Int32(channel), Int32(program))
        case .pitchBend(let channel, let value):
            fluid_synth_pitch_bend(handle, Int32(channel), Int32(value))
        case .channelPressure(let channel, let pressure):
            fluid_synth_channel_pressure(handle, Int32(channel), Int32(pressure))
        case .polyphonicKeyPressure(let channel, let note, let pressure):
            fluid_synth_key_pressure(handle, Int32(channel), Int32(note), Int32(pressure))
        case .systemExclusive(let data):
            applySystemExclusive(data)
        case .systemReset:
            reset(keepingPresets: settings.ignoresPresetChanges)
        default:
            break
        }
    }

    /// Universal master volume is handled here (FluidSynth 2.3 ignores it); everything else,
    /// GM/GS/XG resets and tuning included, goes to FluidSynth.
    private func applySystemExclusive(_ data: [UInt8]) {
        data.withUnsafeBufferPointer { applySystemExclusive($0) }
    }

    func applySystemExclusive(_ data: UnsafeBufferPointer<UInt8>) {
        if data.count == 6, data[0] == 0x7F, data[2] == 0x04, data[3] == 0x01 {
            let volume = Float(Int(data[4]) | Int(data[5]) << 7) / 16_383
            fluid_synth_set_gain(synth.synth, baseGain * volume)
            return
        }
        if data.count == 4, data[0] == 0x7E, data[2] == 0x09, data[3] == 0x01 || data[3] == 0x03 {
            // GM (or GM2) System On also restores the master volume.
            fluid_synth_set_gain(synth.synth, baseGain)
        }
        // Roland GS Reset (41 dd 42 12 40 00 7F 00 41) and Yamaha XG System On (43 1n 4C 00 00 7E 00)
        // reset every channel as GM System On does; FluidSynth 2.3 leaves them to the host.
        let isGSReset =
            data.count == 9 && data[0] == 0x41 && data[2] == 0x42 && data[3] == 0x12
            && data[4] == 0x40 && data[5] == 0x00 && data[6] == 0x7F
        let isXGSystemOn =
            data.count == 7 && data[0] == 0x43 && data[1] & 0xF0 == 0x10 && data[2] == 0x4C
            && data[3] == 0x00 && data[4] == 0x00 && data[5] == 0x7E && data[6] == 0x00
        let isGMSystemOn = data.count == 4 && data[0] == 0x7E && data[2] == 0x09 && (data[3] == 0x01 || data[3] == 0x03)
        if isGSReset || isXGSystemOn || (isGMSystemOn && settings.ignoresPresetChanges) {
            reset(keepingPresets: settings.ignoresPresetChanges)
            fluid_synth_set_gain(synth.synth, baseGain)
            return
        }
        data.withMemoryRebound(to: CChar.self) { chars in
            _ = fluid_synth_sysex(synth.synth, chars.baseAddress, Int32(chars.count), nil, nil, nil, 0)
        }
        // GM (GM2) System On resets every channel's program inside FluidSynth.
        if data.count == 4, data[0] == 0x7E, data[2] == 0x09, data[3] == 0x01 || data[3] == 0x03 {
            applyProgramOverrides()
        }
    }
}

/// A loaded SoundFont in a sampler.
public struct SoundFontID: Hashable, Sendable, Comparable {
    /// FluidSynth's id for the font in the sampler that loaded it (samplers that take or share the
    /// font keep this identifier). Fonts loaded later have larger values.
    public let rawValue: Int
    public static func < (lhs: SoundFontID, rhs: SoundFontID) -> Bool { lhs.rawValue < rhs.rawValue }
}
