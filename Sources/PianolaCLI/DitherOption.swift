import ArgumentParser

/// `--dither`, where a command writes 16- or 24-bit files (`render`, `process`, `record`).
struct DitherOption: ParsableArguments {
    @Flag(
        name: .customLong("dither"),
        help: "Add TPDF dither before rounding to s16 or s24 (without it, each sample is rounded to the nearest step).")
    var isOn = false
}
