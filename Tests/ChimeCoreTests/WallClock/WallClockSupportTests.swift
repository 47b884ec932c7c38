import Foundation
import Testing

/// Runs an oracle program once with all cases on stdin and returns its stdout lines.
enum WallClockOracle {
    /// Debian's python3 (with zoneinfo and python-dateutil), not the pyenv one on PATH.
    static let python = "/usr/bin/python3"

    /// Path of a file next to the calling test file.
    static func sibling(_ name: String, of file: String = #filePath) -> String {
        URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(name).path
    }

    static func run(_ executable: String, _ arguments: [String], input: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        // Write from another thread so a large output cannot deadlock against a full input pipe.
        let writer = stdin.fileHandleForWriting
        let data = Data(input.utf8)
        let thread = Thread {
            writer.write(data)
            try? writer.close()
        }
        thread.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init).filter { !$0.isEmpty }
    }
}

@Test func wallClockSplitMixIsDeterministic() {
    var a = SplitMix64(seed: 42)
    var b = SplitMix64(seed: 42)
    #expect((0..<5).map { _ in a.next() } == (0..<5).map { _ in b.next() })
}
