#if canImport(Glibc)
    import Glibc
#endif

/// Raw, non-blocking keyboard input on a terminal (restored on exit).
final class KeyReader {
    enum Key { case space, left, right, up, down, next, previous, loop, clear, quit }
    private var original = termios()

    init() {
        tcgetattr(0, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 0
            bytes[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSANOW, &raw)
    }

    func restore() { tcsetattr(0, TCSANOW, &original) }

    func read() -> Key? {
        var bytes = [UInt8](repeating: 0, count: 8)
        let count = Glibc.read(0, &bytes, 8)
        guard count > 0 else { return nil }
        if bytes[0] == 0x1B && count >= 3 && bytes[1] == 0x5B {
            switch bytes[2] {
            case 0x41: return .up
            case 0x42: return .down
            case 0x43: return .right
            case 0x44: return .left
            default: return nil
            }
        }
        switch bytes[0] {
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
