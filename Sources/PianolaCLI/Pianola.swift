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
            Pianola plays and renders Standard MIDI Files through SoundFonts (FluidSynth), and plays \
            live MIDI from ALSA and the network.

            SoundFont choice, for every command: --soundfont FILE, else $PIANOLA_SOUNDFONT, else the \
            system's General MIDI font (/usr/share/sounds/sf2/default-GM.sf2 and the usual folders), \
            else the General MIDI font bundled with Pianola.

            Examples:
              pianola info song.mid                describe a MIDI file (--json for pipelines)
              pianola soundfont                    show which SoundFont would be used
              pianola soundfont --presets -s FILE  list the presets of a SoundFont
            """,
        version: "0.1.0",
        subcommands: [
            PlayCommand.self, LiveCommand.self, RenderCommand.self, ProcessCommand.self, FxCommand.self,
            InfoCommand.self, DevicesCommand.self, SoundFontCommand.self,
        ]
    )

    /// Runs the tool. Every error is shown here, in one place: the argument parser's own (usage,
    /// help, exit codes) as it shows them; the library's typed errors and `CLIError` (each
    /// describes itself) as one line, `pianola: <what and where>`, with exit status 1.
    static func main() {
        var command: any ParsableCommand
        do { command = try parseAsRoot() } catch { exit(withError: error) }
        do { try command.run() } catch {
            switch error {
            case is ExitCode, is CleanExit, is ValidationError: exit(withError: error)
            case let error as any Error & CustomStringConvertible:
                printError("pianola: \(error.description)")
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
