import CALSA

#if canImport(Glibc)
    import Glibc
#endif

/// The ALSA PCM devices that can play, as ALSA's name hints list them (names usable as `--device`).
public enum ALSADeviceList {
    public struct Device: Sendable, Hashable {
        public var name: String
        public var description: String
    }

    public static func playbackDevices() -> [Device] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [Device] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            func field(_ id: String) -> String? {
                guard let value = snd_device_name_get_hint(hint, id) else { return nil }
                defer { free(value) }
                return String(cString: value)
            }
            guard let name = field("NAME") else { continue }
            // IOID is absent for devices that do both directions; skip capture-only ones.
            if let direction = field("IOID"), direction == "Input" { continue }
            let description = (field("DESC") ?? "").split(separator: "\n").joined(separator: " — ")
            devices.append(Device(name: name, description: description))
        }
        return devices
    }
}
