// Renders a MIDI file to WAV with the library, the long way round, to show the pieces:
// an engine, a sampler with a SoundFont, a music player driven by the render, manual rendering
// and a streaming file writer.
//
//   swift run render-to-file song.mid out.wav [font.sf2]
import Pianola

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else {
    print("usage: render-to-file IN.mid OUT.wav [SOUNDFONT.sf2]")
    throw ExampleError.usage
}
enum ExampleError: Error { case usage }

// 1. The music.
let sequence = try MusicSequence(path: arguments[0])

// 2. A sampler with a SoundFont (the same discovery `pianola` uses when none is given).
let font = try SoundFontDiscovery().resolve(explicit: arguments.count > 2 ? arguments[2] : nil)
let sampler = try SamplerNode()
try sampler.loadSoundFont(at: font.path)

// 3. The graph: sampler → main mixer → output, rendered by hand.
let engine = AudioEngine()
try engine.attach(sampler)
try engine.connect(sampler, to: engine.mainMixerNode)
let player = MusicPlayer(sequence: sequence, destination: sampler)
try engine.addRenderObserver(player)
try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 512)

// 4. Render until the music ends, plus one second of tail, into the file.
let writer = try AudioFileWriter(path: arguments[1], sampleRate: 44_100)
let buffer = AudioBuffer(channelCount: 2, frameCapacity: 512)
player.play()
var tail = 0
while tail < 44_100 {
    try engine.renderOffline(frameCount: 512, into: buffer)
    try writer.write(buffer, frameCount: 512)
    if player.isFinished { tail += 512 }
}
try writer.finish()
print("wrote \(arguments[1]): \(writer.framesWritten) frames with \(font.path)")
