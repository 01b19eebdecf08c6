import AudioGraph
import MIDICore

// The render thread's half of the player: commands taken from the mailbox, then the quantum's
// events placed at their frames (or by the timing policy's scheduler). Nothing here allocates,
// locks (the mailbox is only try-locked) or blocks.
extension MusicPlayer {
    public func willRender(frameCount: Int, at time: AudioTime) {
        quantumStart = time.sampleTime
        if time.sampleRate != sampleRate && time.sampleRate > 0 {
            // The render's rate (the first quantum's, or a new one): the position stays put.
            let now = secondsAt(sample: time.sampleTime)
            sampleRate = time.sampleRate
            anchorSample = time.sampleTime
            anchorSeconds = now
        }
        takeMail(at: time)
        if following.load(ordering: .relaxed) {
            followTransport(frameCount: frameCount, at: time)
            return
        }
        guard renderPlaying else { return }
        if let scheduler {
            let quantum = scheduler.schedule(frameCount: frameCount, at: time, through: playhead)
            if let end = quantum.endFrameOffset { finish(atFrameOffset: end) }
            positionBits.store(min(quantum.positionSeconds, sequence.durationSeconds).bitPattern, ordering: .relaxed)
            return
        }
        if needsAnchor {
            anchorSample = time.sampleTime
            needsAnchor = false
        }
        var start = time.sampleTime
        let end = time.sampleTime + Int64(frameCount)
        while start < end {
            // Where the current pass ends: the quantum's end or the loop point.
            var passEnd = end
            var loopPoint: Int64? = nil
            if let loop, loopsRemaining != 0, loop.endSeconds > loop.startSeconds {
                let loopSample = sample(forSeconds: loop.endSeconds)
                if loopSample < end {
                    loopPoint = max(loopSample, start)
                    passEnd = loopPoint!
                }
            }
            deliver(until: passEnd, quantumStart: time.sampleTime)
            if let loopPoint, let loop {
                // Back to the start as a seek there: notes released, external instruments reset,
                // then every channel's state at the loop start (programs, controllers, parameters).
                let offset = Int(loopPoint - time.sampleTime)
                playhead.releaseAllNotes(atFrameOffset: offset)
                anchorSample = loopPoint
                anchorSeconds = loop.startSeconds
                if let plan = loop.plan {
                    playhead.position(at: plan.cursors)
                    playhead.interrupt(.relocated, atFrameOffset: offset)
                    for index in 0..<plan.chase.count {
                        let (destination, message) = plan.chase[index]
                        playhead.sendUnpaired(message, to: destination, atFrameOffset: offset)
                    }
                } else {
                    playhead.position(atSeconds: loop.startSeconds)
                }
                if loopsRemaining > 0 { loopsRemaining -= 1 }
                loopsDone.add(1, ordering: .relaxed)
                start = loopPoint
                if loopPoint == end { break }
                continue
            }
            start = passEnd
        }
        let position = secondsAt(sample: end)
        positionBits.store(min(position, sequence.durationSeconds).bitPattern, ordering: .relaxed)
        if position >= sequence.durationSeconds && playhead.isAtEnd { finish(atFrameOffset: frameCount - 1) }
    }

    /// The end of the song: its notes released, the transport stopped.
    func finish(atFrameOffset offset: Int) {
        renderPlaying = false
        playhead.releaseAllNotes(atFrameOffset: offset)
        playhead.interrupt(.stopped, atFrameOffset: offset)
        playingFlag.store(false, ordering: .relaxed)
        finishedSampleTime.store(quantumStart + Int64(offset), ordering: .relaxed)
        finishedFlag.store(true, ordering: .relaxed)
    }

    func secondsAt(sample: Int64) -> Double {
        anchorSeconds + Double(sample - anchorSample) / sampleRate * renderRate
    }

    private func sample(forSeconds seconds: Double) -> Int64 {
        anchorSample + Int64(((seconds - anchorSeconds) * sampleRate / renderRate).rounded())
    }

