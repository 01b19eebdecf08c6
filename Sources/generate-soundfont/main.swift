// Writes Pianola's General MIDI SoundFont. Usage: generate-soundfont [OUTPUT.sf2]
// (default: SoundFonts/PianolaGM.sf2 in the current directory). The output is deterministic.
import SoundFontGenerator

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func fail(_ message: String) {
    let line = Array("generate-soundfont: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--help" || arguments.first == "-h" {
    print("usage: generate-soundfont [OUTPUT.sf2]   (default: SoundFonts/\(GeneralMIDISoundFont.fileName))")
    exit(0)
}
let path = arguments.first ?? "SoundFonts/\(GeneralMIDISoundFont.fileName)"
let bytes = GeneralMIDISoundFont.makeFile()
let temporary = path + ".partial"
guard let file = fopen(temporary, "wb") else {
    fail("cannot write \(temporary): \(String(cString: strerror(errno)))")
    exit(1)
}
let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
guard written == bytes.count, fclose(file) == 0, rename(temporary, path) == 0 else {
    fail("failed writing \(path): \(String(cString: strerror(errno)))")
    unlink(temporary)
    exit(1)
}
print("wrote \(path) (\(bytes.count) bytes)")
