import ArgumentParser
import Pianola

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract:
            "List ALSA playback and capture devices (names for --device), MIDI sources (for live --connect), MIDI destinations (for play --midi-out) and, when a JACK server runs, its ports.",
        discussion: """
            `default` follows the system's choice (PipeWire or PulseAudio when they run); `hw:C,D` \
            is a card's device used directly, `plughw:C,D` the same with format conversion. Capture \
            devices are what `pianola record --device` takes. MIDI \
            sources are the ALSA sequencer's readable ports: keyboards, virtual ports and programs; \
            `pianola live --connect` takes their CLIENT:PORT or client name. MIDI destinations are \
            its writable ports (synthesizers, MIDI interfaces' outputs, programs): `pianola play \
            --midi-out` and `--route` take them the same way. When a JACK server runs \
            (or PipeWire's, through pw-jack), its ports are listed too: MIDI outputs are what \
            `pianola live --driver jack --connect` takes.
            """)

    @Flag(
        help:
            "Print a JSON array of {kind, name, description}: kind is \"playback\", \"capture\", \"midi-source\", \"midi-destination\" or \"jack-port\"."
    )
    var json = false

    func run() throws {
        let devices = ALSADeviceList.playbackDevices()
        let captures = ALSADeviceList.captureDevices()
        let midi: Result<[MIDISequencerPort], MIDIIOError>
        do { midi = .success(try ALSASequencerInput.ports().filter { $0.client != 0 }) } catch {
            midi = .failure(error)
        }
        let sources = midi.map { $0.filter(\.isSource) }
        let destinations = midi.map { $0.filter(\.isDestination) }
        let jack = JACK.ports()
        if json {
            var entries = devices.map {
                JSONValue.object([
                    "kind": .string("playback"), "name": .string($0.name), "description": .string($0.description),
                ])
            }
            entries += captures.map {
                JSONValue.object([
                    "kind": .string("capture"), "name": .string($0.name), "description": .string($0.description),
                ])
            }
            for (kind, ports) in [("midi-source", sources), ("midi-destination", destinations)] {
                guard case .success(let ports) = ports else { continue }
                entries += ports.map {
                    JSONValue.object([
                        "kind": .string(kind), "name": .string($0.address),
                        "description": .string("\($0.clientName): \($0.portName)"),
                    ])
                }
            }
            entries += (jack ?? []).map {
                JSONValue.object([
                    "kind": .string("jack-port"), "name": .string($0.name), "description": .string(Self.describe($0)),
                ])
            }
            print(JSONValue.array(entries).serialized())
            return
        }
        print("Playback devices (play/live --device):")
        Self.printDevices(devices)
        print("Capture devices (record --device):")
        Self.printDevices(captures)
        for (title, ports) in [
            ("MIDI sources (live --connect):", sources),
            ("MIDI destinations (play --midi-out, --route):", destinations),
        ] {
            print(title)
            switch ports {
            case .failure(let error): print("  none: \(error.description)")
            case .success(let ports) where ports.isEmpty: print("  none connected")
            case .success(let ports):
                for port in ports {
                    let address = fitted(port.address, width: 8)
                    print("  \(address)\(port.clientName): \(port.portName)")
                }
            }
        }
        guard let jack else { return }
        print("JACK ports (play/live --driver jack):")
        if jack.isEmpty { print("  none") }
        let width = min(40, jack.map(\.name.count).max() ?? 0)
        for port in jack {
            print(
                "  " + port.name + String(repeating: " ", count: max(1, width - port.name.count + 2))
                    + Self.describe(port))
        }
    }

    /// "audio output, physical", "MIDI output (live --driver jack --connect)" …
    static func describe(_ port: JACK.Port) -> String {
        var text = (port.isMIDI ? "MIDI " : "audio ") + (port.isOutput ? "output" : "input")
        if port.isPhysical { text += ", physical" }
        if port.isMIDI && port.isOutput { text += " (live --driver jack --connect)" }
        return text
    }

    private static func printDevices(_ devices: [ALSADeviceList.Device]) {
        if devices.isEmpty { print("  none found") }
        let width = min(40, devices.map(\.name.count).max() ?? 0)
        for device in devices {
            let padding = String(repeating: " ", count: max(1, width - device.name.count + 2))
            print("  " + device.name + padding + device.description)
        }
    }
}
