import MIDICore

/// A registered (RPN) or non-registered (NRPN) parameter number of a MIDI channel: the 14-bit
/// number controllers 101/100 (RPN) or 99/98 (NRPN) select, that Data Entry (6, 38) and Data
/// Increment/Decrement (96, 97) then act on. RPN 0 is the pitch-bend range, 1 and 2 the fine and
/// coarse tuning; 0x3FFF (127/127) is the null parameter, which selects none.
public struct ParameterNumber: Hashable, Sendable {
    /// The number, 0…16383: MSB × 128 + LSB.
    public var number: UInt16
    /// Whether it is an NRPN (selected by 99/98) rather than an RPN (101/100).
    public var isNonRegistered: Bool

    /// The parameter `number` (0…16383; masked to 14 bits), an NRPN when `isNonRegistered`.
    public init(_ number: UInt16, isNonRegistered: Bool = false) {
        self.number = number & 0x3FFF
        self.isNonRegistered = isNonRegistered
    }

    /// The selecting messages: MSB then LSB on `channel` (101/100 for an RPN, 99/98 for an NRPN).
    func selection(onChannel channel: UInt8) -> [MIDIMessage] {
        let controllers: (UInt8, UInt8) = isNonRegistered ? (99, 98) : (101, 100)
        return [
            .controlChange(channel: channel, controller: controllers.0, value: UInt8(number >> 7)),
            .controlChange(channel: channel, controller: controllers.1, value: UInt8(number & 0x7F)),
        ]
    }

    /// The null RPN: selecting it leaves no parameter for Data Entry to change.
    static let null = ParameterNumber(0x3FFF)
}

/// Which parameter a channel's Data Entry goes to, as a receiver keeps it (RP-018): the RPN and
/// NRPN number registers, which of the two was selected last, and whether the last selecting
/// message was an MSB whose LSB has not come yet (the journal's PENDING). Reset All Controllers
/// sets both to null (RP-015).
struct ParameterSelection: Equatable, Sendable {
    var registered: UInt16 = 0x3FFF
    var nonRegistered: UInt16 = 0x3FFF
    var usesNonRegistered = false
    var isPending = false

    /// The parameter Data Entry changes now, nil when the selection is null.
    var active: ParameterNumber? {
        let number = usesNonRegistered ? nonRegistered : registered
        return number == 0x3FFF ? nil : ParameterNumber(number, isNonRegistered: usesNonRegistered)
    }

    /// Applies a selecting controller (99, 98, 101, 100) or Reset All Controllers (121); false
    /// for any other controller, which leaves the selection as it was.
    mutating func apply(controller: UInt8, value: UInt8) -> Bool {
        let value = UInt16(value & 0x7F)
        switch controller {
        case 101: registered = value << 7 | registered & 0x7F
        case 100: registered = registered & 0x3F80 | value
        case 99: nonRegistered = value << 7 | nonRegistered & 0x7F
        case 98: nonRegistered = nonRegistered & 0x3F80 | value
        case 121:
            self = ParameterSelection()
            return true
        default: return false
        }
        usesNonRegistered = controller == 99 || controller == 98
        isPending = controller == 101 || controller == 99
        return true
    }
}

extension ChannelJournal {
    /// A log of chapter M: what the commands since the checkpoint left in one parameter (RFC 6295
    /// A.4.2), as the value tool codes it: the last Data Entry MSB (and LSB) and the net count of
    /// Data Increments less Decrements since.
    public struct ParameterLog: Equatable, Sendable {
        /// The log's S bit.
        public var isSinglePacketLossIrrelevant = false
        /// The parameter.
        public var parameter: ParameterNumber
        /// ENTRY-MSB (J): the last Data Entry MSB (controller 6), nil when none came since the checkpoint.
        public var entryMSB: UInt8?
        /// ENTRY-LSB (K): the last Data Entry LSB (controller 38) after it.
        public var entryLSB: UInt8?
        /// A-BUTTON (L): Data Increments less Decrements (96, 97) since the last Data Entry, ±16383.
        public var increments: Int?
        /// The X bits: the fields' commands came before the channel's last Reset All Controllers.
        public var precedesReset = false
        /// C-BUTTON (M), as read: the increment count since the last Reset All Controllers (not written).
        public var incrementsSinceReset: Int?
        /// COUNT (N), as read: the number of transactions, modulo 128 (not written).
        public var transactions: UInt8?
        /// The T bit: the sender codes the parameter with the count tool.
        public var usesCountTool = false
        /// The V bit: the sender codes the parameter with the value tool.
        public var usesValueTool = true

