import AudioFiles
import Effects
import Foundation
import JACKIO
import TestSupport
import Testing

@testable import Sessions

/// Issue 43, point 15: the library's errors name library calls and settings; the `pianola` command
/// puts its own options in their place (`Tests/PianolaCLITests` checks that it still does).
@Suite("Sessions' errors speak the library's words")
struct LibraryErrorWordingTests {
    @Test("a render over the length limit names RenderOptions.maximumSeconds, not --max-length")
    func tooLong() {
        let text = RenderError.tooLong(seconds: 10_800, limit: 7_200).description
        #expect(
            text
                == "the music lasts 3:00:00, more than the 2:00:00 allowed (RenderOptions.maximumSeconds raises it; "
                + "a damaged file can say hours: the diagnostics of MIDIFile.read(path:) list its defects)")
        #expect(!text.contains("--") && !text.contains("pianola"))
    }

    @Test("a recorder refuses a rate effect naming AudioFileProcessor, not `pianola process`")
    func recorderRateEffect() throws {
        try withTemporaryFolder("recorder-wording") { folder in
            let device = try FileCaptureDevice.make(samples: [Float](repeating: 0, count: 4_096), in: folder)
            var configuration = AudioRecorder.Configuration(input: device.configuration(rate: 48_000, channels: 2))
            configuration.effects = [EffectSpec(name: "varispeed", values: ["rate": 2])]
            #expect {
                _ = try AudioRecorder(path: folder + "/take.wav", configuration: configuration)
            } throws: { error in
                "\(error)"
                    == "varispeed: changes the pace, which a recording as it happens cannot "
                    + "(process the take with AudioFileProcessor)"
            }
        }
    }

    @Test("following a JACK transport refuses a speed in the configuration's words, not --speed")
    func transportPace() throws {
        let server = try JACKServer.started()
        var configuration = PlaybackSession.Configuration(soundFonts: [bundledFontPath])
        configuration.jack = JACKOutput.Configuration(
            clientName: "pianola-pace", serverName: server.name, connectsToPlayback: false, transport: .followed)
        configuration.speed = 2
        #expect {
            _ = try PlaybackSession(configuration)
        } throws: { error in
            "\(error)"
                == "following the JACK transport, the song plays at the transport's pace: "
                + "no speed other than 1, no loops and no rate effect in the configuration"
        }
    }
}
