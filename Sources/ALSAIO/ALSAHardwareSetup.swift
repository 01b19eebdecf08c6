import CALSA

/// A PCM's hardware configuration as the output and the input both set it: interleaved access,
/// the first sample format the device takes of those asked for, the channels, the rate, the
/// period size and count nearest those asked for.
enum ALSAHardwareSetup {
    /// What the device granted.
    struct Granted {
        /// The index in `formats` of the sample format taken.
        var formatIndex: Int
        /// Frames per period, and periods in the buffer.
        var periodFrames: Int
        var periodCount: Int
    }

    /// Applies the configuration to `pcm` (named `device` in errors; `verb` says what the device
    /// does with channels, "plays" or "captures"). `formats` are tried in order; `formatNames`
    /// says them in the error when none is taken.
    static func apply(
        _ pcm: OpaquePointer, device: String, verb: String, formats: [snd_pcm_format_t], formatNames: String,
        channelCount: Int, sampleRate: Double, periodFrames: Int, periodCount: Int
    ) throws(ALSAPCMError) -> Granted {
        var hardware: OpaquePointer?
        snd_pcm_hw_params_malloc(&hardware)
        guard let hardware else { throw .unsupportedConfiguration(device: device, reason: "out of memory") }
        defer { snd_pcm_hw_params_free(hardware) }
        try check(snd_pcm_hw_params_any(pcm, hardware), "no configuration", device: device)
        try check(
            snd_pcm_hw_params_set_access(pcm, hardware, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access",
            device: device)
        guard let index = formats.firstIndex(where: { snd_pcm_hw_params_test_format(pcm, hardware, $0) == 0 }) else {
            throw .unsupportedConfiguration(device: device, reason: "none of \(formatNames) is supported")
        }
        try check(snd_pcm_hw_params_set_format(pcm, hardware, formats[index]), "sample format", device: device)
        try setChannels(channelCount, on: pcm, hardware, device: device, verb: verb)
        if snd_pcm_hw_params_set_rate(pcm, hardware, UInt32(sampleRate.rounded()), 0) < 0 {
            throw .unsupportedConfiguration(
                device: device, reason: "sample rate \(Int(sampleRate)) Hz is not supported")
        }
        var period = snd_pcm_uframes_t(periodFrames)
        var direction: Int32 = 0
        try check(
            snd_pcm_hw_params_set_period_size_near(pcm, hardware, &period, &direction), "period size", device: device)
        var periods = UInt32(periodCount)
        try check(
            snd_pcm_hw_params_set_periods_near(pcm, hardware, &periods, &direction), "period count", device: device)
        try check(snd_pcm_hw_params(pcm, hardware), "applying the configuration", device: device)
        return Granted(formatIndex: index, periodFrames: Int(period), periodCount: Int(periods))
    }

    /// Throws for a negative alsa-lib `result`: `what` failed on `device`, with alsa-lib's reason.
    static func check(_ result: Int32, _ what: String, device: String) throws(ALSAPCMError) {
        if result < 0 {
            throw .unsupportedConfiguration(device: device, reason: "\(what): \(String(cString: snd_strerror(result)))")
        }
    }

    /// `count` channels on `hardware` of `pcm`; throws naming `device` and the counts it takes
    /// (`verb`: "plays", "captures"; at most 64 said).
    private static func setChannels(
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
