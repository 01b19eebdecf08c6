import ArgumentParser
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record an audio input (a microphone, a line input) to a WAV, FLAC, AIFF, Ogg, Opus or MP3 file.",
        discussion: """
            Records from an ALSA capture device (`pianola devices` lists them) until --duration, `q`, \
            Ctrl-C (exit 130) or SIGTERM (exit 0); the file is completed in every case. The file is \
            valid while it grows: its header is brought up to date twice a second, so even a crash \
            or a power cut loses at most the last second of a WAV or AIFF file (an Opus or MP3 file \
            holds what was encoded, without the length MP3's header gives it at the end; --quality \
            or --bitrate set their size). An existing file is \
            never replaced without --force. A full disk ends the recording with one line and a \
            valid file of everything up to then.

            On a terminal: a meter per channel (RMS bar, peak, held peak, and a clip light that stays \
            on until `c`), elapsed time, file size, overruns; space pauses and resumes (the file \
            continues without the paused part). Without a terminal: a line every 10 seconds; with \
            --interactive the keys come from standard input all the same (a script can pause).

            Examples:
              pianola record -o take.wav          # default device, 48 kHz stereo, s16
              pianola record -o take.flac -d hw:1 --channels 1 --format s24 --duration 60
              pianola record -o voice.wav --fx filter:type=highPass,freq=80 --monitor
              pianola record -o set.wav --split 600   # set-001.wav, set-002.wav, …
              pianola record -o take.wav --meter-log levels.jsonl  # levels as JSON lines
            """)

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("The file to write (.wav, .flac, .aiff, .ogg, .opus, .mp3).", valueName: "file"))
    var output: String

    @Option(name: .shortAndLong, help: ArgumentHelp("ALSA capture device (see `pianola devices`).", valueName: "name"))
    var device = "default"

    @Option(
        name: [.customShort("r"), .long], parsing: .unconditional,
        help: ArgumentHelp("Sample rate in Hz, 8000…192000.", valueName: "hz"))
    var rate = 48_000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The file's sample rate, if not the device's (converted as it is written; for .opus and .mp3, the next rate they hold up from the device's).",
            valueName: "hz")
    )
    var fileRate: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Channels to record, 1…8.", valueName: "count"))
    var channels = 2

    @OptionGroup var sampleFormat: SampleFormatOptions

    @OptionGroup var compression: CompressionOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Frames per period, 32…8192.", valueName: "frames"))
    var period = 1_024

    @Option(parsing: .unconditional, help: ArgumentHelp("Periods in the device buffer, 2…16.", valueName: "count"))
    var periods = 3

    @OptionGroup var effectOptions: EffectOptions

    @Flag(help: "Hear the input (after the effects) on the output device, at the latency shown.")
    var monitor = false

    @Option(help: ArgumentHelp("The output device for --monitor.", valueName: "name"))
    var monitorDevice = "default"

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Start a new numbered file every this many seconds (take-001.wav, take-002.wav, …), without a gap.",
            valueName: "seconds"))
    var split: Double?

    @Flag(help: "Replace the output file if it exists.")
    var force = false

    @Flag(
        name: .shortAndLong,
        help: "Take keys (space, c, q) from standard input even when it is not a terminal, as `arecord -i`.")
    var interactive = false

    @Option(
        help: ArgumentHelp(
            "Write each meter window read (20 a second) as a JSON line to this file (- for standard output); a write that fails stops the log, said at once and in the summary (exit status 1).",
            valueName: "file"))
    var meterLog: String?

    @Flag(help: "At the end, print a JSON summary on standard output (files, seconds, frames, overruns, peaks).")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard (32...8_192).contains(period) else {
            throw ValidationError("--period must be between 32 and 8192 frames, got \(period)")
        }
        guard (2...16).contains(periods) else {
            throw ValidationError("--periods must be between 2 and 16, got \(periods)")
        }
        guard BatchJob.sampleRates.contains(Double(rate)) else {
            throw ValidationError("--rate must be between 8000 and 192000 Hz, got \(rate)")
        }
        if let fileRate, !BatchJob.sampleRates.contains(Double(fileRate)) {
            throw ValidationError("--file-rate must be between 8000 and 192000 Hz, got \(fileRate)")
        }
        guard (1...8).contains(channels) else {
            throw ValidationError("--channels must be between 1 and 8, got \(channels)")
        }
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds")
        }
        if let split, !(split >= 1 && split.isFinite) { throw ValidationError("--split must be at least 1 second") }
        try compression.check(
            output: output, sampleRate: Double(fileRate ?? rate), channelCount: channels,
            format: sampleFormat.format == .s16 ? nil : sampleFormat.format)
    }

    /// The file's rate: --file-rate, else the device's, or the next rate up an Opus or MP3 file holds.
    private var writtenRate: Double {
        if let fileRate { return Double(fileRate) }
        return (try? AudioFile.FileType(path: output))?.fileSampleRate(for: Double(rate)) ?? Double(rate)
    }

    func run() throws {
        Terminal.trapInterrupts()
        var configuration = AudioRecorder.Configuration(
            input: AudioInputNode.Configuration(
                device: device, sampleRate: Double(rate), channelCount: channels, periodFrames: period,
                periodCount: periods))
        configuration.file.encoding = sampleFormat.format
        configuration.file.dither = sampleFormat.dither.isOn
        configuration.file.compression = compression.compression
        configuration.file.overwrite = force
        configuration.file.fileSampleRate = fileRate.map(Double.init)
        configuration.file.splitFrames = split.map { Int(($0 * writtenRate).rounded()) }
        configuration.effects = try effectOptions.specs()
        if monitor {
            configuration.monitor = ALSAOutput.Configuration(
                device: monitorDevice, sampleRate: Double(rate), periodFrames: period, periodCount: max(2, periods))
        }
        let log = try meterLog.map { path throws(CLIError) in try MeterLog(path: path, overwrite: force) }
        let recorder: AudioRecorder
        do { recorder = try AudioRecorder(path: output, configuration: configuration) } catch {
            log?.delete()
            if case .device = error { throw CLIError("\(error); \(Hints.devices)") }
            throw error
        }
        if !quiet { describe(recorder) }
        if let duration { try recorder.record(forDuration: duration) } else { try recorder.record() }
        // "Recording to" once the audio flows: the devices' first periods (code run for the first
        // time, pages touched) can overrun the capture, which should not fall on what a player
        // starts at that line.
        waitForSteadyAudio(recorder)
        if !quiet { Terminal.writeError(recordingLine(recorder)) }
        let display = RecordDisplay(recorder: recorder, quiet: quiet, interactive: interactive, meterLog: log)
        let stopped = display.follow(until: duration != nil)
        // Measured while both devices still run.
        let measuredLatency = recorder.measuredMonitorLatency
        var failure: SessionError?
        do { try recorder.stop() } catch { failure = error }
        failure = failure ?? recorder.failure
        log?.finish()
        display.summarize(failure: failure, measuredLatency: measuredLatency)
        if json {
            Terminal.writeOutput(
                RecordDisplay.summary(recorder, measuredLatency: measuredLatency, meterLog: log).serialized() + "\n")
        }
        if let failure { throw failure }
        if stopped == .interrupted, Terminal.interruptSignal == SIGINT { throw Terminal.interruptExitCode }
        // The recording is whole; the log asked for is not: said above, and in the exit status.
        if log?.failure != nil { throw ExitCode(1) }
    }

    private func describe(_ recorder: AudioRecorder) {
        let input = recorder.input
        let settings = input.configuration
        Terminal.writeError(
            "Input: \(settings.device), \(input.sampleFormat.rawValue), \(settings.channelCount) ch at "
                + "\(Int(settings.sampleRate)) Hz, \(settings.periodFrames) × \(settings.periodCount) frames\n")
        if let latency = recorder.monitorLatency, let output = recorder.monitorOutput {
            Terminal.writeError(
                "Monitor: \(output.device), latency up to \(String(format1: latency * 1000)) ms (input period + output buffer)\n"
            )
        }
    }

    private func recordingLine(_ recorder: AudioRecorder) -> String {
        let parts = split.map { " (a new file every \(String(format1: $0)) s)" } ?? ""
        let converted = fileRate.map { $0 == rate ? "" : " at \($0) Hz" } ?? ""
        return "Recording to \(recorder.files.first ?? output)\(parts), \(sampleFormat.format.rawValue)\(converted)\n"
    }

    /// Waits (at most 2 s) until the capture has gone round its buffer twice: every period's work
    /// has run (and any overrun of the first periods has happened), or the recording failed or ended.
    private func waitForSteadyAudio(_ recorder: AudioRecorder) {
        let settings = recorder.input.configuration
        let steady = 2 * Double(settings.periodFrames * settings.periodCount) / settings.sampleRate
        for _ in 0..<200 where recorder.currentTime < steady && recorder.failure == nil && recorder.isRecording {
            usleep(10_000)
        }
    }
}
