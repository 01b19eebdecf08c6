// libFuzzer entry point for the SMF reader, the writer and the MIDI stream decoder.
// Built and run by scripts/fuzz (not part of the package build).
//
// Invariants checked on every input:
// - reading never crashes or hangs, lenient or strict;
// - whatever the lenient reader returns writes out and reads back equal;
// - the tempo map, summary and note pairing work on anything the reader returns;
// - summarizing while reading gives the summary of what the reader returns, and strict reading
//   refuses the same inputs with the same error either way;
// - the stream decoder never crashes on any byte sequence.
import MIDICore
import SMF

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let result = try MIDIFile.read(bytes: bytes)
        let file = result.file
        // What the reader returns is in MIDI's range, so the writer has nothing to refuse.
        guard let written = try? file.serialized(), let writtenPlain = try? file.serialized(runningStatus: false) else {
            preconditionFailure("the writer refused what the reader returned")
        }
        let again = try MIDIFile.read(bytes: written)
        precondition(again.file == file, "read(write(x)) != x")
        let plain = try MIDIFile.read(bytes: writtenPlain)
        precondition(plain.file == file, "read(write(x, no running status)) != x")
        let summary = MIDIFileSummary(file)
        let streamed = try MIDIFileSummary.read(bytes: bytes)
        precondition(streamed.summary == summary, "summary while reading != summary of the file read")
        precondition(streamed.diagnostics == result.diagnostics, "summary read gave other diagnostics")
        precondition(summary.durationSeconds >= 0 || summary.durationSeconds.isNaN == false)
        let map = file.tempoMap
        for track in file.tracks {
            _ = track.notes()
            _ = map.barBeat(forTick: track.length)
            _ = map.tick(forSeconds: map.seconds(forTick: track.length))
        }
    } catch {
        // A rejection is a valid outcome; it must only be a typed error, which it is by type.
    }
    // Strict: the summary reader throws exactly when the reader does, the same error.
    var strictError: MIDIFileError? = nil
    do throws(MIDIFileError) {
        _ = try MIDIFile.read(bytes: bytes, strict: true)
    } catch {
        strictError = error
    }
    do throws(MIDIFileError) {
        _ = try MIDIFileSummary.read(bytes: bytes, strict: true)
        precondition(strictError == nil, "summary read accepted what strict reading refused")
    } catch {
        precondition(strictError?.description == error.description, "summary read threw another error")
    }
    var decoder = MIDIStreamDecoder(maximumSysExLength: 1024)
    _ = decoder.decode(bytes)
    return 0
}
