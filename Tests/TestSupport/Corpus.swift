#if canImport(Glibc)
    import Glibc
#endif

/// The shared corpus (`../shared/corpus` beside the checkout, or `$PIANOLA_CORPUS`).
public let corpusRoot: String = {
    if let path = getenv("PIANOLA_CORPUS") { return String(cString: path) }
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return String(path[..<path.lastIndex(of: "/")!]) + "/shared/corpus"
}()

/// Whether `path` is a directory.
public func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
}

/// Files under `directory` (recursively) whose names end in one of `extensions`, sorted.
public func corpusFiles(_ directory: String, extensions: [String] = [".mid", ".rmi", ".kar"]) -> [String] {
    guard let handle = opendir(directory) else { return [] }
    defer { closedir(handle) }
    var files: [String] = []
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) {
            String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        if name == "." || name == ".." { continue }
        let path = directory + "/" + name
        if isDirectory(path) {
            files += corpusFiles(path, extensions: extensions)
        } else if extensions.contains(where: { name.lowercased().hasSuffix($0) }) {
            files.append(path)
        }
    }
    return files.sorted()
}
