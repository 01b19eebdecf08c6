// Parse-throughput benchmark of Pianola's SMF reader (driven by Benchmarks/parse_benchmark.py,
// which runs symusic and mido on the same bytes in the same run).
//
//   parse-benchmark generate OUT.mid [--notes N]   write a large, deterministic format-1 file
//   parse-benchmark run [--repeat R] FILE...        parse all files R times, print JSON
import MIDICore
import SMF

#if canImport(Glibc)
    import Glibc
#endif

func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Resident set size in kB, from /proc/self/statm.
func residentKilobytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    guard
        withUnsafeMutablePointer(
            to: &size, { s in withUnsafeMutablePointer(to: &resident) { r in fscanfTwo(file, s, r) } })
    else { return 0 }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
}

func fscanfTwo(
    _ file: UnsafeMutablePointer<FILE>, _ a: UnsafeMutablePointer<Int>, _ b: UnsafeMutablePointer<Int>
) -> Bool {
    var buffer = [CChar](repeating: 0, count: 256)
    guard fgets(&buffer, 256, file) != nil else { return false }
    let fields = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self).split(
        separator: " ")
    guard fields.count >= 2, let first = Int(fields[0]), let second = Int(fields[1]) else { return false }
    a.pointee = first
    b.pointee = second
    return true
}

/// A dense 16-channel piece: chords, runs, controllers and pitch bends, tempo changes.
func generate(notes target: Int) -> MIDIFile {
    var state: UInt64 = 0x5EED
    func random(_ range: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(range))
    }
    var conductor = MIDIFile.Track(events: [MIDIFile.Event(tick: 0, .meta(.text(.trackName, Array("Conductor".utf8))))])
    var tracks: [MIDIFile.Track] = []
    let perTrack = target / 16
    var longest = 0
    for channel in 0..<16 {
        var events: [(Int, Int, MIDIFile.Payload)] = []  // tick, order (offs first), payload
        events.append((0, 0, .meta(.text(.trackName, Array("Part \(channel + 1)".utf8)))))
        events.append((0, 1, .channel(.programChange(channel: UInt8(channel), program: UInt8(random(128))))))
        var tick = 0
        for index in 0..<perTrack {
            tick += [0, 60, 120, 240][random(4)]
            let key = UInt8(36 + random(60))
            let length = 30 + random(400)
            events.append(
                (tick, 2, .channel(.noteOn(channel: UInt8(channel), note: key, velocity: UInt8(40 + random(87))))))
            events.append((tick + length, 1, .channel(.noteOff(channel: UInt8(channel), note: key, velocity: 64))))
            if index % 8 == 0 {
                events.append(
                    (
                        tick, 1,
                        .channel(
                            .controlChange(
                                channel: UInt8(channel), controller: [1, 7, 10, 11, 64][random(5)],
                                value: UInt8(random(128))))
                    ))
            }
            if index % 16 == 0 {
                events.append((tick, 1, .channel(.pitchBend(channel: UInt8(channel), value: UInt16(random(16384))))))
            }
        }
        events.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        let end = (events.last?.0 ?? 0) + 480
        longest = max(longest, end)
        tracks.append(
            MIDIFile.Track(
                events: events.map { MIDIFile.Event(tick: $0.0, $0.2) } + [
                    MIDIFile.Event(tick: end, .meta(.endOfTrack))
                ]))
    }
    var tick = 0
    while tick < longest {
        conductor.events.append(
            MIDIFile.Event(tick: tick, .meta(.tempo(microsecondsPerQuarterNote: 400_000 + random(300_000)))))
        tick += 1920 * 4
    }
    conductor.events.append(MIDIFile.Event(tick: longest, .meta(.endOfTrack)))
    return MIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480), tracks: [conductor] + tracks)
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    print("usage: parse-benchmark generate OUT.mid [--notes N] | run [--repeat R] [--threads T] [--summary] FILE...")
    exit(2)
}
arguments.removeFirst()
@MainActor func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count,
        let number = Int(arguments[index + 1])
    else { return value }
    arguments.removeSubrange(index...index + 1)
    return number
}

switch command {
case "generate":
    let notes = option("--notes", default: 400_000)
    let file = generate(notes: notes)
    try file.write(to: arguments[0])
    print("wrote \(arguments[0]): \(file.noteCount) notes, \(file.tracks.reduce(0) { $0 + $1.events.count }) events")
case "run":
    let repeats = option("--repeat", default: 5)
    let threads = option("--threads", default: 1)
    // --summary: time `MIDIFileSummary.read` (what `pianola info` does) instead of `MIDIFile.read`.
    let summaryOnly = arguments.contains("--summary")
    arguments.removeAll { $0 == "--summary" }
    let inputs = try arguments.map { try MIDIFile.readBytes(path: $0) }
    let totalBytes = inputs.reduce(0) { $0 + $1.count }
    var best = Double.infinity
    var events = 0
    var notes = 0
    var eventArrayBytes = 0
    let before = residentKilobytes()
    var peakDelta = 0
    for _ in 0..<repeats {
        let start = now()
        var parsed: [MIDIFile] = []
        parsed.reserveCapacity(inputs.count)
        if summaryOnly {
            for bytes in inputs { notes += try MIDIFileSummary.read(bytes: bytes, threads: threads).summary.noteCount }
            best = min(best, now() - start)
            continue
        }
        for bytes in inputs { parsed.append(try MIDIFile.read(bytes: bytes, threads: threads).file) }
        best = min(best, now() - start)
        peakDelta = max(peakDelta, residentKilobytes() - before)
        events = parsed.reduce(0) { $0 + $1.tracks.reduce(0) { $0 + $1.events.count } }
        notes = parsed.reduce(0) { $0 + $1.noteCount }
        eventArrayBytes = events * MemoryLayout<MIDIFile.Event>.stride
    }
    print(
        """
        {"files": \(inputs.count), "bytes": \(totalBytes), "events": \(events), "notes": \(notes), \
        "seconds": \(best), "eventArrayBytes": \(eventArrayBytes), "residentDeltaBytes": \(peakDelta * 1024), \
        "eventStride": \(MemoryLayout<MIDIFile.Event>.stride)}
        """)
default:
    print("unknown command \(command)")
    exit(2)
}
