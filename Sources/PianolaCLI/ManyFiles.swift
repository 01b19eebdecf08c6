import ArgumentParser
import FoundationEssentials

/// A command whose file arguments may number in the thousands (`info`, `render`, `play`).
///
/// The argument parser keeps an array argument's values by copying the array for each one, which
/// is quadratic in their number (8 000 files took 2 s). So `main` gives the parser a command's
/// options and its first file, and sets the files itself (`ManyFiles.parse`).
protocol TakesManyFiles: ParsableCommand {
    /// The command's file arguments, in the order given.
    var fileArguments: [String] { get set }
}

extension InfoCommand: TakesManyFiles {
    var fileArguments: [String] {
        get { files }
        set { files = newValue }
    }
}

extension RenderCommand: TakesManyFiles {
    var fileArguments: [String] {
        get { inputs }
        set { inputs = newValue }
    }
}

extension PlayCommand: TakesManyFiles {
    var fileArguments: [String] {
        get { files }
        set { files = newValue }
    }
}

enum ManyFiles {
    /// The commands that take many files, by name.
    static let commands: [String: any TakesManyFiles.Type] = [
        "info": InfoCommand.self, "render": RenderCommand.self, "play": PlayCommand.self,
    ]

    /// Parses `arguments` (the command's name first) in time linear in their number.
    static func parse(_ arguments: [String], as type: any TakesManyFiles.Type) throws -> any ParsableCommand {
        let (options, files) = separateFiles(Array(arguments.dropFirst()), taking: optionsTakingValues(of: type))
        let parsed = try PianolaCommand.parseAsRoot(
            [arguments[0]] + options + (files.isEmpty ? [] : ["--", files[0]]))
        guard var command = parsed as? any TakesManyFiles, !files.isEmpty else { return parsed }
        command.fileArguments = files
        // What the parser checked with one file, checked again with them all.
        try command.validate()
        return command
    }

    /// The command's options that take a value ("--jobs", "-o"), from the parser's own
    /// description of them, so that no list is kept by hand.
    static func optionsTakingValues(of type: any ParsableCommand.Type) -> Set<String> {
        struct Dump: Decodable {
            struct Command: Decodable { var arguments: [Argument]? }
            struct Argument: Decodable {
                var kind: String
                var names: [Name]?
            }
            struct Name: Decodable {
                var kind: String
                var name: String
            }
            var command: Command
        }
        guard let dump = try? JSONDecoder().decode(Dump.self, from: Data(type._dumpHelp().utf8)) else { return [] }
        var taking: Set<String> = []
        for argument in dump.command.arguments ?? [] where argument.kind == "option" {
            for name in argument.names ?? [] { taking.insert((name.kind == "long" ? "--" : "-") + name.name) }
        }
        return taking
    }

    /// Splits a command's arguments (those after its name) into its options with their values and
    /// its files, as the argument parser would: an option that takes a value takes the next
    /// argument whatever it looks like, and everything after `--` is a file.
    static func separateFiles(
        _ arguments: [String], taking optionsTakingValues: Set<String>
    ) -> (options: [String], files: [String]) {
        var options: [String] = []
        var files: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                files += arguments[index...]
                break
            }
            guard argument.hasPrefix("-") && argument != "-" else {
                files.append(argument)
                continue
            }
            options.append(argument)
            if optionsTakingValues.contains(argument) && index < arguments.count {
                options.append(arguments[index])
                index += 1
            }
        }
        return (options, files)
    }
}
