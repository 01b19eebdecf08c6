import ArgumentParser
import Foundation
import Pianola

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play MIDI files through a SoundFont on an ALSA device, with a live transport.",
        discussion: """
            On a terminal: one status line (position, bar:beat, tempo, voices, level, underruns, \
            lyrics) and keys: space pause/resume, ←/→ seek 5 s, ↑/↓ speed, n/p next/previous file, \
            l loop on/off, q quit. Otherwise: a progress line every 10 %. Ctrl-C stops cleanly \
            (notes released, device drained).

            The I/O buffer is --period × --periods frames: bigger is safer against crackles, \
            smaller answers sooner.

            Examples:
              pianola play song.mid
              pianola play *.mid --device hw:1,0 --period 512 --periods 3
              pianola play song.kar --speed 0.8 --transpose -2 --loop
            """)

    @Argument(help: ArgumentHelp("MIDI files to play, in order.", valueName: "midi-file"))
    var files: [String]

    @OptionGroup var deviceOptions: DeviceOptions

    @Option(help: ArgumentHelp("Tempo factor (0.25…4).", valueName: "factor"))
    var speed = 1.0

    @Option(help: ArgumentHelp("Start at this time (seconds, or m:ss).", valueName: "time"))
    var start: String?

    @Option(help: ArgumentHelp("Semitones to transpose (drums excluded).", valueName: "n"))
    var transpose = 0

    @Flag(help: "Loop each file.")
    var loop = false

    @OptionGroup var effectOptions: EffectOptions

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard (0.25...4).contains(speed) else {
            throw ValidationError("--speed must be between 0.25 and 4, got \(speed)")
        }
        guard (-48...48).contains(transpose) else { throw ValidationError("--transpose must be between -48 and 48") }
        if let start, Self.parseTime(start) == nil {
            throw ValidationError("--start must be seconds or m:ss, got '\(start)'")
        }
    }

    static func parseTime(_ text: String) -> Double? {
        let parts = text.split(separator: ":")
        if parts.count == 2, let minutes = Double(parts[0]), let seconds = Double(parts[1]) {
            return minutes * 60 + seconds
        }
        return parts.count == 1 ? Double(text).flatMap { $0 >= 0 ? $0 : nil } : nil
    }

    func run() throws {
        Terminal.trapInterrupts()
        let (sampler, font) = try deviceOptions.loadSampler()
        let engine = AudioEngine()
        engine.attach(sampler)
        try effectOptions.connect(sampler, in: engine)
        let meter = LevelMeter()
        try engine.installTap(on: engine.mainMixerNode, meter)
        let output = try deviceOptions.connectOutput(engine, defaultPeriod: 256)
        if !quiet {
            Terminal.writeError("SoundFont: \(font.path) (\(font.source.explanation))\n")
            Terminal.writeError(
                "Device: \(deviceOptions.device), \(output.sampleFormat.rawValue), \(output.periodFrames) × \(output.periodCount) frames (\(String(format1: output.bufferLatency * 1000)) ms)\n"
            )
        }
        let keys = Terminal.isInteractive && isatty(0) == 1 ? KeyReader() : nil
        defer { keys?.restore() }
        var session = PlaySession(
            engine: engine, sampler: sampler, output: output, meter: meter, keys: keys, quiet: quiet,
            rate: Double(deviceOptions.rate),
            speed: speed, transpose: transpose, loop: loop)
        var index = 0
        var failures = 0
        var startAt = start.flatMap(Self.parseTime)
        while index < files.count {
            let sequence: MusicSequence
            do { sequence = try MusicSequence(path: files[index]) } catch {
                printError("pianola: \(files[index]): \(error.description)")
                failures += 1
                index += 1
                continue
            }
            let action = try session.play(sequence, name: files[index], startAt: startAt)
            startAt = nil
            switch action {
            case .next: index += 1
            case .previous: index = max(0, index - 1)
            case .quit: index = files.count
            case .interrupted:
                session.finish()
                throw ExitCode(130)
            case .failed(let message):
                session.finish()
                throw CLIError(message)
            }
        }
        session.finish()
        if failures > 0 { throw ExitCode(1) }
    }
}

/// One playback session: the shared graph and device, file after file.
struct PlaySession {
    enum Action { case next, previous, quit, interrupted, failed(String) }

    let engine: AudioEngine
    let sampler: SamplerNode
    let output: ALSAOutput
    let meter: LevelMeter
    let keys: KeyReader?
    let quiet: Bool
    let rate: Double
    var speed: Double
    let transpose: Int
    var loop: Bool

