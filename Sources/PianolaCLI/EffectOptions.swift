import ArgumentParser
import Foundation
import Pianola

/// `--fx` and `--fx-chain`, shared by render, play, live and process.
struct EffectOptions: ParsableArguments {
    @Option(
        name: .customLong("fx"),
        help: ArgumentHelp(
            "An effect, in order (repeatable): NAME[:key=value,...], e.g. eq:type=highShelf,freq=8000,gain=-6 or filter:type=lowPass,freq=1000,q=0.707; see `pianola fx list`.",
            valueName: "effect"))
    var effects: [String] = []

    @Option(
        name: .customLong("fx-chain"),
        help: ArgumentHelp(
            "Effects from a JSON file: an array of objects like {\"effect\": \"eq\", \"type\": \"highShelf\", \"freq\": 8000}, applied before any --fx.",
            valueName: "file.json"))
    var chainFile: String?

    /// The chain: the file's effects, then the --fx ones; one clear line on the first bad one.
    func specs() throws(CLIError) -> [EffectSpec] {
        var specs: [EffectSpec] = []
        if let chainFile {
            guard let data = FileManager.default.contents(atPath: chainFile) else {
                throw CLIError("\(chainFile): cannot read the effect chain file")
            }
            guard let array = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else {
                throw CLIError("\(chainFile): an effect chain is a JSON array of objects with an \"effect\" name")
            }
            for (index, object) in array.enumerated() {
                guard let name = object["effect"] as? String else {
                    throw CLIError("\(chainFile): effect \(index + 1) has no \"effect\" name")
                }
                let pairs = object.filter { $0.key != "effect" }.sorted { $0.key < $1.key }.map { key, value in
                    (key, value is Bool ? ((value as? Bool) == true ? "on" : "off") : "\(value)")
                }
                do { specs.append(try EffectSpec.make(name: name, pairs)) } catch {
                    throw CLIError("\(chainFile): effect \(index + 1): \(error.description)")
                }
            }
        }
        for text in effects {
            do { specs.append(try EffectSpec.parse(text)) } catch {
                throw CLIError("--fx \(text): \(error.description)")
            }
        }
        return specs
    }
}

extension EffectOptions {
    /// Attaches the chain's nodes and connects `source` → effects → the main mixer.
    func connect(_ source: AudioNode, in engine: AudioEngine) throws {
        let nodes: [AudioNode]
        do { nodes = try EffectChain.makeNodes(try specs()) } catch let error as EffectSpecError {
            throw CLIError(error.description)
        }
        var previous = source
        for node in nodes {
            engine.attach(node)
            try engine.connect(previous, to: node)
            previous = node
        }
        try engine.connect(previous, to: engine.mainMixerNode)
    }
}

struct FxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fx", abstract: "The effects for --fx and their parameters.",
        subcommands: [FxListCommand.self], defaultSubcommand: FxListCommand.self)
}

struct FxListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List every effect with its parameters: key, range, default and unit.",
        discussion: """
            Use them as --fx NAME:key=value,... on render, play, live and process, in order. \
            Several `--fx eq:` in a row make one multi-band EQ (or give band=N).
            """)

    @Flag(help: "Print JSON.")
    var json = false

    func run() {
        if json {
            let entries = EffectSpec.catalog.map { effect in
                JSONValue.object([
                    "name": .string(effect.name), "summary": .string(effect.summary),
                    "parameters": .array(
                        effect.parameters.map { parameter in
                            var fields: [String: JSONValue] = [
                                "key": .string(parameter.identifier), "description": .string(parameter.name),
                                "default": .number(parameter.defaultValue), "unit": .string(parameter.unit.rawValue),
                                "min": .number(parameter.range.lowerBound), "max": .number(parameter.range.upperBound),
                            ]
                            if !parameter.choices.isEmpty {
                                fields["choices"] = .array(parameter.choices.map(JSONValue.string))
                            }
                            return JSONValue.object(fields)
                        }),
                ])
            }
            print(JSONValue.array(entries).serialized())
            return
        }
        for effect in EffectSpec.catalog {
            print("\(effect.name): \(effect.summary)")
            for parameter in effect.parameters {
                let key = parameter.identifier.padding(toLength: 10, withPad: " ", startingAt: 0)
                let values: String
                if !parameter.choices.isEmpty {
                    values =
                        parameter.choices.joined(separator: "|")
                        + ", default \(parameter.choices[Int(parameter.defaultValue)])"
                } else if parameter.unit == .boolean {
                    values = "on|off, default \(parameter.defaultValue == 1 ? "on" : "off")"
                } else {
                    let unit = parameter.unit.rawValue.isEmpty ? "" : " \(parameter.unit.rawValue)"
                    values =
                        "\(EffectSpec.format(parameter.range.lowerBound))…\(EffectSpec.format(parameter.range.upperBound))\(unit), default \(EffectSpec.format(parameter.defaultValue))"
                }
                print("  \(key)\(parameter.name): \(values)")
            }
        }
    }
}

struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Apply an effect chain to an audio file (WAV, FLAC, Ogg, AIFF).",
        discussion: """
            The output format follows the extension of -o; it is written under a temporary name and \
            renamed when complete.

            Examples:
              pianola process take.wav -o bright.wav --fx eq:type=highShelf,freq=8000,gain=4
              pianola process mix.flac -o mix-eq.flac --fx-chain master.json --format s24
            """)

    @Argument(help: ArgumentHelp("The audio file to process.", valueName: "input"))
    var input: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Output file.", valueName: "path"))
    var output: String

    @OptionGroup var effectOptions: EffectOptions

    @Option(help: ArgumentHelp("Sample format: s16, s24 or f32.", valueName: "format"))
    var format = "s16"

    @Flag(name: .shortAndLong, help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        guard AudioFile.Encoding(rawValue: format) != nil else {
            throw ValidationError("--format must be s16, s24 or f32, got '\(format)'")
        }
    }

    func run() throws {
        Terminal.trapInterrupts()
        let specs = try effectOptions.specs()
        let audio: AudioFile.Buffer
        do { audio = try AudioFile.read(from: input) } catch { throw CLIError(error.description) }
        let channels = max(1, audio.channelCount)
        let chain: EffectChain
        do { chain = try EffectChain(specs, sampleRate: Double(audio.sampleRate), channelCount: channels) } catch {
            throw CLIError(error.description)
        }
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(
                path: output, sampleRate: audio.sampleRate, channelCount: channels,
                encoding: AudioFile.Encoding(rawValue: format)!)
        } catch { throw CLIError(error.description) }
        let block = 4_096
        let buffer = AudioBuffer(channelCount: channels, frameCapacity: block)
        var progress =
            quiet ? nil : ProgressReporter(label: "process", total: Double(audio.frameCount) / Double(audio.sampleRate))
        // The chain's latency (a limiter's look-ahead) is taken off the start and the input is
        // followed by as much silence, so the output lines up with the input, frame for frame;
        // a reverb's tail is kept too.
        let latency = chain.latency
        let total = audio.frameCount + latency + Int(chain.tailSeconds * Double(audio.sampleRate))
        var position = 0
        while position < total {
            if Terminal.interruptSignal != nil {
                writer.cancel()
                progress?.finish()
                throw CLIError("interrupted; no output was written")
            }
            let count = min(block, total - position)
            for channel in 0..<channels {
                let samples = buffer.channel(channel)
                for frame in 0..<count {
                    let index = position + frame
                    samples[frame] = index < audio.frameCount ? audio.samples[index * channels + channel] : 0
                }
            }
            chain.process(buffer, frameCount: count)
            let skip = max(0, min(count, latency - position))
            do { try writer.write(buffer, from: skip, frameCount: count - skip) } catch {
                writer.cancel()
                throw CLIError(error.description)
            }
            position += count
            progress?.update(done: Double(min(position, audio.frameCount)) / Double(audio.sampleRate))
        }
        progress?.finish()
        do { try writer.finish() } catch { throw CLIError(error.description) }
        if !quiet {
            Terminal.writeError(
                "\(output): \(Terminal.clock(Double(audio.frameCount) / Double(audio.sampleRate))), \(specs.count) effects\n"
            )
        }
    }
}
