import ArgumentParser
import Pianola

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the ALSA playback devices (names for --device).",
        discussion: """
            `default` follows the system's choice (PipeWire or PulseAudio when they run); `hw:C,D` \
            is a card's device used directly, `plughw:C,D` the same with format conversion.
            """)

    @Flag(help: "Print a JSON array of {name, description}.")
    var json = false

    func run() throws {
        let devices = ALSADeviceList.playbackDevices()
        if json {
            print(
                JSONValue.array(
                    devices.map { .object(["name": .string($0.name), "description": .string($0.description)]) }
                ).serialized())
            return
        }
        if devices.isEmpty {
            print("No ALSA playback devices found.")
            return
        }
        let width = min(40, devices.map(\.name.count).max() ?? 0)
        for device in devices {
            let padding = String(repeating: " ", count: max(1, width - device.name.count + 2))
            print(device.name + padding + device.description)
        }
    }
}