        /// A log of `parameter`, last set to `entryMSB` (and `entryLSB`), then stepped `increments` times.
        public init(parameter: ParameterNumber, entryMSB: UInt8? = nil, entryLSB: UInt8? = nil, increments: Int? = nil)
        {
            self.parameter = parameter
            self.entryMSB = entryMSB
            self.entryLSB = entryLSB
            self.increments = increments
        }
    }

    /// Chapter M: the parameters (RPN and NRPN) changed since the checkpoint, the last changed
    /// last, and the channel's selection: the parameter Data Entry goes to now (the final log's,
    /// when `isFinalLogActive`: the E bit), or an MSB still waiting for its LSB (PENDING).
    public struct Parameters: Equatable, Sendable {
        /// The chapter's S bit.
        public var isSinglePacketLossIrrelevant = false
        /// PENDING (the P bit): the parameter MSB selected last, with no LSB after it yet.
        public var pending: (msb: UInt8, isNonRegistered: Bool)?
        /// The E bit: a transaction is in progress on the final log's parameter (it is selected).
        public var isFinalLogActive = false
        /// The parameter logs, in the order their parameters were last changed.
        public var logs: [ParameterLog]

        /// A chapter M of `logs` (the selection null unless `isFinalLogActive` or `pending` says otherwise).
        public init(logs: [ParameterLog] = [], isFinalLogActive: Bool = false) {
            self.logs = logs
            self.isFinalLogActive = isFinalLogActive
        }

        /// The parameter the sender's Data Entry goes to, nil when its selection is null or pending.
        public var active: ParameterNumber? { isFinalLogActive && pending == nil ? logs.last?.parameter : nil }

        public static func == (left: Parameters, right: Parameters) -> Bool {
            left.isSinglePacketLossIrrelevant == right.isSinglePacketLossIrrelevant
                && left.pending?.msb == right.pending?.msb
                && left.pending?.isNonRegistered == right.pending?.isNonRegistered
                && left.isFinalLogActive == right.isFinalLogActive && left.logs == right.logs
        }

        /// S P E U W Z LENGTH(10), PENDING (Q and 7 bits) when P, then the logs: S PNUM-LSB, Q
        /// PNUM-MSB (left out when Z and U or W say every log is an RPN, or every one an NRPN,
        /// with MSB 0), J K L M N T V R, then the fields the TOC names.
        init(reading reader: inout JournalReader) throws(RTPMIDIPacketError) {
            var (flags, chapter) = try reader.lengthPrefixed("chapter M")
            self.init()
            isSinglePacketLossIrrelevant = flags & 0x80 != 0
            isFinalLogActive = flags & 0x20 != 0
            let allRegistered = flags & 0x10 != 0
            let allNonRegistered = flags & 0x08 != 0
            let short = flags & 0x04 != 0 && (allRegistered || allNonRegistered)
            if flags & 0x40 != 0 {
                let octet = try chapter.u8()
                pending = (octet & 0x7F, octet & 0x80 != 0)
            }
            while !chapter.isAtEnd {
                let first = try chapter.u8()
                let second = short ? (allRegistered ? 0 : 0x80) : try chapter.u8()
                var log = ParameterLog(
                    parameter: ParameterNumber(
                        UInt16(second & 0x7F) << 7 | UInt16(first & 0x7F), isNonRegistered: second & 0x80 != 0))
                log.isSinglePacketLossIrrelevant = first & 0x80 != 0
                let contents = try chapter.u8()
                log.usesCountTool = contents & 0x04 != 0
                log.usesValueTool = contents & 0x02 != 0
                if contents & 0x80 != 0 {
                    let octet = try chapter.u8()
                    log.entryMSB = octet & 0x7F
                    log.precedesReset = octet & 0x80 != 0
                }
                if contents & 0x40 != 0 {
                    let octet = try chapter.u8()
                    log.entryLSB = octet & 0x7F
                    log.precedesReset = log.precedesReset || octet & 0x80 != 0
                }
                // A-BUTTON and C-BUTTON: G (the sign), X or R, 14 bits of count.
                func button() throws(RTPMIDIPacketError) -> (count: Int, flag: Bool) {
                    let bytes = try chapter.bytes(2)
                    let magnitude = Int(bytes[0] & 0x3F) << 8 | Int(bytes[1])
                    return (bytes[0] & 0x80 != 0 ? -magnitude : magnitude, bytes[0] & 0x40 != 0)
                }
                if contents & 0x20 != 0 {
                    let (count, flag) = try button()
                    log.increments = count
                    log.precedesReset = log.precedesReset || flag
                }
                if contents & 0x10 != 0 { log.incrementsSinceReset = try button().count }
                if contents & 0x08 != 0 { log.transactions = try chapter.u8() & 0x7F }
                logs.append(log)
            }
        }

