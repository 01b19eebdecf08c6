#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A SoundFont as one song plays it: the same file, except that instrument zones none of the
/// song's notes can reach are left out of its preset data (SoundFont 2.04, 7.6–7.9). FluidSynth
/// loading it on demand then reads only the samples of the zones that sound, instead of every
/// sample of every preset the song selects (a piano preset holds its whole keyboard).
///
/// The file's bytes up to its preset data (header, INFO, sample data) are the real font's, at
/// the same offsets, so every sample header points at the same bytes and FluidSynth's sample
/// cache finds them under the real path; only the `pdta` list after them is rewritten. The
/// presets, sample headers and the zones that stay are unchanged, in the same order, so every
/// note of the song starts exactly the voices it starts with the whole font.
///
/// A zone is dropped only when it certainly cannot sound: its sample is set by its last
/// generator, and no played (key, velocity) of a preset using it falls inside both the preset
/// zone's and the instrument zone's ranges. Ranges FluidSynth might read differently (not in the
/// first generators, upside down, inherited from a global zone) count as the full keyboard.
struct SoundFontSubset: Sendable {
    /// Where the real font's `pdta` list starts: bytes before it are the real file's.
    let preservedLength: Int
    /// The rewritten `pdta` list, its `LIST` header included.
    let presetData: [UInt8]
    /// Instrument zones with a sample: in the real font, and kept.
    let zoneCount: (total: Int, kept: Int)

    /// The size of the file FluidSynth reads.
    var size: Int { preservedLength + presetData.count }

    /// The bytes 4..<8 of the file: the RIFF size of the rewritten file.
    var riffSize: UInt32 { UInt32(truncatingIfNeeded: size - 8) }

    /// The subset of the font at `path` for `notes` (by bank and program; presets not in it are
    /// not played), or nil when nothing can be left out or the file is not laid out as FluidSynth
    /// requires (INFO, sdta, pdta, in that order, filling the file).
    init?(path: String, notes: [PresetKey: PlayedNotes]) {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var info = stat()
        guard fstat(fileno(file), &info) == 0 else { return nil }
        let fileSize = Int(info.st_size)
        func read(_ count: Int, at offset: Int) -> [UInt8]? {
            guard count >= 0, fseeko(file, off_t(offset), SEEK_SET) == 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: count)
            return fread(&buffer, 1, count, file) == count ? buffer : nil
        }
        guard let header = read(12, at: 0), header.fourCC(at: 0) == "RIFF", header.fourCC(at: 8) == "sfbk",
            Int(header.u32(at: 4)) == fileSize - 8
        else { return nil }
        // The three lists, each right after the previous one (as FluidSynth reads them).
        var offset = 12
        var pdtaStart = 0
        for name in ["INFO", "sdta", "pdta"] {
            guard let list = read(12, at: offset), list.fourCC(at: 0) == "LIST", list.fourCC(at: 8) == name else {
                return nil
            }
            if name == "pdta" { pdtaStart = offset }
            offset += 8 + Int(list.u32(at: 4))
        }
        guard offset == fileSize, let pdta = read(fileSize - pdtaStart - 12, at: pdtaStart + 12),
            let hydra = Hydra(pdta)
        else { return nil }
        guard let rewritten = hydra.keepingZones(for: notes) else { return nil }
        preservedLength = pdtaStart
        presetData = rewritten.bytes
        zoneCount = (rewritten.total, rewritten.kept)
    }

    /// A preset's bank and program.
    struct PresetKey: Hashable, Sendable {
        var bank: Int
        var program: Int
    }
}

/// The nine chunks of a `pdta` list, as records.
private struct Hydra {
    static let layout = SoundFontStructure.presetChunks
    /// Each chunk's data, in `layout` order.
    var chunks: [[UInt8]] = []

    init?(_ data: [UInt8]) {
        var offset = 0
        for (name, recordSize) in Self.layout {
            guard offset + 8 <= data.count, data.fourCC(at: offset) == name else { return nil }
            let size = Int(data.u32(at: offset + 4))
            guard size % recordSize == 0, size >= recordSize, offset + 8 + size <= data.count else { return nil }
            chunks.append(Array(data[(offset + 8)..<(offset + 8 + size)]))
            offset += 8 + size
        }
    }

    private func count(_ chunk: Int) -> Int { chunks[chunk].count / Self.layout[chunk].recordSize }
    private func u16(_ chunk: Int, _ record: Int, _ field: Int) -> Int {
        Int(chunks[chunk].u16(at: record * Self.layout[chunk].recordSize + field))
    }

