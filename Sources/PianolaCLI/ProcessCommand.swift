import ArgumentParser
import Pianola

struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Apply an effect chain to an audio file (WAV, FLAC, Ogg, Opus, MP3, AIFF).",
        discussion: """
            The output format follows the extension of -o (.wav, .flac, .ogg, .opus, .mp3, .aiff, \
            .raw); the sample format is the input's unless --format says otherwise (.opus and .mp3 \
            take none: --quality or --bitrate set their size). An input at a rate Opus or MP3 \
            cannot hold is converted to the next rate up (44.1 kHz into Opus at 48 kHz). The \
            output is written under a temporary name and renamed when complete.

            Examples:
              pianola process take.wav -o bright.wav \\
                  --fx eq:type=highShelf,freq=8000,gain=4
              pianola process mix.flac -o mix-eq.flac --fx-chain master.json --format s24
              pianola process vox.wav -o fast.wav --fx varispeed:rate=1.5
              pianola process take.mp3 -o take.opus --bitrate 96

            A varispeed plays what comes before it faster or slower, the pitch following: the \
            output is 1/rate as long.

            An existing output is replaced only with --force; the input never is.
            """)

    @Argument(help: ArgumentHelp("The audio file to process.", valueName: "input"))
    var input: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file.", valueName: "path"))
    var output: String

    @OptionGroup var effectOptions: EffectOptions

    @Option(
        help: ArgumentHelp("Sample format: s16, s24 or f32 (default: the input's).", valueName: "format"),
        completion: AudioFile.Encoding.completion, transform: AudioFile.Encoding.parser(for: "--format"))
    var format: AudioFile.Encoding?

    @OptionGroup var dither: DitherOption

    @OptionGroup var compression: CompressionOptions

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Replace the output file if it exists (never the input).")
    var force = false

    func validate() throws {
        try compression.check(output: output, sampleRate: nil, format: format)
    }

    func run() throws {
        Terminal.trapInterrupts()
        if let problem = BatchError.writing(output, over: [input], replacing: force) {
            throw CLIError(Hints.job(problem.description))
        }
        let specs = try effectOptions.specs()
        var progress: ProgressReporter?
        defer { progress?.finish() }
        var processor = AudioFileProcessor(effects: specs)
        processor.dither = dither.isOn
        processor.compression = compression.compression
        let result = try processor.process(input, to: output, encoding: format) {
            done, total in
            if !quiet {
                if progress == nil { progress = ProgressReporter(label: "process", total: total) }
                progress?.update(done: done)
            }
            return Terminal.interruptSignal == nil
        }
        if !quiet {
            Terminal.writeError(
                "\(output): \(Terminal.clock(result.inputSeconds)), \(specs.count) effects, \(result.encoding.rawValue)\n"
            )
        }
    }
}
