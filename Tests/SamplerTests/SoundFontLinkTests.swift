import Sampler
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("SoundFont links: the file a discovered font's path leads to")
struct SoundFontLinkTests {
    @Test("a chain of links (as Debian's alternatives make) leads to the file; a file or a dangling link has none")
    func linkTargets() throws {
        try withScratchTree(["fonts/real.sf2", "other.sf2"]) { root in
            let real = root + "/fonts/real.sf2"
            // default-GM.sf2 → alternatives/default-GM.sf2 → ../fonts/real.sf2 (relative, as dpkg writes them).
            mkdir(root + "/alternatives", 0o755)
            #expect(symlink("../fonts/real.sf2", root + "/alternatives/default-GM.sf2") == 0)
            #expect(symlink(root + "/alternatives/default-GM.sf2", root + "/default-GM.sf2") == 0)
            #expect(symlink(root + "/missing.sf2", root + "/dangling.sf2") == 0)
            let resolved = try #require(realpath(real, nil))
            defer { free(resolved) }
            let file = String(cString: resolved)

            #expect(SoundFontDiscovery.linkTarget(of: root + "/default-GM.sf2") == file)
            #expect(SoundFontDiscovery.linkTarget(of: real) == nil)
            #expect(SoundFontDiscovery.linkTarget(of: root + "/dangling.sf2") == nil)
            #expect(SoundFontDiscovery.linkTarget(of: root + "/nothing-here.sf2") == nil)

            // The system's default found through the link: its file, and the link it came from.
            let discovery = SoundFontDiscovery(
                environment: [:], systemFiles: [root + "/default-GM.sf2"], systemDirectories: [],
                bundledCandidates: [])
            let found = try discovery.resolve()
            #expect(found.path == root + "/default-GM.sf2" && found.source == .system)
            #expect(found.resolvedPath == file && found.linkPath == root + "/default-GM.sf2")
            let plain = try discovery.resolve(explicit: root + "/other.sf2")
            #expect(plain.resolvedPath == root + "/other.sf2" && plain.linkPath == nil)
        }
    }
}
