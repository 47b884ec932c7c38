import ChimeCore
import Foundation
import Testing

/// User info holds property-list values; content stored by earlier versions (strings only) reads as it was.
@Suite struct UserInfoValueTests {
    static let every: [String: UserInfoValue] = [
        "text": "fern", "count": 42, "ratio": 0.25, "done": true,
        "when": .date(Date(timeIntervalSince1970: 1_764_000_000.5)), "blob": .data(Data([0, 1, 254, 255])),
        "list": .array(["a", 1, false]), "nested": .dictionary(["room": "kitchen", "floors": .array([1, 2])]),
    ]

    @Test func contentStoredByAnEarlierVersionStillReads() throws {
        // As 0.3.0 wrote it: user info as a JSON object of strings.
        let old = #"{"summary":"Pizza","userInfo":{"table":"7","note":"extra cheese"}}"#
        let content = try JSONDecoder().decode(NotificationContent.self, from: Data(old.utf8))
        #expect(content.userInfo == ["table": .string("7"), "note": .string("extra cheese")])
        // And is written the same way again: strings stay plain JSON strings.
        let written = String(decoding: try JSONEncoder().encode(content), as: UTF8.self)
        #expect(written.contains(#""table":"7""#))
    }

    @Test func everyKindOfValueSurvivesStorage() throws {
        var content = NotificationContent(summary: "All kinds")
        content.userInfo = Self.every
        let data = try JSONEncoder().encode(content)
        let read = try JSONDecoder().decode(NotificationContent.self, from: data)
        #expect(read.userInfo == Self.every)
        #expect(try JSONDecoder().decode(UserInfoValue.self, from: Data(#"{"integer":-5}"#.utf8)) == -5)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(UserInfoValue.self, from: Data(#"{"integer":1,"bool":true}"#.utf8))
        }
    }

    @Test func sizesCountStringsAndDataAndEightPerOtherValue() {
        #expect(UserInfoValue.string("héllo").byteSize == 6)
        #expect(UserInfoValue.data(Data(count: 10)).byteSize == 10)
        #expect(UserInfoValue.integer(1).byteSize == 8 && UserInfoValue.date(Date()).byteSize == 8)
        #expect(UserInfoValue.array(["ab", 1]).byteSize == 10)
        #expect(UserInfoValue.dictionary(["key": true]).byteSize == 11)
        var content = NotificationContent(summary: "s")
        content.userInfo = ["k": .array([1, "xyz"])]
        #expect(content.byteSize == 1 + 1 + 8 + 3)
    }

    @Test func validationRefusesDeepNestingNonFiniteNumbersAndTooManyBytes() {
        var deep: UserInfoValue = "leaf"
        for _ in 0..<9 { deep = .array([deep]) }
        #expect(deep.depth == 9)
        var content = NotificationContent(summary: "s")
        content.userInfo = ["deep": deep]
        #expect(throws: ContentError.self) { try content.validate() }
        content.userInfo = ["ok": .array([.array([.array([.array([.array([.array([.array([.array(["x"])])])])])])])])]
        #expect(throws: Never.self) { try content.validate() }

        content.userInfo = ["n": .dictionary(["ratio": .double(.nan)])]
        #expect {
            try content.validate()
        } throws: { error in
            (error as? ContentError)?.message.contains("n.ratio") == true
        }
        content.userInfo = ["big": .data(Data(count: NotificationContent.maximumUserInfoBytes))]
        #expect(throws: ContentError.self) { try content.validate() }
    }
}
