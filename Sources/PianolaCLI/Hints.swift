/// What to try next, appended to errors a user can get around.
enum Hints {
    static let devices = "`pianola devices` lists the sound devices (choose one with --device)"
}
