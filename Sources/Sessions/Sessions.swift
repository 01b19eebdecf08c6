// Sessions: what a user's job wires together from the building blocks, for the `pianola` tool,
// the examples and any app. Offline rendering (`OfflineRenderer`: one song, its stems, loudness
// normalization, a song's channels split over threads), the batch runner (`BatchRunner`: many
// renders on one worker pool, from folders or a manifest, resumable through a ledger), playback
// on a device (`PlaybackSession`) and live MIDI through a SoundFont (`LiveSession`).
