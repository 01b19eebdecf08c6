import Testing

@testable import SMF

/// Builds SMF bytes from raw track contents (the MTrk lengths are computed unless given).
func smf(
    format: Int = 1, division: UInt16 = 96, trackCount: Int? = nil, tracks: [[UInt8]], lengths: [Int?] = []
) -> [UInt8] {
    var out: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, UInt8(format)]
    let count = trackCount ?? tracks.count
    out += [UInt8(count >> 8), UInt8(count & 0xFF), UInt8(division >> 8), UInt8(division & 0xFF)]
    for (index, track) in tracks.enumerated() {
        let length = (index < lengths.count ? lengths[index] : nil) ?? track.count
        out +=
            Array("MTrk".utf8) + [
                UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
            ]
        out += track
    }
    return out
}

let endOfTrack: [UInt8] = [0x00, 0xFF, 0x2F, 0x00]

/// A C-major scale as track bytes: running status note-ons, velocity-0 note-offs.
let scaleTrack: [UInt8] = {
    var bytes: [UInt8] = [0x00, 0x90]
    for (index, key) in [60, 62, 64, 65, 67, 69, 71, 72].enumerated() {
        if index > 0 { bytes.append(0x00) }
        bytes += [UInt8(key), 0x7F, 0x60, UInt8(key), 0x00]
    }
    return bytes + endOfTrack
}()

func kinds(_ result: MIDIFile.ReadResult) -> [MIDIFileDiagnostic.Kind] { result.diagnostics.map(\.kind) }

/// Summarizing while reading (`MIDIFileSummary.read`) must give what summarizing the file that
/// `MIDIFile.read` returns gives: the same summary, diagnostics and RMID flag, or the same error.
/// Returns the summary read (nil when the bytes were rejected).
@discardableResult
func expectSummaryReadMatches(
    _ bytes: [UInt8], strict: Bool = false, threads: Int = 1, _ label: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) -> MIDIFileSummary? {
    let whole: Result<MIDIFile.ReadResult, MIDIFileError>
    let streamed: Result<MIDIFileSummary.ReadResult, MIDIFileError>
    do throws(MIDIFileError) {
        whole = .success(try MIDIFile.read(bytes: bytes, strict: strict, threads: threads))
    } catch {
        whole = .failure(error)
    }
    do throws(MIDIFileError) {
        streamed = .success(try MIDIFileSummary.read(bytes: bytes, strict: strict, threads: threads))
    } catch {
        streamed = .failure(error)
    }
    switch (whole, streamed) {
    case (.success(let file), .success(let summary)):
        #expect(summary.summary == MIDIFileSummary(file.file), "\(label)", sourceLocation: sourceLocation)
        #expect(summary.diagnostics == file.diagnostics, "\(label)", sourceLocation: sourceLocation)
        #expect(summary.isRMID == file.isRMID, "\(label)", sourceLocation: sourceLocation)
        return summary.summary
    case (.failure(let one), .failure(let two)):
        #expect(one.description == two.description, "\(label)", sourceLocation: sourceLocation)
    default:
        Issue.record("\(label): read \(whole), summary read \(streamed)", sourceLocation: sourceLocation)
    }
    return nil
}
