#if canImport(Glibc)
    import Glibc
#endif

/// Non-blocking key input from standard input: a terminal in raw mode (restored on exit), or, for
/// `--interactive`, a pipe or file whose bytes are taken as key presses one at a time (as
/// `arecord -i` reads them), so that a script can pause a recording.
final class KeyReader {
    enum Key { case space, left, right, up, down, next, previous, loop, clear, quit }
    private var original = termios()
    private let terminal: Bool
    private let originalFlags: Int32
    /// Bytes read but not yet taken as keys (a pipe may deliver several presses at once).
    private var pending: [UInt8] = []

    /// Keys from standard input: a terminal is put in raw mode; anything else is read as it is.
    init() {
        terminal = isatty(0) == 1
        originalFlags = fcntl(0, F_GETFL)
        if terminal {
            tcgetattr(0, &original)
            var raw = original
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
                bytes[Int(VMIN)] = 0
                bytes[Int(VTIME)] = 0
            }
            tcsetattr(0, TCSANOW, &raw)
        } else if originalFlags >= 0 {
            _ = fcntl(0, F_SETFL, originalFlags | O_NONBLOCK)
        }
    }

    func restore() {
        if terminal {
            tcsetattr(0, TCSANOW, &original)
        } else if originalFlags >= 0 {
            _ = fcntl(0, F_SETFL, originalFlags)
        }
    }

    /// The next key pressed, or nil when none is waiting (or standard input has ended).
    func read() -> Key? {
        if pending.isEmpty {
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = Glibc.read(0, &bytes, bytes.count)
            guard count > 0 else { return nil }
            pending = Array(bytes[..<count])
        }
        if pending.count >= 3 && pending[0] == 0x1B && pending[1] == 0x5B {
            let code = pending[2]
            pending.removeFirst(3)
            switch code {
            case 0x41: return .up
            case 0x42: return .down
            case 0x43: return .right
            case 0x44: return .left
            default: return nil
            }
        }
        let byte = pending.removeFirst()
        switch byte {
        case 0x20: return .space
        case UInt8(ascii: "n"): return .next
        case UInt8(ascii: "p"): return .previous
        case UInt8(ascii: "l"): return .loop
        case UInt8(ascii: "c"): return .clear
        case UInt8(ascii: "q"): return .quit
        default: return nil
        }
    }
}
