// swift-tools-version: 6.2
//
// Pianola: a MIDI sequencer and SoundFont sampler for Linux.
// Module boundaries: docs/ARCHITECTURE.md (what each module holds and may import). Dependencies
// point one way; PianolaSupport (paths, threads, edit distance) is below them all:
//   MIDICore ← SMF ← Sequencer → AudioGraph ← Effects / Meters / Sampler / AudioFiles ← RateAndPitch;
//   AudioFiles ← ALSAIO (ALSA devices) and AudioGraph ← JACKIO (libjack, loaded when asked for), side by side;
//   Sequencer ← Sampler (for FluidSynth's player timing, a policy the sequencer is given);   MIDICore ← MIDIIO;
//   the building blocks ← Sessions;   everything ← Pianola ← PianolaCLI (`pianola`)
import PackageDescription

// `PIANOLA_WERROR=1` (set by scripts/test and CI) turns every warning in our own targets into an error.
let strictSettings: [SwiftSetting] =
    Context.environment["PIANOLA_WERROR"] == "1" ? [.treatAllWarnings(as: .error)] : []

let package = Package(
    name: "Pianola",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Pianola", targets: ["Pianola"]),
        .executable(name: "pianola", targets: ["PianolaCLI"]),
        .executable(name: "generate-soundfont", targets: ["generate-soundfont"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // MARK: C libraries (each imported by exactly one Swift module, re-exported by none)
        // FluidSynth's API, with libfluidsynth opened on first use rather than linked: its library
        // tree would add ~10 ms to every command's start, `info` and `--help` included (see the
        // header). No pkg-config: fluidsynth.pc lists static dependencies' flags SwiftPM rejects.
        .target(name: "CFluidSynth", linkerSettings: [.linkedLibrary("dl")]),
        // Keeps libfluidsynth's single-thread OpenMP regions off libgomp's allocator (see the file).
        .target(name: "CFluidSynthRealtime", linkerSettings: [.linkedLibrary("dl")]),
        // alsa-lib helpers Swift cannot call directly (variadic callbacks; later the sequencer's macros).
        .target(name: "CALSAShims", linkerSettings: [.linkedLibrary("asound")]),
        // JACK's API, with libjack opened when a JACK driver is asked for, not linked: Pianola runs
        // where no JACK library exists (see the header). The headers are libjack-jackd2-dev's.
        .target(name: "CJACK", linkerSettings: [.linkedLibrary("dl")]),
        // Read-only file mappings that a truncation cannot turn into SIGBUS (SMF reads large files so).
        .target(name: "CMappedFile"),
        // libvorbisfile over a block of memory: a SoundFont 3 sample's Ogg Vorbis stream.
        .target(name: "CVorbisFile", linkerSettings: [.linkedLibrary("vorbisfile")]),
        // Flush-to-zero around a DSP block (the reverb's delay network), per architecture.
        .target(name: "CFloatEnvironment"),
        // The native voice engine's innermost loop: a voice's interpolated sample read, in SSE2.
        .target(name: "CVoiceKernel"),
        // The thread calls Swift's Glibc module does not export (gettid, pthread_setname_np).
        .target(name: "CSystemThread"),
        // The ALSA sequencer for MIDIIO (alsa-lib's event macros and unions, decoded to MIDI bytes).
        .target(name: "CALSASequencer", linkerSettings: [.linkedLibrary("asound")]),
        .systemLibrary(
            name: "CALSA", pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CSndFile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"]), .brew(["libsndfile"])]),
        .systemLibrary(
            name: "CSampleRate", pkgConfig: "samplerate",
            providers: [.apt(["libsamplerate0-dev"]), .brew(["libsamplerate"])]),
        .systemLibrary(name: "CSoundTouch", providers: [.apt(["libsoundtouch-dev"])]),
        .systemLibrary(
            name: "CEBUR128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"]), .brew(["libebur128"])]),

        // MARK: Pure Swift modules (no C library, no devices)
        // What every module may use and no user sees (`package` access): paths, threads, edit distance.
        .target(name: "PianolaSupport", dependencies: ["CSystemThread"], swiftSettings: strictSettings),
        .target(name: "MIDICore", swiftSettings: strictSettings),
        .target(
            name: "SMF", dependencies: ["MIDICore", "PianolaSupport", "CMappedFile"], swiftSettings: strictSettings),
        .target(
            name: "AudioGraph", dependencies: ["MIDICore"],
            swiftSettings: strictSettings),
        .target(
            name: "Sequencer", dependencies: ["MIDICore", "SMF", "AudioGraph", "PianolaSupport"],
            swiftSettings: strictSettings),
        .target(name: "Effects", dependencies: ["AudioGraph", "CFloatEnvironment"], swiftSettings: strictSettings),
        // Peak, power (dBFS windows), loudness (libebur128): the meters, one family.
        .target(name: "Meters", dependencies: ["AudioGraph", "CEBUR128"], swiftSettings: strictSettings),

        // The bundled General MIDI font as a resource: SwiftPM copies it beside every executable
        // that links Pianola (Pianola_BundledSoundFont.resources), where SoundFontDiscovery finds it.
        .target(
            name: "BundledSoundFont", path: "SoundFonts", exclude: ["README.md"],
            resources: [.copy("PianolaGM.sf2")], swiftSettings: strictSettings),

        // MARK: Modules that wrap a C library
        .target(
            name: "Sampler",
            dependencies: [
                "AudioGraph", "MIDICore", "Sequencer", "PianolaSupport", "BundledSoundFont", "CFluidSynth",
                "CFluidSynthRealtime",
            ],
            swiftSettings: strictSettings),
        // Audio files (libsndfile): read, write, play as a node, capture from a tap; with the
        // resampling (libsamplerate) that a file at another rate needs.
        .target(
            name: "AudioFiles", dependencies: ["AudioGraph", "PianolaSupport", "CSndFile", "CSampleRate"],
            swiftSettings: strictSettings),
        // Processing that changes a length: varispeed and time-pitch (SoundTouch), as nodes and offline.
        .target(
            name: "RateAndPitch", dependencies: ["AudioGraph", "AudioFiles", "CSampleRate", "CSoundTouch"],
            swiftSettings: strictSettings),
        // ALSA PCM devices: output, capture, their clocks, the pacer for unpaced devices.
        .target(
            name: "ALSAIO", dependencies: ["AudioGraph", "AudioFiles", "PianolaSupport", "CALSA", "CALSAShims"],
            swiftSettings: strictSettings),
        .target(
            name: "JACKIO", dependencies: ["AudioGraph", "MIDICore", "PianolaSupport", "CJACK"],
            swiftSettings: strictSettings),
        .target(
            name: "MIDIIO",
            dependencies: [
                "MIDICore", "PianolaSupport", "CALSASequencer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),

        // MARK: Sessions (what a job wires together), the umbrella and tools
        .target(
            name: "Sessions",
            dependencies: [
                "PianolaSupport", "MIDICore", "SMF", "Sequencer", "AudioGraph", "Effects", "Meters", "Sampler",
                "AudioFiles", "RateAndPitch", "ALSAIO", "MIDIIO", "JACKIO", "SoundFontFiles", "VoiceEngine",
            ],
            swiftSettings: strictSettings),
        .target(
            name: "Pianola",
            dependencies: [
                "MIDICore", "SMF", "Sequencer", "AudioGraph", "Effects", "Meters", "Sampler", "AudioFiles",
                "RateAndPitch", "ALSAIO", "MIDIIO", "JACKIO", "Sessions", "SoundFontFiles", "VoiceEngine",
            ],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "PianolaCLI",
            dependencies: [
                "Pianola", "MIDICore", "PianolaSupport", "SoundFontFiles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings),
        // SoundFont 2 and 3 files as a voice engine reads them: presets, instruments, zones,
        // generators, modulators, sample headers, and the samples (SF3's decoded by libvorbisfile).
        .target(name: "SoundFontFiles", dependencies: ["CVorbisFile"], swiftSettings: strictSettings),
        // Pianola's own SoundFont voice engine: FluidSynth's synthesis model, voices in SIMD lanes,
        // every note on its exact frame.
        .target(
            name: "VoiceEngine", dependencies: ["SoundFontFiles", "AudioGraph", "MIDICore", "Effects", "CVoiceKernel"],
            swiftSettings: strictSettings),
        .target(name: "SoundFontGenerator", dependencies: ["MIDICore"], swiftSettings: strictSettings),
        .executableTarget(
            name: "generate-soundfont", dependencies: ["SoundFontGenerator"],
            swiftSettings: strictSettings),

        // MARK: Examples (built and run by the tests)
        .executableTarget(
            name: "make-demo-song", dependencies: ["SMF", "MIDICore"], path: "Examples/MakeDemoSong",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "render-to-file", dependencies: ["Pianola"], path: "Examples/RenderToFile",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "play-midi-file", dependencies: ["Pianola"], path: "Examples/PlayMIDIFile",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "live-keyboard", dependencies: ["Pianola"], path: "Examples/LiveKeyboard",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "reverb-player", dependencies: ["Pianola"], path: "Examples/ReverbPlayer",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "record-with-meter", dependencies: ["Pianola"], path: "Examples/RecordWithMeter",
            swiftSettings: strictSettings),

        // MARK: Test peers (run by the device tests in the VM)
        .executableTarget(
            name: "test-keyboard", path: "Tests/Device/TestKeyboard", linkerSettings: [.linkedLibrary("asound")]),
        .executableTarget(
            name: "midi-monitor", path: "Tests/Device/MIDIMonitor", linkerSettings: [.linkedLibrary("asound")]),
        // Prints what ALSASequencerInput reports (events, sources), for checks that skip the CLI's text.
        .executableTarget(
            name: "sequencer-probe", dependencies: ["MIDIIO"], path: "Tests/Device/SequencerProbe",
            swiftSettings: strictSettings),

        // MARK: Benchmarks (side by side with the reference tools; see Benchmarks/README.md)
        .executableTarget(
            name: "effects-benchmark",
            dependencies: ["Effects", "AudioGraph", "AudioFiles", "RateAndPitch", "SMF", "Sampler", "Sequencer"],
            path: "Benchmarks/EffectsBenchmark",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "voice-benchmark", dependencies: ["AudioGraph", "Sampler", "SoundFontFiles", "VoiceEngine"],
            path: "Benchmarks/VoiceBenchmark", swiftSettings: strictSettings),
        // The native engine's fidelity sweep over whole fonts (scripts/voice-fidelity).
        .executableTarget(
            name: "voice-fidelity",
            dependencies: ["Sampler", "SoundFontFiles", "TestSupport", "VoiceComparison", "VoiceEngine"],
            path: "Benchmarks/VoiceFidelity", swiftSettings: strictSettings),
        .executableTarget(
            name: "parse-benchmark", dependencies: ["SMF", "MIDICore"], path: "Benchmarks/ParseBenchmark",
            swiftSettings: strictSettings),
        .executableTarget(
            name: "journal-benchmark", dependencies: ["MIDIIO", "MIDICore"], path: "Benchmarks/JournalBenchmark",
            swiftSettings: strictSettings),

        // MARK: Tests
        .target(
            name: "TestSupport", dependencies: ["AudioGraph", "AudioFiles", "MIDICore", "SMF", "CJACK"],
            path: "Tests/TestSupport",
            swiftSettings: strictSettings),
        .testTarget(
            name: "PianolaSupportTests", dependencies: ["PianolaSupport", "CSystemThread"],
            swiftSettings: strictSettings),
        .testTarget(name: "MIDICoreTests", dependencies: ["TestSupport", "MIDICore"], swiftSettings: strictSettings),
        .testTarget(
            name: "SMFTests", dependencies: ["TestSupport", "SMF", "MIDICore", "CMappedFile"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "MIDIIOTests", dependencies: ["TestSupport", "MIDIIO", "MIDICore", "CALSASequencer"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "EffectsTests", dependencies: ["Effects", "AudioGraph", "TestSupport", "CFloatEnvironment"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "AudioGraphTests", dependencies: ["AudioGraph", "MIDICore", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(name: "MetersTests", dependencies: ["Meters", "AudioGraph"], swiftSettings: strictSettings),
        .testTarget(
            name: "SequencerTests",
            dependencies: ["Sequencer", "TestSupport", "AudioGraph", "MIDICore", "SMF", "PianolaSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "SessionsTests",
            dependencies: [
                "Sessions", "TestSupport", "PianolaSupport", "MIDICore", "SMF", "Sequencer", "AudioGraph", "Effects",
                "Meters", "Sampler", "AudioFiles", "RateAndPitch", "ALSAIO", "MIDIIO", "JACKIO", "SoundFontFiles",
                "VoiceEngine",
            ],
            swiftSettings: strictSettings),
        .testTarget(name: "PlaybackTests", dependencies: ["Pianola"], swiftSettings: strictSettings),
        // Test-only: counts heap allocations per thread, to prove the render path allocates nothing.
        .target(name: "CAllocationCounter", dependencies: ["CFluidSynthRealtime"], path: "Tests/CAllocationCounter"),
        .testTarget(
            name: "RealTimeSafetyTests",
            dependencies: [
                "Pianola", "Sampler", "PianolaSupport", "CAllocationCounter", "TestSupport", "SoundFontFiles",
                "VoiceEngine",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "SamplerTests",
            dependencies: ["TestSupport", "Sampler", "Sequencer", "SMF", "AudioGraph", "MIDICore", "PianolaSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "JACKIOTests",
            dependencies: ["TestSupport", "JACKIO", "CJACK", "AudioGraph", "Sampler", "Sequencer", "SMF", "MIDICore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "AudioFilesTests",
            dependencies: ["TestSupport", "AudioFiles", "ALSAIO", "Meters", "AudioGraph", "CSndFile"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "RateAndPitchTests",
            dependencies: ["TestSupport", "RateAndPitch", "AudioFiles", "Meters", "AudioGraph"],
            swiftSettings: strictSettings),
        .testTarget(name: "ALSAIOTests", dependencies: ["ALSAIO", "AudioGraph"], swiftSettings: strictSettings),
        .testTarget(
            name: "SoundFontGeneratorTests", dependencies: ["SoundFontGenerator", "Sampler"],
            swiftSettings: strictSettings),
        // Both engines' renders of the same notes and songs, and the measures that compare them:
        // for the native engine's tests and the fidelity sweep.
        .target(
            name: "VoiceComparison",
            dependencies: ["AudioGraph", "Sampler", "Sequencer", "TestSupport", "VoiceEngine"],
            path: "Tests/VoiceComparison", swiftSettings: strictSettings),
        .testTarget(
            name: "VoiceEngineTests",
            dependencies: [
                "TestSupport", "VoiceEngine", "VoiceComparison", "SoundFontFiles", "Sampler", "AudioGraph", "MIDICore",
                "SMF", "Sequencer", "Effects",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "SoundFontFilesTests", dependencies: ["TestSupport", "SoundFontFiles", "Sampler"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "PianolaCLITests",
            dependencies: [
                "PianolaCLI", "Pianola", "TestSupport", "SMF", "MIDICore", "MIDIIO", "AudioFiles", "Meters",
                "SoundFontGenerator", "make-demo-song", "render-to-file", "play-midi-file", "reverb-player",
                "record-with-meter",
            ],
            swiftSettings: strictSettings),
    ]
)
