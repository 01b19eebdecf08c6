import CALSA

#if canImport(Glibc)
    import Glibc
#endif

/// The ALSA PCM devices that can play or capture, as ALSA's name hints list them (names usable as
/// `--device`).
public enum ALSADeviceList {
    /// One PCM device from ALSA's name hints.
    public struct Device: Sendable, Hashable {
        /// The PCM name to open (`default`, `sysdefault:CARD=PCH`, `hw:CARD=PCH,DEV=0`), as
        /// `ALSAOutput.Configuration.device` and `--device` take it.
        public var name: String
        /// ALSA's description of it, its lines joined with " — "; empty when ALSA gives none.
        public var description: String
    }

    /// The devices that can play (those for both directions included, capture-only ones left out), in
    /// ALSA's order; empty when ALSA cannot list them. A listed device may still fail to open (busy,
    /// or a hint for hardware that is not there).
    public static func playbackDevices() -> [Device] { devices(skipping: "Input") }

    /// The devices that can capture (those for both directions included, playback-only ones left out),
    /// names usable as `AudioInputNode.Configuration.device` and `pianola record --device`.
    public static func captureDevices() -> [Device] { devices(skipping: "Output") }

    private static func devices(skipping skipped: String) -> [Device] {
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
            // IOID is absent for devices that do both directions.
            if let direction = field("IOID"), direction == skipped { continue }
            let description = (field("DESC") ?? "").split(separator: "\n").joined(separator: " — ")
            devices.append(Device(name: name, description: description))
        }
        return devices
    }
}
