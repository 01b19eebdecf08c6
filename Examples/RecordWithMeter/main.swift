// Records an audio input through an EQ into a file while printing its meters, with the library's
// building blocks: an `AudioInputNode` (ALSA capture) feeds an `EQNode` (a high-pass at 80 Hz and
// a gentle presence lift); an `AudioFileTap` on the EQ writes the file (a ring buffer and a writer
// thread: the audio thread never waits for the disk) and a `PowerMeter` on it measures the levels.
// Nothing is played: the capture's own clock drives the engine (`driveFromInput`).
//
//   swift run record-with-meter [OUTPUT.wav] [--device ALSA-DEVICE] [--seconds SECONDS] [--channels N]
//
// The output defaults to take.wav (an existing file is not replaced), the device to "default", the
// seconds to 5 and the channels to 2. Every quarter of a second it prints each channel's RMS and
// peak level in dBFS.
import Foundation
import Pianola

var output = "take.wav"
var device = "default"
var seconds = 5.0
var channels = 2
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--device": device = arguments.popFirst() ?? device
    case "--seconds": seconds = arguments.popFirst().flatMap(Double.init) ?? seconds
    case "--channels": channels = arguments.popFirst().flatMap(Int.init) ?? channels
    case "-h", "--help":
        print("usage: record-with-meter [OUTPUT.wav] [--device ALSA-DEVICE] [--seconds SECONDS] [--channels N]")
        exit(0)
    default: output = argument
    }
}

do {
    let engine = AudioEngine()
    let input = try AudioInputNode(
        configuration: .init(device: device, sampleRate: 48_000, channelCount: channels, periodFrames: 1_024))
    let eq = EQNode(numberOfBands: 2)
    eq.bands[0].filterType = .highPass
    eq.bands[0].frequency = 80
    eq.bands[0].bypass = false
    eq.bands[1].filterType = .parametric
    eq.bands[1].frequency = 3_000
    eq.bands[1].gain = 2
    eq.bands[1].bypass = false
    try engine.attach(input)
    try engine.attach(eq)
    try engine.connect(input, to: eq)

    let rate = input.configuration.sampleRate
    let meter = PowerMeter(channelCount: channels, sampleRate: rate, windowFrames: 4_800)
    var settings = AudioFileTap.Settings()
    settings.frameLimit = Int(seconds * rate)
    let file = try AudioFileTap(path: output, channelCount: channels, sampleRate: rate, settings: settings)
    // A tapped node renders even though nothing connects it to the output.
    try engine.installTap(on: eq, meter)
    try engine.installTap(on: eq, file)

    engine.driveFromInput(input)
    file.record()
    try engine.start()
    print("Recording \(seconds) s from \(device) (\(input.sampleFormat.rawValue), \(channels) ch) to \(output)")
    while !file.isStopped && input.failure == nil {
        Thread.sleep(forTimeInterval: 0.25)
        let reading = meter.reading()
        let levels = (0..<channels).map { channel in
            String(format: "%6.1f rms %6.1f pk", reading.averagePower[channel], reading.peakPower[channel])
        }
        print(String(format: "%5.2f s  ", Double(file.recordedFrameCount) / rate) + levels.joined(separator: "  |  "))
    }
    engine.stop()
    input.close()
    try file.finish()
    if let failure = input.failure { throw failure }
    let peaks = meter.reading().maximumPeakPower.map { String(format: "%.1f", $0) }.joined(separator: ", ")
    print("Wrote \(file.writtenFrameCount) frames to \(output); peaks \(peaks) dBFS; \(input.overrunCount) overruns")
} catch {
    FileHandle.standardError.write(Data("record-with-meter: \(error)\n".utf8))
    exit(1)
}
