import Foundation
import Testing

@testable import ChimeCore

/// Runs python-dateutil (Debian's, at /usr/bin/python3) on a batch of cases in one process.
enum RRuleOracle {
    struct Case: Codable {
        var id: Int
        var text: String
        var dtstart: String?
        var after: String?
        var inc: Bool
        var n: Int
        /// Stop dateutil's scan after this year (see oracle_rrule.py); nil for no limit.
        var horizon: Int? = nil
    }

    struct Answer: Codable {
        var id: Int
        var error: String?
        var occ: [String]
        var timeout: Bool
        var horizon: Bool
        var single: Bool
    }

    static let python = "/usr/bin/python3"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("oracle_rrule.py").path

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: python) }

    /// Sends every case to one python process; returns the answers by id.
    static func run(_ cases: [Case], secondsPerCase: Double = 0.5) throws -> [Int: Answer] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, String(secondsPerCase)]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let payload = try JSONEncoder().encode(cases)
        // Write on another thread: python only answers after reading everything, but a large batch could
        // still fill the pipe buffer while we are not yet reading.
        let writer = Thread {
            input.fileHandleForWriting.write(payload)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let answers = try JSONDecoder().decode([Answer].self, from: data)
        return Dictionary(uniqueKeysWithValues: answers.map { ($0.id, $0) })
    }

    /// `YYYY-MM-DDTHH:MM:SS`, the format the oracle speaks.
    static func iso(_ t: LocalDateTime) -> String { t.description }
}

@Suite struct RRuleOracleTests {
    @Test func oracleRunsAndAgreesOnASimpleRule() throws {
        try #require(RRuleOracle.isAvailable)
        let text = "DTSTART:20200131T090000\nRRULE:FREQ=MONTHLY;COUNT=4"
        let answers = try RRuleOracle.run([.init(id: 1, text: text, dtstart: nil, after: nil, inc: false, n: 10)])
        let expected = ["2020-01-31T09:00:00", "2020-03-31T09:00:00", "2020-05-31T09:00:00", "2020-07-31T09:00:00"]
        #expect(answers[1]?.occ == expected)
        let set = try RRuleSet.parse(text)
        #expect(set.occurrences(limit: 10).map(\.description) == expected)
    }
}
