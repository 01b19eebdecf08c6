import AudioGraph
import CSndFile
import TestSupport
import Testing

@testable import AudioFiles

#if canImport(Glibc)
    import Glibc
#endif

/// A folder on a file system with room for a file past 4 GiB (RAM-backed `/dev/shm` first), or nil.
private let roomyFolder: String? = {
    let needed: UInt64 = 6 << 30
    for folder in ["/dev/shm", "/tmp"] {
        var stats = statvfs()
        if statvfs(folder, &stats) == 0, UInt64(stats.f_bavail) * UInt64(stats.f_frsize) >= needed { return folder }
    }
    return nil
}()

@Suite("Audio files past 4 GiB")
struct LargeFileTests {
    @Test("a WAV that stays under 4 GiB is a plain RIFF WAVE file")
    func smallWAVStaysRIFF() throws {
        try withTemporaryFolder("rf64") { folder in
            let path = folder + "/small.wav"
            let writer = try AudioFileWriter(path: path, sampleRate: 48_000)
            try writer.write(interleaved: [Float](repeating: 0.25, count: 9_600))
            try writer.finish()
            let header = try #require(fopen(path, "rb"))
            defer { fclose(header) }
            var bytes = [UInt8](repeating: 0, count: 12)
            #expect(fread(&bytes, 1, 12, header) == 12)
            #expect(String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF")
            #expect(String(decoding: bytes[8..<12], as: UTF8.self) == "WAVE")
            #expect(try AudioFile.read(from: path).frameCount == 4_800)
        }
    }

    @Test(
        "a WAV told it may pass 4 GiB is written as RF64 and reads back whole; one not told stops with an error",
        .enabled(if: roomyFolder != nil, "needs 6 GiB free in /dev/shm or /tmp"))
    func wavPast4GiB() throws {
        try withTemporaryFolder("rf64", in: roomyFolder) { folder in
            let path = folder + "/long.wav"
            let plain = folder + "/plain.wav"
            // Float stereo: 8 bytes a frame, so 2^29 frames are 4 GiB of data; a little more.
            let chunk = 1 << 20
            let chunks = (1 << 29) / chunk + 2
            let writer = try AudioFileWriter(
                path: path, sampleRate: 48_000, encoding: .f32, expectedFrameCount: chunks * chunk)
            var samples = [Float](repeating: 0.125, count: chunk * 2)
            for index in 0..<chunks {
                if index == chunks - 1 { samples[samples.count - 2] = 0.5 }  // the very last frame, marked
                try writer.write(interleaved: samples)
            }
            try writer.finish()
            #expect(access(folder + "/.long.wav.partial-\(getpid())", F_OK) != 0)

            let header = try #require(fopen(path, "rb"))
            var bytes = [UInt8](repeating: 0, count: 4)
            #expect(fread(&bytes, 1, 4, header) == 4)
            fclose(header)
            #expect(String(decoding: bytes, as: UTF8.self) == "RF64")
            var info = SF_INFO()
            let file = try #require(sf_open(path, Int32(SFM_READ), &info))
            defer { sf_close(file) }
            #expect(Int(info.frames) == chunks * chunk, "libsndfile reads \(info.frames) frames")
            #expect(sf_seek(file, info.frames - 2, SEEK_SET) == info.frames - 2)
            var last = [Float](repeating: 0, count: 4)
            #expect(sf_readf_float(file, &last, 2) == 2)
            #expect(last == [0.125, 0.125, 0.5, 0.125])
            unlink(path)

            // Not told: a plain WAV, which refuses the write that would take it past 4 GiB.
            let unaware = try AudioFileWriter(path: plain, sampleRate: 48_000, encoding: .f32)
            #expect(throws: AudioFileError.self) {
                for _ in 0..<chunks { try unaware.write(interleaved: samples) }
            }
            #expect(unaware.framesWritten <= unaware.frameLimit)
            unaware.cancel()
            #expect(access(plain, F_OK) != 0 && access(folder + "/.plain.wav.partial-\(getpid())", F_OK) != 0)
        }
    }

    @Test("WAV and AIFF writers stop before 4 GiB; RF64, FLAC and Ogg have no such limit")
    func sizeLimits() throws {
        try withTemporaryFolder("rf64") { folder in
            for name in ["limit.aiff", "limit.wav"] {
                let writer = try AudioFileWriter(path: folder + "/" + name, sampleRate: 48_000)
                #expect(writer.frameLimit * 4 < Int(UInt32.max))
                #expect(writer.frameLimit * 4 > Int(UInt32.max) - 100_000)
                writer.cancel()
            }
            let big = try AudioFileWriter(path: folder + "/big.wav", sampleRate: 48_000, expectedFrameCount: 1 << 31)
            let flac = try AudioFileWriter(path: folder + "/any.flac", sampleRate: 48_000)
            #expect(big.frameLimit == .max && flac.frameLimit == .max)
            big.cancel()
            flac.cancel()
        }
    }
}
