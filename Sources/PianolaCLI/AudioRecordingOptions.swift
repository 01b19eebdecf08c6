import ArgumentParser
import Pianola

/// `--record-audio`, shared by play and live: the mixed output written to a file as it plays.
struct AudioRecordingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Also write what is played (the mixed output) to this audio file (.wav, .flac, .aiff, .ogg, .opus, .mp3).",
            valueName: "file"))
    var recordAudio: String?

    @Option(
        help: ArgumentHelp("Sample format of --record-audio: s16, s24 or f32.", valueName: "format"),
        completion: AudioFile.Encoding.completion, transform: AudioFile.Encoding.parser(for: "--record-format"))
    var recordFormat: AudioFile.Encoding = .s16

    @Flag(help: "Replace the --record-audio file if it exists.")
    var force = false

    /// The recording the options ask for, if any.
    var recording: OutputRecording? {
        guard let recordAudio else { return nil }
        var settings = AudioFileTap.Settings()
        settings.encoding = recordFormat
        settings.overwrite = force
        return OutputRecording(path: recordAudio, settings: settings)
    }

    /// The closing line for a finished recording (and its failure, if writing stopped early).
    static func report(_ tap: AudioFileTap?, quiet: Bool) -> String? {
        guard let tap else { return nil }
        if !quiet {
            let seconds = Double(tap.writtenFrameCount) / tap.fileSampleRate
            Terminal.writeError(
                "Recorded audio: \(Terminal.clock(seconds)) to \(tap.files.first ?? tap.path)"
                    + (tap.droppedFrameCount > 0 ? ", \(tap.droppedFrameCount) frames lost (disk too slow)" : "") + "\n"
            )
        }
        return tap.failure?.description
    }
}
