import CALSA
import CALSAShims

/// An open ALSA playback PCM configured for interleaved 32-bit float stereo.
///
/// This is the device end of the real-time output; the audio thread that feeds it, format
/// negotiation beyond float and xrun recovery are built on top of it by the playback work.
public final class ALSAPCMDevice {
    public let name: String
    public let sampleRate: Int
    public let channelCount: Int
    private let handle: OpaquePointer

    /// Opens and configures `name` (e.g. `default`, `null`, `hw:0,0`) for playback.
    public init(
        name: String, sampleRate: Int = 44_100, channelCount: Int = 2, latencyMicroseconds: Int = 50_000
    )
        throws(ALSAPCMError)
    {
        pianola_alsa_silence_library_errors()
        var pcm: OpaquePointer?
        let opened = snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, 0)
        guard opened == 0, let pcm else {
            throw .cannotOpen(device: name, reason: String(cString: snd_strerror(opened)))
        }
        let configured = snd_pcm_set_params(
            pcm, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channelCount), UInt32(sampleRate), 1,
            UInt32(latencyMicroseconds))
        guard configured == 0 else {
            snd_pcm_close(pcm)
            throw .unsupportedConfiguration(device: name, reason: String(cString: snd_strerror(configured)))
        }
        self.name = name
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.handle = pcm
    }

    deinit { snd_pcm_close(handle) }

    /// Writes interleaved frames, blocking until the device took them all.
    public func write(interleaved samples: [Float]) throws(ALSAPCMError) {
        let frameCount = samples.count / channelCount
        var offset = 0
        while offset < frameCount {
            let written = samples.withUnsafeBufferPointer { buffer in
                snd_pcm_writei(
                    handle, buffer.baseAddress! + offset * channelCount, snd_pcm_uframes_t(frameCount - offset))
            }
            if written < 0 {
                let recovered = snd_pcm_recover(handle, Int32(written), 1)
                if recovered < 0 { throw .writeFailed(device: name, reason: String(cString: snd_strerror(recovered))) }
                continue
            }
            offset += written
        }
    }

    /// Plays out what is buffered, then stops.
    public func drain() { snd_pcm_drain(handle) }
}