    /// Hands every event due before `limit` to its destination, merged across tracks in time
    /// order (note-offs first at equal times, as the tracks are sorted).
    func deliver(until limit: Int64, quantumStart: Int64) {
        let tracks = sequence.tracks
        while true {
            var best = -1
            var bestSample = Int64.max
            var bestClass = Int.max
            for track in 0..<tracks.count {
                let cursor = playhead.cursor(ofTrack: track)
                let events = tracks[track].events
                guard cursor < events.count else { continue }
                let eventSample = sample(forSeconds: tracks[track].eventSeconds[cursor])
                guard eventSample < limit else { continue }
                let order = MusicSequence.orderClass(events[cursor].message)
                if eventSample < bestSample || (eventSample == bestSample && order < bestClass) {
                    best = track
                    bestSample = eventSample
                    bestClass = order
                }
            }
            guard best >= 0 else { return }
            let message = tracks[best].events[playhead.cursor(ofTrack: best)].message
            playhead.deliver(message, fromTrack: best, atFrameOffset: Int(max(0, bestSample - quantumStart)))
        }
    }

    /// Applies transport commands sent since the last quantum (never waits for the lock).
    private func takeMail(at time: AudioTime) {
        guard
            let mail = mailbox.withLockIfAvailable({ box -> Mailbox in
                var taken = box
                if box.consumedSeek == nil, let held = heldSeek {
                    box.consumedSeek = held  // handed back to be freed off the render thread
                    heldSeek = nil
                }
                if box.consumedLoop == nil, let retired = retiredLoopPlan {
                    box.consumedLoop = retired
                    retiredLoopPlan = nil
                }
                if box.consumedTrackEnabled == nil, let held = heldTrackEnabled {
                    box.consumedTrackEnabled = held
                    heldTrackEnabled = nil
                }
                taken.consumedSeek = nil
                taken.consumedLoop = nil
                taken.consumedTrackEnabled = nil
                box.seek = nil
                box.playing = nil
                box.rate = nil
                box.transpose = nil
                box.loop = nil
                box.trackEnabled = nil
                box.releaseNotes = false
                return taken
            })
        else { return }
        if mail.releaseNotes || mail.seek != nil || mail.playing == false {
            playhead.releaseAllNotes(atFrameOffset: 0)
            // (A seek while following a transport moves nothing: the transport's place is kept.)
            let moves = mail.seek != nil && !following.load(ordering: .relaxed)
            playhead.interrupt(moves ? .relocated : .stopped, atFrameOffset: 0)
        }
        if let enabled = mail.trackEnabled {
            for index in 0..<min(enabled.count, playhead.trackEnabled.count) {
                playhead.trackEnabled[index] = enabled[index]
            }
            heldTrackEnabled = enabled
        }
        if let transpose = mail.transpose { playhead.transpose = transpose }
        if let loop = mail.loop {
            if let plan = self.loop?.plan { retiredLoopPlan = plan }
            self.loop = loop.endSeconds > loop.startSeconds ? loop : nil
            loopsRemaining = loop.count
        }
        // A player following a transport takes its place and pace from the transport alone.
        // (A seek's plan is still held, to be freed off this thread.)
        if following.load(ordering: .relaxed) {
            if let seek = mail.seek { heldSeek = seek }
            return
        }
        if let rate = mail.rate {
            // Re-anchor so that the position is continuous across the change.
            let now = secondsAt(sample: time.sampleTime)
            anchorSample = time.sampleTime
            anchorSeconds = now
            renderRate = rate
        }
        if let seek = mail.seek {
            playhead.position(at: seek.cursors)
            for index in 0..<seek.chase.count {
                let (destination, message) = seek.chase[index]
                playhead.sendUnpaired(message, to: destination, atFrameOffset: 0)
            }
            anchorSample = time.sampleTime
            anchorSeconds = seek.seconds
            needsAnchor = false
            heldSeek = seek
        }
        if let playing = mail.playing {
            if playing && !renderPlaying {
                anchorSample = time.sampleTime
                needsAnchor = false
            }
            renderPlaying = playing
        }
    }
}