    /// A zone's generators: (operator, low byte, high byte).
    private func generators(bags: Int, gens: Int, zone: Int) -> [(op: Int, low: Int, high: Int)]? {
        let first = u16(bags, zone, 0)
        let end = u16(bags, zone + 1, 0)
        guard first <= end, end <= count(gens) else { return nil }
        return (first..<end).map { index in
            let at = index * 4
            return (Int(chunks[gens].u16(at: at)), Int(chunks[gens][at + 2]), Int(chunks[gens][at + 3]))
        }
    }

    /// A local zone's ranges as FluidSynth reads them for sure (key range first, velocity range
    /// first or second), its terminal generator's amount when it is the last one, else nil.
    private struct Zone {
        var keys = 0...127
        var velocities = 0...127
        var link: Int?
    }

    private func zone(_ generators: [(op: Int, low: Int, high: Int)], terminal: Int) -> Zone {
        var zone = Zone()
        for (index, generator) in generators.enumerated() {
            if generator.op == 43, index == 0, generator.low <= generator.high {
                zone.keys = generator.low...generator.high
            }
            if generator.op == 44, index == 0 || (index == 1 && generators[0].op == 43),
                generator.low <= generator.high
            {
                zone.velocities = generator.low...generator.high
            }
        }
        if let last = generators.last, last.op == terminal, generators.dropLast().allSatisfy({ $0.op != terminal }) {
            zone.link = last.low | last.high << 8
        }
        return zone
    }

    /// Whether the indices are as FluidSynth reads them (it reads records one after the other,
    /// using only the differences between indices: they must start at 0 and end at the terminal
    /// record) and every zone names an instrument or sample that exists. A font that breaks
    /// these is read whole, so that FluidSynth reports its problems as it would.
    private var isWellFormed: Bool {
        let (phdr, pbag, pmod, pgen, inst, ibag, imod, igen, shdr) = (0, 1, 2, 3, 4, 5, 6, 7, 8)
        let presetZones = count(pbag) - 1
        let instrumentZones = count(ibag) - 1
        guard count(phdr) >= 2, count(inst) >= 1, u16(phdr, 0, 24) == 0, u16(inst, 0, 20) == 0,
            u16(phdr, count(phdr) - 1, 24) == presetZones, u16(inst, count(inst) - 1, 20) == instrumentZones,
            u16(pbag, 0, 0) == 0, u16(pbag, 0, 2) == 0, u16(ibag, 0, 0) == 0, u16(ibag, 0, 2) == 0
        else { return false }
        // Generator and modulator lists: the terminal bag's index is the last record, or one past.
        for (bags, list) in [(pbag, pgen), (pbag, pmod), (ibag, igen), (ibag, imod)] {
            let field = list == pgen || list == igen ? 0 : 2
            let end = u16(bags, count(bags) - 1, field)
            guard end == count(list) - 1 || end == count(list) else { return false }
        }
        for index in 1..<count(phdr) where u16(phdr, index - 1, 24) > u16(phdr, index, 24) { return false }
        for index in 1..<count(inst) where u16(inst, index - 1, 20) > u16(inst, index, 20) { return false }
        // Every zone's generators and modulators in order, and every instrument and sample a zone
        // names exists.
        for (bags, gens, terminal, limit) in [(pbag, pgen, 41, count(inst) - 1), (ibag, igen, 53, count(shdr) - 1)] {
            for zone in 0..<(count(bags) - 1) {
                guard u16(bags, zone, 2) <= u16(bags, zone + 1, 2),
                    let generators = generators(bags: bags, gens: gens, zone: zone)
                else { return false }
                for generator in generators where generator.op == terminal {
                    guard generator.low | generator.high << 8 < limit else { return false }
                }
            }
        }
        return true
    }