        /// The chapter's octets, at most `maximumOctets` of them (nothing when even an empty chapter
        /// would not fit): the most recently changed parameters that fit, 100 at most, so that the
        /// final log is still the active one.
        func serialized(maximumOctets: Int = 1023) -> [UInt8] {
            var count = min(logs.count, 100)
            while true {
                let bytes = serialized(logs.suffix(count))
                if bytes.count <= maximumOctets { return bytes }
                if count == 0 { return [] }
                count -= 1
            }
        }

        private func serialized(_ logs: ArraySlice<ParameterLog>) -> [UInt8] {
            let allRegistered = !logs.isEmpty && logs.allSatisfy { !$0.parameter.isNonRegistered }
            let allNonRegistered = !logs.isEmpty && logs.allSatisfy(\.parameter.isNonRegistered)
            let lowNumbers = !logs.isEmpty && logs.allSatisfy { $0.parameter.number < 128 }
            let short = lowNumbers && (allRegistered || allNonRegistered)
            var body: [UInt8] = []
            if let pending { body.append((pending.isNonRegistered ? 0x80 : 0) | pending.msb & 0x7F) }
            for log in logs {
                let number = log.parameter.number
                body.append((log.isSinglePacketLossIrrelevant ? 0x80 : 0) | UInt8(number & 0x7F))
                if !short { body.append((log.parameter.isNonRegistered ? 0x80 : 0) | UInt8(number >> 7 & 0x7F)) }
                let x: UInt8 = log.precedesReset ? 0x80 : 0
                var contents: UInt8 = (log.usesCountTool ? 0x04 : 0) | (log.usesValueTool ? 0x02 : 0)
                var fields: [UInt8] = []
                if let msb = log.entryMSB {
                    contents |= 0x80
                    fields.append(x | msb & 0x7F)
                }
                if let lsb = log.entryLSB {
                    contents |= 0x40
                    fields.append(x | lsb & 0x7F)
                }
                if let increments = log.increments {
                    contents |= 0x20
                    let magnitude = Int(min(increments.magnitude, 0x3FFF))
                    fields += [
                        (increments < 0 ? 0x80 : 0) | (log.precedesReset ? 0x40 : 0) | UInt8(magnitude >> 8),
                        UInt8(magnitude & 0xFF),
                    ]
                }
                body += [contents] + fields
            }
            let length = body.count + 2
            let flags: UInt8 =
                (isSinglePacketLossIrrelevant ? 0x80 : 0) | (pending == nil ? 0 : 0x40) | (isFinalLogActive ? 0x20 : 0)
                | (allRegistered ? 0x10 : 0) | (allNonRegistered ? 0x08 : 0) | (lowNumbers ? 0x04 : 0)
            return [flags | UInt8(length >> 8 & 0x03), UInt8(truncatingIfNeeded: length)] + body
        }
    }
}
