import SMF

extension BatchRunner {
    /// The song of `read` without the silences only its damaged delta times made (a render
    /// would otherwise write hours of nothing), each cut reported.
    func withoutDefectGaps(_ read: MIDIFile.ReadResult, job: BatchJob) -> MIDIFile {
        guard read.diagnostics.contains(where: { $0.kind == .hugeDeltaTime }) else { return read.file }
        let (file, cuts) = read.file.cuttingDefectGaps()
        guard !cuts.isEmpty else { return read.file }
        let tempo = TempoMap(file: read.file)
        post(
            .defectGapsCut(
                job, cuts.map { ($0, tempo.seconds(forTick: $0.tick + $0.ticks) - tempo.seconds(forTick: $0.tick)) }))
        return file
    }
}