    /// The `pdta` list with the instrument zones no note reaches left out; nil when every zone
    /// stays or the font is not well formed (which makes every index below valid).
    func keepingZones(
        for notes: [SoundFontSubset.PresetKey: PlayedNotes]
    ) -> (bytes: [UInt8], total: Int, kept: Int)? {
        let (phdr, pbag, pgen, inst, ibag, imod, igen) = (0, 1, 3, 4, 5, 6, 7)
        guard isWellFormed else { return nil }
        let instruments = count(inst) - 1
        let zones = count(ibag) - 1
        var needed = [Bool](repeating: false, count: zones)
        // Instruments some played preset reaches in a way this cannot follow: kept whole.
        var whole = Set<Int>()
        for preset in 0..<(count(phdr) - 1) {
            let key = SoundFontSubset.PresetKey(bank: u16(phdr, preset, 22), program: u16(phdr, preset, 20))
            guard let played = notes[key], !played.isEmpty else { continue }
            for bag in u16(phdr, preset, 24)..<u16(phdr, preset + 1, 24) {
                guard let gens = generators(bags: pbag, gens: pgen, zone: bag) else { return nil }
                let presetZone = zone(gens, terminal: 41)
                guard let instrument = presetZone.link else {
                    // A global zone, or an instrument set where it should not be: keep what it names.
                    for generator in gens where generator.op == 41 { whole.insert(generator.low | generator.high << 8) }
                    continue
                }
                let first = u16(inst, instrument, 20)
                for bag in first..<u16(inst, instrument + 1, 20) {
                    guard let gens = generators(bags: ibag, gens: igen, zone: bag) else { return nil }
                    let instrumentZone = zone(gens, terminal: 53)
                    if instrumentZone.link == nil {
                        // Only a first zone without a sample is global; a later one would become
                        // first if the zones before it went: that instrument is kept whole.
                        if bag != first { whole.insert(instrument) }
                        continue
                    }
                    let keys = max(presetZone.keys.lowerBound, instrumentZone.keys.lowerBound)
                    let keysEnd = min(presetZone.keys.upperBound, instrumentZone.keys.upperBound)
                    let velocities = max(presetZone.velocities.lowerBound, instrumentZone.velocities.lowerBound)
                    let velocitiesEnd = min(presetZone.velocities.upperBound, instrumentZone.velocities.upperBound)
                    if keys <= keysEnd, velocities <= velocitiesEnd,
                        played.containsAny(keys: keys...keysEnd, velocities: velocities...velocitiesEnd)
                    {
                        needed[bag] = true
                    }
                }
            }
        }
        // Rebuild inst, ibag, imod and igen with the kept zones, in order.
        var newInst = chunks[inst]
        var newBags: [UInt8] = []
        var newMods: [UInt8] = []
        var newGens: [UInt8] = []
        var total = 0
        var kept = 0
        for instrument in 0...instruments {
            newInst.setU16(newBags.count / 4, at: instrument * 22 + 20)
            guard instrument < instruments else { break }
            for bag in u16(inst, instrument, 20)..<u16(inst, instrument + 1, 20) {
                let hasSample =
                    generators(bags: ibag, gens: igen, zone: bag).flatMap { zone($0, terminal: 53).link } != nil
                if hasSample { total += 1 }
                guard !hasSample || needed[bag] || whole.contains(instrument) else { continue }
                if hasSample { kept += 1 }
                let (gens, gensEnd) = (u16(ibag, bag, 0), u16(ibag, bag + 1, 0))
                let (mods, modsEnd) = (u16(ibag, bag, 2), u16(ibag, bag + 1, 2))
                newBags.appendU16(newGens.count / 4)
                newBags.appendU16(newMods.count / 10)
                newGens += chunks[igen][(gens * 4)..<(gensEnd * 4)]
                newMods += chunks[imod][(mods * 10)..<(modsEnd * 10)]
            }
        }
        guard kept < total else { return nil }
        // The terminal records.
        newBags.appendU16(newGens.count / 4)
        newBags.appendU16(newMods.count / 10)
        newGens += chunks[igen].suffix(4)
        newMods += chunks[imod].suffix(10)
        var rewritten = chunks
        rewritten[inst] = newInst
        rewritten[ibag] = newBags
        rewritten[imod] = newMods
        rewritten[igen] = newGens
        var body = Array("pdta".utf8)
        for (index, chunk) in rewritten.enumerated() {
            body += Array(Self.layout[index].name.utf8)
            body.appendU32(chunk.count)
            body += chunk
        }
        var bytes = Array("LIST".utf8)
        bytes.appendU32(body.count)
        return (bytes + body, total, kept)
    }
}

extension [UInt8] {
    fileprivate func u16(at offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }
    fileprivate func u32(at offset: Int) -> UInt32 {
        UInt32(u16(at: offset)) | UInt32(u16(at: offset + 2)) << 16
    }
    fileprivate func fourCC(at offset: Int) -> String {
        String(decoding: self[offset..<(offset + 4)], as: UTF8.self)
    }
    fileprivate mutating func setU16(_ value: Int, at offset: Int) {
        self[offset] = UInt8(truncatingIfNeeded: value)
        self[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }
    fileprivate mutating func appendU16(_ value: Int) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }
    fileprivate mutating func appendU32(_ value: Int) {
        appendU16(value & 0xFFFF)
        appendU16(value >> 16)
    }
}
