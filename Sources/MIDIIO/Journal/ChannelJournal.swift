/// One MIDI channel's part of a recovery journal (RFC 6295 §5.2 and Appendix A): the state its
/// commands since the checkpoint left, chapter by chapter. Chapters P, C, M, W, N, T and A are
/// read and written; chapter E (note extras) is read only as far as its length, to step over it
/// (`skippedChapters` says when it was there).
///
/// Each `isSinglePacketLossIrrelevant` is the structure's S bit: true when nothing in it comes from
/// the packet just before the one that carries the journal, so that a receiver that lost only that
/// packet may skip it. False is always safe.
public struct ChannelJournal: Equatable, Sendable {
    /// Chapter P: the channel's last Program Change, with the bank it selected when one was known.
    public struct Program: Equatable, Sendable {
        /// The chapter's S bit.
        public var isSinglePacketLossIrrelevant = false
        /// The program number, 0…127.
        public var program: UInt8
        /// Bank select MSB and LSB (CC 0 and 32) in force at the Program Change, when any was sent (the B bit).
        public var bank: (msb: UInt8, lsb: UInt8)?

        /// A chapter P for `program`, in `bank` when one is known.
        public init(program: UInt8, bank: (msb: UInt8, lsb: UInt8)? = nil) {
            self.program = program
            self.bank = bank
        }

        public static func == (left: Program, right: Program) -> Bool {
            left.isSinglePacketLossIrrelevant == right.isSinglePacketLossIrrelevant && left.program == right.program
                && left.bank?.msb == right.bank?.msb && left.bank?.lsb == right.bank?.lsb
        }
    }

    /// A log of chapter C: a controller's last value (the value tool), or the count or toggle of
    /// a controller coded with another tool (kept as read, not acted on).
    public struct ControllerLog: Equatable, Sendable {
        /// The log's S bit.
        public var isSinglePacketLossIrrelevant = false
        /// The controller number, 0…127.
        public var controller: UInt8
        /// The value (A = 0), or nil when the log uses the toggle or count tool.
        public var value: UInt8?
        /// The ALT field of a toggle or count log (A = 1), as read.
        public var alternative: UInt8 = 0

        /// A value-tool log: `controller` was last set to `value`.
        public init(controller: UInt8, value: UInt8) {
            self.controller = controller
            self.value = value
        }
    }

    /// A log of chapter N: a note whose last Note On came after the checkpoint.
    public struct NoteLog: Equatable, Sendable {
        /// The log's S bit.
        public var isSinglePacketLossIrrelevant = false
        /// The note number, 0…127.
        public var note: UInt8
        /// The Note On's velocity (1…127).
        public var velocity: UInt8
        /// The Y bit: the sender recommends playing the note when the loss is repaired.
        public var isRecommendedToPlay: Bool

        /// A log of `note`, on with `velocity`, played on repair when `isRecommendedToPlay`.
        public init(note: UInt8, velocity: UInt8, isRecommendedToPlay: Bool = true) {
            self.note = note
            self.velocity = velocity
            self.isRecommendedToPlay = isRecommendedToPlay
        }
    }

    /// Chapter N: note logs, and the notes whose last command since the checkpoint was a Note Off
    /// (the OFFBITS).
    public struct Notes: Equatable, Sendable {
        /// The B bit: the OFFBITS' S bit, false when the packet before had a Note Off on the channel.
        public var isSinglePacketLossIrrelevant = false
        /// The notes on since the checkpoint, with their velocities.
        public var logs: [NoteLog]
        /// Notes released since the checkpoint (their last command a Note Off).
        public var released: Set<UInt8>

        /// A chapter N of notes on (`logs`) and notes released.
        public init(logs: [NoteLog] = [], released: Set<UInt8> = []) {
            self.logs = logs
            self.released = released
        }
    }

    /// A log of chapter A: a note's last polyphonic pressure.
    public struct PressureLog: Equatable, Sendable {
        /// The log's S bit.
        public var isSinglePacketLossIrrelevant = false
        /// The note number, 0…127.
        public var note: UInt8
        /// Its last pressure, 0…127.
        public var pressure: UInt8
        /// The X bit: an All Notes Off (or All Sound Off, or a mode change) came after the
        /// pressure: it no longer applies.
        public var isCancelled = false

        /// A log of `note`'s last `pressure`.
        public init(note: UInt8, pressure: UInt8) {
            self.note = note
            self.pressure = pressure
        }
    }

    /// The other chapters that a journal may hold and this type steps over.
    public enum SkippedChapter: Hashable, Sendable {
        /// Chapter E: note extras (release velocities, repeated Note Ons).
        case noteExtras
    }

    /// The channel journal's S bit.
    public var isSinglePacketLossIrrelevant = false
    /// The MIDI channel, 0…15.
    public var channel: UInt8
    /// The H bit: chapter C uses the enhanced encoding (read, not written).
    public var hasEnhancedControllers = false
    /// Chapter P: the last Program Change.
    public var program: Program?
    /// Chapter C: each controller's last value, in controller order.
    public var controllers: [ControllerLog] = []
    /// Chapter M: the RPN and NRPN parameters changed, and the parameter selected.
    public var parameters: Parameters?
    /// Chapter W: the last pitch wheel, as its two data bytes (LSB first).
    public var pitchWheel: (lsb: UInt8, msb: UInt8)?
    /// Chapter N: notes on and released.
    public var notes: Notes?
    /// Chapter T: the last channel pressure.
    public var channelPressure: UInt8?
    /// Chapter A: each note's last polyphonic pressure.
    public var polyPressure: [PressureLog] = []
    /// The chapters read only to step over them.
    public var skippedChapters: Set<SkippedChapter> = []

    /// An empty channel journal for `channel` (0…15).
    public init(channel: UInt8) { self.channel = channel }

    /// Whether the journal holds no chapter (such a channel journal is not written).
    public var isEmpty: Bool {
        program == nil && controllers.isEmpty && parameters == nil && pitchWheel == nil
            && (notes.map { $0.logs.isEmpty && $0.released.isEmpty } ?? true) && channelPressure == nil
            && polyPressure.isEmpty
    }

    public static func == (left: ChannelJournal, right: ChannelJournal) -> Bool {
        left.isSinglePacketLossIrrelevant == right.isSinglePacketLossIrrelevant && left.channel == right.channel
            && left.hasEnhancedControllers == right.hasEnhancedControllers && left.program == right.program
            && left.controllers == right.controllers && left.parameters == right.parameters
            && left.pitchWheel?.lsb == right.pitchWheel?.lsb
            && left.pitchWheel?.msb == right.pitchWheel?.msb && left.notes == right.notes
            && left.channelPressure == right.channelPressure && left.polyPressure == right.polyPressure
            && left.skippedChapters == right.skippedChapters
    }
}
