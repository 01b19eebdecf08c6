// libFuzzer entry point for the native SoundFont reader (SoundFontFiles): the bank read with
// SoundFontBank(contentsOf:), then every sample read (SoundFont 2's points, SoundFont 3's Ogg
// Vorbis streams decoded by libvorbisfile), every preset's zones walked down to their samples,
// and the bank's silent presets. Built and run by scripts/fuzz with the module's files compiled
// in (not part of the package build); libvorbisfile is not instrumented, but a crash in it is
// still one.
//
// Invariants checked on every input:
// - a bad font never crashes, hangs or allocates without bound: it is a typed error;
// - every error's message is one line, printable, at most 400 characters, and names the file;
// - every zone names an instrument or sample that exists, with ranges inside 0...127;
// - a sample that reads has its loop inside its points and at least its own points;
// - a preset is silent exactly when none of its zones reaches a sample that reads and has points.

#if canImport(Glibc)
    import Glibc
#endif

/// The input as a file (the reader reads from a path): in memory where /dev/shm exists.
private let fontPath: String = {
    let folder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(folder)/pianola-soundfont-bank-fuzz-\(getpid()).sf2"
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let file = fopen(fontPath, "wb") else { return 0 }
    // (Removed after each input: a run ends by exiting, and would leave the last one behind.)
    defer { unlink(fontPath) }
    fwrite(data, 1, size, file)
    fclose(file)
    let bank: SoundFontBank
    do throws(SoundFontReadError) {
        bank = try SoundFontBank(contentsOf: fontPath)
    } catch {
        check(error)
        return 0
    }
    precondition(bank.majorVersion == 2 || bank.majorVersion == 3, "version \(bank.majorVersion)")
    precondition(!bank.presets.isEmpty, "a bank that reads has a preset")
    for preset in bank.presets {
        for zone in preset.zones + [preset.globalZone].compactMap({ $0 }) {
            checkRanges(zone)
            if let target = zone.target { precondition(target >= 0 && target < bank.instruments.count) }
        }
    }
    for instrument in bank.instruments {
        for zone in instrument.zones + [instrument.globalZone].compactMap({ $0 }) {
            checkRanges(zone)
            if let target = zone.target { precondition(target >= 0 && target < bank.samples.count) }
        }
    }
    // Every sample read once (a SoundFont 3 sample's decoding is most of an input's time): whether
    // it plays, and why not, which is what SoundFontBank.sampleProblem says.
    var plays: [Bool] = []
    var problems: [String?] = []
    for index in bank.samples.indices {
        do throws(SoundFontReadError) {
            let sample = try bank.readSample(index)
            precondition(sample.count >= 0 && sample.points.count >= sample.count, "points \(sample.count)")
            precondition(
                0 <= sample.loopStart && sample.loopStart <= sample.loopEnd && sample.loopEnd <= sample.points.count,
                "loop \(sample.loopStart)..<\(sample.loopEnd) of \(sample.points.count) points")
            plays.append(sample.count > 0)
            problems.append(sample.count > 0 ? nil : "no points")
        } catch {
            check(error)
            plays.append(false)
            problems.append(error.problem)
        }
        if !(bank.majorVersion == 3 && bank.samples[index].isCompressed) {
            let problem = bank.sampleProblem(index)
            precondition((problem == nil) == plays[index], "sample \(index): \(problem ?? "plays")")
            precondition(problem.map { !$0.contains("\n") } ?? true, "a problem in one line")
        }
    }
    let silent = bank.silentPresets(sampleProblems: problems)
    if bank.majorVersion == 2 {
        precondition(bank.silentPresets().map(\.index) == silent.map(\.index), "the same presets by itself")
    }
    precondition(Set(silent.map(\.index)).count == silent.count, "each silent preset once")
    for (index, preset) in bank.presets.enumerated() {
        let sounds = preset.zones.contains { zone in
            bank.instruments[zone.target!].zones.contains { plays[$0.target!] }
        }
        precondition(sounds != silent.contains { $0.index == index }, "preset \(index) silent: \(!sounds)")
    }
    for entry in silent {
        precondition(!entry.reason.isEmpty && !entry.reason.contains("\n"), "a reason in one line")
    }
    return 0
}

/// A refusal's message: one printable line, short, naming the file.
private func check(_ error: SoundFontReadError) {
    let message = error.description
    precondition(!message.contains("\n"), "one line: \(message)")
    precondition(message.unicodeScalars.allSatisfy { $0.value >= 32 && $0.value != 127 }, "printable: \(message)")
    precondition(message.count <= 400, "short: \(message.count) characters")
    precondition(message.hasPrefix(fontPath + ": "), "names the file: \(message)")
}

private func checkRanges(_ zone: Zone) {
    precondition(zone.keyRange.lowerBound >= 0 && zone.keyRange.upperBound <= 127, "keys \(zone.keyRange)")
    precondition(
        zone.velocityRange.lowerBound >= 0 && zone.velocityRange.upperBound <= 127, "velocities \(zone.velocityRange)")
}
