import ArgumentParser
import Pianola

/// `--format` and `--dither`, where a command writes a new file in a format of its own choosing
/// (`render`, `record`; `process` keeps its input's format unless told, and takes `DitherOption`).
struct SampleFormatOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp("Sample format: s16, s24 or f32 (default: s16).", valueName: "format"),
        completion: AudioFile.Encoding.completion, transform: AudioFile.Encoding.parser(for: "--format"))
    var format: AudioFile.Encoding = .s16

    @OptionGroup var dither: DitherOption
}

/// `--dither`, where a command writes 16- or 24-bit files (`render`, `process`, `record`).
struct DitherOption: ParsableArguments {
    @Flag(
        name: .customLong("dither"),
        help: "Add TPDF dither before rounding to s16 or s24 (without it, each sample is rounded to the nearest step).")
    var isOn = false
}
