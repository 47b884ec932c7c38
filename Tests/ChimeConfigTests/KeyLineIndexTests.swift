import Testing

@testable import ChimeConfig

@Suite struct KeyLineIndexTests {
    @Test func keysHeadersAndElementsAreFoundPastStringsArraysAndComments() {
        let index = KeyLineIndex(
            """
            title = "a [not] header"        # 1
            text = \"\"\"
            id = "inside a string"
            [[entry]]
            \"\"\"
            [[entry]]                       # 6
            id = "one"
            [entry.pool]                    # 8
            items = [                       # 9
                "first, with a comma",      # 10
                # a comment ] with a bracket
                { body = "x", summary = "y" },  # 12
            ]
            [[entry]]                       # 14
            'quoted key' = 1
            a.b = { c = [1, 2] }            # 16
            literal = '''
            id = 2
            '''
            id = "two"                      # 20
            """)
        #expect(index.line(of: [.key("title")]) == 1)
        #expect(index.line(of: [.key("text")]) == 2)
        #expect(index.line(of: [.key("id")]) == nil)
        #expect(index.line(of: [.key("entry"), .index(0)]) == 6)
        #expect(index.line(of: [.key("entry"), .index(0), .key("id")]) == 7)
        #expect(index.line(of: [.key("entry"), .index(0), .key("pool")]) == 8)
        #expect(index.line(of: [.key("entry"), .index(0), .key("pool"), .key("items")]) == 9)
        #expect(index.line(of: [.key("entry"), .index(0), .key("pool"), .key("items"), .index(0)]) == 10)
        #expect(index.line(of: [.key("entry"), .index(0), .key("pool"), .key("items"), .index(1)]) == 12)
        #expect(
            index.line(of: [.key("entry"), .index(0), .key("pool"), .key("items"), .index(1), .key("summary")]) == 12)
        #expect(index.line(of: [.key("entry"), .index(1)]) == 14)
        #expect(index.line(of: [.key("entry"), .index(1), .key("quoted key")]) == 15)
        #expect(index.line(of: [.key("entry"), .index(1), .key("a"), .key("b"), .key("c"), .index(1)]) == 16)
        #expect(index.line(of: [.key("entry"), .index(1), .key("id")]) == 20)
    }
}
