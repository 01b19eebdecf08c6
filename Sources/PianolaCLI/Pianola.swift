import ArgumentParser
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

@main
struct PianolaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pianola",
        abstract: "A MIDI sequencer and SoundFont sampler for Linux.",
        discussion: """
            Pianola plays and renders Standard MIDI Files through SoundFonts (FluidSynth), and \
            plays live MIDI from ALSA and the network.

            Examples:
              pianola play song.mid               play it on the sound device
              pianola render song.mid -o out.wav  write a WAV, FLAC, MP3 or Opus file
              pianola live --autoconnect          play a MIDI keyboard through a font
              pianola record -o take.wav          record an audio input, with meters
              pianola info song.mid               describe a MIDI file (--json: JSON)
              pianola soundfont --presets         the SoundFont in use, its presets

            SoundFont, for every command: --soundfont FILE (repeat to stack fonts), else \
            $PIANOLA_SOUNDFONT, else the system's General MIDI font \
            (/usr/share/sounds/sf2/default-GM.sf2 and the usual folders), else the General MIDI \
            font bundled with Pianola.

            `pianola help COMMAND` (or `pianola COMMAND --help`) explains a command.
            """,
        // `--version` prints `versionText` (see main()); asking libfluidsynth for its version
        // here would load it for every command, since the configuration is read on each parse.
        version: versionNumber,
        subcommands: [
            PlayCommand.self, LiveCommand.self, RecordCommand.self, RenderCommand.self, ProcessCommand.self,
            FxCommand.self,
            InfoCommand.self, DevicesCommand.self, SoundFontCommand.self,
        ]
    )

    static let versionNumber = "0.1.0"

    /// Pianola's version and the libraries it plays with.
    static var versionText: String {
        "\(versionNumber) (FluidSynth \(SamplerNode.fluidSynthVersion), \(AudioFile.libraryVersion))"
    }

    /// Runs the tool. Every error is shown here, in one place: the argument parser's own (usage,
    /// help, exit codes) as it shows them; the library's typed errors and `CLIError` (each
    /// describes itself) as one line, `pianola: <what and where>`, with exit status 1.
    static func main() {
        if let mistake = Mistakes.explain(Array(CommandLine.arguments.dropFirst())) {
            printError("pianola: " + mistake)
            Glibc.exit(ExitCode.validationFailure.rawValue)
        }
        // The parser answers --version for any command (before a `--`), so this does too.
        if CommandLine.arguments.dropFirst().prefix(while: { $0 != "--" }).contains("--version") {
            Terminal.writeOutput(versionText + "\n")
            Glibc.exit(0)
        }
        var command: any ParsableCommand
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if let name = arguments.first, let type = ManyFiles.commands[name] {
                // Thousands of files: see ManyFiles.
                command = try ManyFiles.parse(arguments, as: type)
            } else {
                command = try parseAsRoot()
            }
        } catch {
            exit(withError: error)
        }
        do { try command.run() } catch {
            switch error {
            case is ExitCode, is CleanExit, is ValidationError: exit(withError: error)
            case let error as any Error & CustomStringConvertible:
                printError("pianola: \(Hints.commandLine(error.description))")
                Glibc.exit(1)
            default: exit(withError: error)
            }
        }
    }
}

/// Writes one line to standard error.
func printError(_ message: String) {
    Terminal.writeError(message + "\n")
}