    mutating func play(_ sequence: MusicSequence, name: String, startAt: Double?) throws -> Action {
        let player = MusicPlayer(sequence: sequence, destination: sampler, sampleRate: rate)
        try engine.addRenderObserver(player)
        defer {
            player.pause()
            try? engine.removeRenderObserver(player)
        }
        player.rate = speed
        player.transpose = transpose
        if loop { player.setLoop(0..<sequence.durationSeconds, count: -1) }
        if let startAt { player.seek(toSeconds: startAt) }
        player.play()
        if !output.isRunning {
            try output.start()
            if !output.isRealTimeScheduled && !quiet {
                Terminal.writeError(
                    "note: real-time scheduling (SCHED_FIFO) is not permitted here; the audio thread runs at normal priority\n"
                )
            }
        }
        let duration = sequence.durationSeconds
        var lastDecile = -1
        let shortName = name.split(separator: "/").last.map(String.init) ?? name
        while true {
            if Terminal.interruptSignal != nil { return .interrupted }
            if let failure = output.failure { return .failed(failure.description) }
            if player.isFinished { break }
            if let key = keys?.read() {
                switch key {
                case .space: if player.isPlaying { player.pause() } else { player.play() }
                case .left: player.seek(toSeconds: max(0, player.currentPositionInSeconds - 5))
                case .right: player.seek(toSeconds: min(duration, player.currentPositionInSeconds + 5))
                case .up:
                    speed = min(4, speed * 1.1)
                    player.rate = speed
                case .down:
                    speed = max(0.25, speed / 1.1)
                    player.rate = speed
                case .next: return .next
                case .previous: return .previous
                case .loop:
                    loop.toggle()
                    player.setLoop(loop ? 0..<duration : nil, count: -1)
                case .quit: return .quit
                }
            }
            if !quiet {
                let position = player.currentPositionInSeconds
                if keys != nil {
                    Terminal.writeError(
                        "\r" + statusLine(player: player, sequence: sequence, name: shortName, position: position)
                            + "\u{1B}[K")
                } else {
                    let decile = Int(position / max(duration, 0.001) * 10)
                    if decile > lastDecile {
                        lastDecile = decile
                        Terminal.writeError(
                            "\(shortName): \(Terminal.clock(position)) of \(Terminal.clock(duration)), \(output.xrunCount) underruns\n"
                        )
                    }
                }
            }
            usleep(50_000)
        }
        if !quiet {
            if keys != nil {
                Terminal.writeError("\r\u{1B}[K")
            } else {
                Terminal.writeError("\(shortName): finished, \(output.xrunCount) underruns\n")
            }
        }
        return .next
    }

    func statusLine(player: MusicPlayer, sequence: MusicSequence, name: String, position: Double) -> String {
        let map = sequence.tempoMap
        let tick = Int(map.tick(forSeconds: position))
        let (bar, beat, _) = map.barBeat(forTick: tick)
        let bpm = 60_000_000 / Double(map.microsecondsPerQuarterNote(atTick: tick)) * player.rate
        let peak = meter.takePeaks().max() ?? 0
        let level = peak > 0 ? String(format1: 20 * log10(Double(peak))) : "-inf"
        // The current line of lyrics: syllables since the last line break, up to now.
        let sung = sequence.lyrics.prefix { $0.tick <= tick }
        let lineStart =
            sung.lastIndex { $0.text.hasPrefix(" ") || $0.text.hasSuffix("\n") || $0.text.hasSuffix("\r") }
            ?? sung.startIndex
        let lyric = sung[lineStart...].map(\.text).joined().trimmingCharacters(in: .whitespacesAndNewlines)
        let state = player.isPlaying ? "▶" : "⏸"
        return
            "\(state) \(name) \(Terminal.clock(position))/\(Terminal.clock(sequence.durationSeconds))  \(bar):\(beat)  \(Int(bpm.rounded())) BPM  \(sampler.activeVoiceCount) voices  \(level) dB  \(output.xrunCount) xruns  \(lyric)"
    }

    func finish() {
        sampler.allNotesOff()
        usleep(UInt32(output.bufferLatency * 2_000_000))
        output.stop()
    }
}

/// Raw, non-blocking keyboard input on a terminal (restored on exit).
final class KeyReader {
    enum Key { case space, left, right, up, down, next, previous, loop, quit }
    private var original = termios()

    init() {
        tcgetattr(0, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 0
            bytes[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSANOW, &raw)
    }

    func restore() { tcsetattr(0, TCSANOW, &original) }

    func read() -> Key? {
        var bytes = [UInt8](repeating: 0, count: 8)
        let count = Glibc.read(0, &bytes, 8)
        guard count > 0 else { return nil }
        if bytes[0] == 0x1B && count >= 3 && bytes[1] == 0x5B {
            switch bytes[2] {
            case 0x41: return .up
            case 0x42: return .down
            case 0x43: return .right
            case 0x44: return .left
            default: return nil
            }
        }
        switch bytes[0] {
        case 0x20: return .space
        case UInt8(ascii: "n"): return .next
        case UInt8(ascii: "p"): return .previous
        case UInt8(ascii: "l"): return .loop
        case UInt8(ascii: "q"): return .quit
        default: return nil
        }
    }
}
