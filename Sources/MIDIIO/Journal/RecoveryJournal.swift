/// An RTP-MIDI recovery journal (RFC 6295 §5): what the sender's MIDI stream left in effect since
/// a checkpoint packet, carried after each packet's command list so that a receiver that lost
/// packets can repair its state from the next one it gets (`JournalRepair`) instead of releasing
/// everything.
///
/// The journal in packet K codes the commands of the packets from `checkpoint` through K − 1
/// (not K's own). A receiver whose last packet before the loss was L may use it when
/// `checkpoint` ≤ L + 1 (RFC 4696 §7); otherwise the journal no longer covers what was lost.
///
/// The system journal's chapter X (SysEx) is read and written, its other chapters stepped over
/// (see `SystemJournal`); channel chapter E is stepped over (see `ChannelJournal`).
public struct RecoveryJournal: Equatable, Sendable {
    /// The S bit: nothing here comes from the packet just before this one (false is always safe).
    public var isSinglePacketLossIrrelevant = false
    /// The first packet whose commands the journal codes (RFC 6295: the checkpoint packet).
    public var checkpoint: UInt16
    /// The system journal (nil when the Y bit is clear).
    public var systemJournal: SystemJournal?
    /// The channel journals, in ascending channel order, at most 16.
    public var channels: [ChannelJournal]

    /// A journal of the packets from `checkpoint` on, with these channel journals (and system journal).
    public init(checkpoint: UInt16, channels: [ChannelJournal] = [], systemJournal: SystemJournal? = nil) {
        self.checkpoint = checkpoint
        self.channels = channels
        self.systemJournal = systemJournal
    }

    /// Reads a journal (the octets after a packet's command list). Every LENGTH is honoured:
    /// chapters this type does not act on are stepped over, and octets after the last channel
    /// journal are ignored. Throws `malformedJournal` when a structure runs past the end.
    public init(parsing bytes: ArraySlice<UInt8>) throws(RTPMIDIPacketError) {
        var reader = JournalReader(bytes)
        let first = try reader.u8()
        let high = try reader.u8()
        checkpoint = UInt16(high) << 8 | UInt16(try reader.u8())
        isSinglePacketLossIrrelevant = first & 0x80 != 0
        if first & 0x40 != 0 { systemJournal = try SystemJournal(reading: &reader) }
        channels = []
        if first & 0x20 != 0 {
            let count = Int(first & 0x0F) + 1
            for _ in 0..<count { channels.append(try ChannelJournal(reading: &reader)) }
        }
    }

    /// The journal's octets: its header (A set when it holds channel journals), the system
    /// journal when there is one, the non-empty channel journals.
    public func serialized() -> [UInt8] {
        let written = channels.prefix(16).map { $0.serialized() }.filter { !$0.isEmpty }
        var first: UInt8 = isSinglePacketLossIrrelevant ? 0x80 : 0
        if systemJournal != nil { first |= 0x40 }
        if !written.isEmpty { first |= 0x20 | UInt8(written.count - 1) }
        return [first, UInt8(checkpoint >> 8), UInt8(truncatingIfNeeded: checkpoint)]
            + (systemJournal?.serialized() ?? []) + written.joined()
    }

    /// Whether the journal covers a loss after `lastReceived` (the last packet before the gap):
    /// it codes every packet from `checkpoint` on, so it must start no later than the first lost one.
    public func covers(lossAfter lastReceived: UInt16) -> Bool {
        // In sequence-number arithmetic (mod 2^16): checkpoint ≤ lastReceived + 1.
        Int16(bitPattern: checkpoint &- (lastReceived &+ 1)) <= 0
    }
}
