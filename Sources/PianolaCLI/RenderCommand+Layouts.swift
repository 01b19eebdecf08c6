import ArgumentParser
import FoundationEssentials
import Pianola
import PianolaSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Renders that write several files from one song: channel routing (`--channel-map`) and stems.
extension RenderCommand {
    func renderRouted(_ routing: ChannelRouting, fonts: [String], options: RenderOptions) throws {
        let input = inputs[0]
        // A folder (or none): the render goes into it, named after the MIDI file, as `render` does.
        var target = output ?? Self.besideSong(input, fileExtension: ext)
        if target.hasSuffix("/") || Self.isFolder(target) {
            target = (target.hasSuffix("/") ? target : target + "/") + BatchPlan.baseName(of: input) + "." + ext
        }
        if let problem = BatchError.writing(target, over: [input] + fonts, replacing: force) {
            throw CLIError(Hints.job(problem.description))
        }
        let sequence: MusicSequence
        do { sequence = try MusicSequence(path: input, isCancelled: Terminal.isInterrupted) } catch {
            throw Terminal.readFailure(input, error)
        }
        let renderer = try OfflineRenderer(soundFonts: fonts, options: options)
        var progress: ProgressReporter?
        let started = Terminal.monotonicSeconds()
        let summary: RenderSummary
        do {
            defer { progress?.finish() }
            summary = try renderer.render(sequence, routing: routing, to: target) { done, music in
                if !quiet {
                    if progress == nil { progress = ProgressReporter(label: fileName(input), total: music) }
                    progress?.update(done: done)
                }
                return Terminal.interruptSignal == nil
            }
        } catch .cancelled {
            printError("pianola: interrupted; \(target) was not written")
            throw Terminal.interruptExitCode
        } catch {
            throw CLIError("\(input): \(error.description)")
        }
        BatchReporter.warnIfSilent(summary)
        BatchReporter.warnIfClipped(summary)
        let parts = routing.partOutputs.map { "\($0[0] + 1)-\($0[1] + 1)" }
        if json {
            print(
                JSONValue.object(
                    [
                        "input": .string(input), "output": .string(target), "status": .string("rendered"),
                        "seconds": .number((summary.seconds * 1000).rounded() / 1000),
                        "channels": .number(Double(routing.channelCount)),
                        "parts": .array(parts.map(JSONValue.string)), "peak": .number(Double(summary.peak)),
                    ].merging(SoundFontOptions.json(fonts)) { $1 }
                ).serialized())
        } else if !quiet {
            let speed = Int(summary.seconds / max(Terminal.monotonicSeconds() - started, 1e-6))
            print(
                "\(target): \(counted(routing.channelCount, "channel")) (parts on \(parts.joined(separator: ", "))), "
                    + "\(Terminal.clock(summary.seconds)), \(speed)× real time")
        }
    }

    /// Stems of one file into the -o folder, with stems.json.
    func renderStems(mode: StemMode, fonts: [String], options: RenderOptions) throws {
        let folder = output ?? "."
        do throws(POSIXReason) { try POSIXSupport.makeDirectories(folder) } catch {
            throw CLIError("cannot create output folder \(folder): \(error)")
        }
        let input = inputs[0]
        for name in ["stems.json", "mix." + ext.lowercased()] + (multichannel.map { [$0] } ?? []) {
            let path = name.hasPrefix("/") || name == multichannel ? name : folder + "/" + name
            if let problem = BatchError.writing(path, over: [input] + fonts, replacing: force) {
                throw CLIError(Hints.job(problem.description))
            }
        }
        let file: MIDIFile
        do { file = try MIDIFile.read(path: input, isCancelled: Terminal.isInterrupted).file } catch {
            throw Terminal.readFailure(input, error)
        }
        let renderer = try OfflineRenderer(soundFonts: fonts, options: options)
        var progress: ProgressReporter?
        let started = Terminal.monotonicSeconds()
        let result: (mix: RenderSummary, stems: [StemInfo])
        do {
            defer { progress?.finish() }
            result = try renderer.renderStems(
                file, toFolder: folder, mode: mode, fileExtension: ext, multichannel: multichannel
            ) { done, music in
                if !quiet {
                    if progress == nil { progress = ProgressReporter(label: fileName(input), total: music) }
                    progress?.update(done: done)
                }
                return Terminal.interruptSignal == nil
            }
        } catch .cancelled {
            printError("pianola: interrupted; no stem was written")
            throw Terminal.interruptExitCode
        } catch {
            throw CLIError("\(input): \(error.description)")
        }
        try StemsDocument(
            input: input, mode: mode, sampleRate: options.sampleRate, frames: result.mix.frames, stems: result.stems,
            multichannel: multichannel
        ).write(toFolder: folder)
        BatchReporter.warnIfSilent(result.mix)
        BatchReporter.warnIfClipped(result.mix)
        for warning in result.mix.warnings { printError("warning: \(warning)") }
        if json {
            // (To 0.01, or null when silent, as stems.json has them.)
            func decibels(_ value: Double) -> JSONValue {
                value.isFinite ? .number((value * 100).rounded() / 100) : .null
            }
            for stem in result.stems {
                print(
                    JSONValue.object(
                        [
                            "input": .string(input), "output": .string(folder + "/" + stem.file),
                            "status": .string("rendered"), "kind": .string(stem.kind), "name": .string(stem.name),
                            "notes": .number(Double(stem.notes)), "peakDecibels": decibels(stem.peak),
                            "loudness": decibels(stem.loudness), "truePeak": decibels(stem.truePeak),
                        ].merging(SoundFontOptions.json(fonts)) { $1 }
                    ).serialized())
            }
            return
        }
        guard !quiet else { return }
        let speed = Int(result.mix.seconds / max(Terminal.monotonicSeconds() - started, 1e-6))
        print(
            "\(folder): \(counted(result.stems.count - 1, "stem")) by \(mode.rawValue) + mix, "
                + "\(Terminal.clock(result.mix.seconds)), \(speed)× real time")
        for stem in result.stems {
            print(
                "  \(stem.file): \(stem.name), \(counted(stem.notes, "note")), peak \(String(format1: stem.peak)) dBFS, "
                    + "\(String(format1: stem.loudness)) LUFS")
        }
    }

    static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
