import CVorbisFile

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One sample's points in memory, with its loop made safe to play as FluidSynth makes it at load.
public struct SampleData: Sendable {
    /// The points: the sample's own, then (SoundFont 2) up to 46 points of the padding the
    /// specification asks to follow every sample, which a loop may reach.
    public let points: [Int16]
    /// The number of the sample's own points: the last one is `count - 1`.
    public let count: Int
    /// The loop's first point, from the sample's start.
    public let loopStart: Int
    /// One past the loop's last point, from the sample's start.
    public let loopEnd: Int
    /// The rate the sample was recorded at, in hertz.
    public let sampleRate: Int

    /// A sample from its points; the loop is sanitized as FluidSynth does at load: a reversed
    /// loop is turned round, a start outside the points moves to the sample's start, an end
    /// outside them to one past its last point; a start then past the end moves to the end (an
    /// empty loop, which plays unlooped).
    public init(points: [Int16], count: Int, loopStart: Int, loopEnd: Int, sampleRate: Int) {
        self.points = points
        self.count = count
        var start = loopStart
        var end = loopEnd
        if start > end { swap(&start, &end) }
        if start < 0 || start >= points.count { start = 0 }
        if end < 0 || end > points.count { end = count }
        // A start in the padding with an end moved back to the sample's end: the voice clamps the
        // loop to the sample, an empty loop, which plays unlooped (FluidSynth's voice check).
        if start > end { start = end }
        self.loopStart = start
        self.loopEnd = end
        self.sampleRate = sampleRate
    }
}

extension SoundFontBank {
    /// The points of sample header `index`, read (and for SoundFont 3, decoded) from the file.
    ///
    /// - Throws: ``SoundFontReadError`` when the sample lies outside the sample data, is a ROM
    ///   sample, or its Ogg Vorbis stream does not decode.
    public func readSample(_ index: Int) throws(SoundFontReadError) -> SampleData {
        let header = samples[index]
        let file = try RIFFFile(path: path)
        defer { file.close() }
        guard !header.isROM else { throw file.failure("sample '\(header.name)' lives in a ROM the file lacks") }
        if majorVersion == 3 && header.isCompressed {
            return try decodeVorbis(header, file: file)
        }
        let available = sampleData.size / 2
        guard header.start <= header.end, header.end <= available else {
            throw file.failure(
                "sample '\(header.name)' (points \(header.start)..<\(header.end)) lies outside the sample data "
                    + "(\(available) points)")
        }
        let padded = min(header.end + 46, available)
        let bytes = try file.read((padded - header.start) * 2, at: sampleData.offset + header.start * 2)
        let points = (0..<(padded - header.start)).map { Int16(bitPattern: bytes.u16(at: $0 * 2)) }
        return SampleData(
            points: points, count: header.end - header.start, loopStart: header.loopStart - header.start,
            loopEnd: header.loopEnd - header.start, sampleRate: header.sampleRate)
    }

    private func decodeVorbis(_ header: SampleHeader, file: RIFFFile) throws(SoundFontReadError) -> SampleData {
        guard header.start < header.end, header.end <= sampleData.size else {
            throw file.failure(
                "sample '\(header.name)' (bytes \(header.start)..<\(header.end)) lies outside the sample data "
                    + "(\(sampleData.size) bytes)")
        }
        let bytes = try file.read(header.end - header.start, at: sampleData.offset + header.start)
        var decoded: UnsafeMutablePointer<Int16>?
        var frames = 0
        var rate = 0
        let status = bytes.withUnsafeBytes { pianola_vorbis_decode($0.baseAddress, $0.count, &decoded, &frames, &rate) }
        guard status == 0, let decoded else {
            throw file.failure("sample '\(header.name)': its Ogg Vorbis stream does not decode (error \(status))")
        }
        defer { free(decoded) }
        let points = Array(UnsafeBufferPointer(start: decoded, count: frames))
        return SampleData(
            points: points, count: frames, loopStart: header.loopStart, loopEnd: header.loopEnd,
            sampleRate: header.sampleRate)
    }
}
