import CFluidSynth

/// Events taken inside FluidSynth's blocks, as its own MIDI player sends them.
///
/// FluidSynth's player runs from the synthesizer's sample timer: before mixing each 64-frame
/// block, the synthesizer applies the events sent earlier, then calls the player, whose events
/// see the synthesizer as it was before the block (voices that finish in the block still busy)
/// and sound from the next block. Events applied between two blocks see the block's finished
/// voices free: a note-on can take one of them, whose mix gain starts its first block from
/// another value than the voice FluidSynth's player would have given it. FluidSynth calls no
/// user code inside a block except a player's, so the sampler runs a player of its own on a
/// silent clock file, one tick per millisecond, and applies the armed events from its tick
/// callback. The player sends events only in blocks where its millisecond changes, and the
/// callback fires in exactly those blocks, so every armed event is taken inside its block.
extension SamplerNode {
    /// A format-0 file, one tick per millisecond (tempo 1000 µs per quarter note, 1 tick per
    /// quarter note), with no events but its end, 74 hours on.
    static let blockClockFile: [UInt8] =
        Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 1] + Array("MTrk".utf8) + [0, 0, 0, 14]
        + [0x00, 0xFF, 0x51, 0x03, 0x00, 0x03, 0xE8] + [0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0x2F, 0x00]

    /// Starts the clock at the synthesizer's current frame (its first, for a new sampler).
    func startBlockClock() {
        fluid_settings_setstr(synth.settings, "player.timing-source", "sample")
        guard let player = new_fluid_player(synth.synth) else { return }
        fluid_player_set_playback_callback(player, nil, nil)
        fluid_player_set_tick_callback(
            player,
            { data, _ in
                guard let data else { return FLUID_OK }
                Unmanaged<SamplerNode>.fromOpaque(data).takeUnretainedValue().applyArmedEvents()
                return FLUID_OK
            }, Unmanaged.passUnretained(self).toOpaque())
        let added = Self.blockClockFile.withUnsafeBytes { fluid_player_add_mem(player, $0.baseAddress, $0.count) }
        guard added == FLUID_OK, fluid_player_play(player) == FLUID_OK else {
            delete_fluid_player(player)
            return
        }
        blockClock = player
    }

    func stopBlockClock() {
        guard let player = blockClock else { return }
        blockClock = nil
        delete_fluid_player(player)
    }
}
