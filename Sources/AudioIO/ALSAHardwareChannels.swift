import CALSA

/// Sets the channel count of a PCM's hardware configuration, or says which counts the device
/// takes: shared by the output and the input.
enum ALSAHardwareChannels {
    /// `count` channels on `hardware` of `pcm`; throws naming `device` and the counts it takes
    /// (`verb`: "plays", "captures"; at most 64 said).
    static func set(
        _ count: Int, on pcm: OpaquePointer, _ hardware: OpaquePointer, device: String, verb: String
    ) throws(ALSAPCMError) {
        guard snd_pcm_hw_params_set_channels(pcm, hardware, UInt32(count)) < 0 else { return }
        var low: UInt32 = 0
        var high: UInt32 = 0
        snd_pcm_hw_params_get_channels_min(hardware, &low)
        snd_pcm_hw_params_get_channels_max(hardware, &high)
        let range = low == high ? "\(low)" : "\(low)…\(min(high, 64))"
        throw .unsupportedConfiguration(
            device: device, reason: "\(count) channels are not supported (the device \(verb) \(range))")
    }
}
