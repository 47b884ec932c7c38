import Foundation
import Testing

@testable import ChimeCore

/// The examples of RFC 5545 section 3.8.5.3, on floating time (the RFC's America/New_York start and its
/// UTC UNTILs become floating times), each checked against dateutil.
struct RRuleRFCExample: CustomStringConvertible, Sendable {
    var title: String
    var text: String
    /// A few occurrences quoted from the RFC, as a sanity check of the oracle itself.
    var rfcStart: [String] = []

    var description: String { title }

    static let all: [RRuleRFCExample] = [
        .init(title: "Daily for 10 occurrences", text: "DTSTART:19970902T090000\nRRULE:FREQ=DAILY;COUNT=10"),
        .init(
            title: "Daily until December 24, 1997",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=DAILY;UNTIL=19971224T000000"),
        .init(title: "Every other day - forever", text: "DTSTART:19970902T090000\nRRULE:FREQ=DAILY;INTERVAL=2"),
        .init(
            title: "Every 10 days, 5 occurrences",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=DAILY;INTERVAL=10;COUNT=5",
            rfcStart: ["1997-09-02T09:00:00", "1997-09-12T09:00:00", "1997-09-22T09:00:00", "1997-10-02T09:00:00"]),
        .init(
            title: "Every day in January, for 3 years (yearly)",
            text:
                "DTSTART:19980101T090000\n"
                + "RRULE:FREQ=YEARLY;UNTIL=20000131T140000;BYMONTH=1;BYDAY=SU,MO,TU,WE,TH,FR,SA"),
        .init(
            title: "Every day in January, for 3 years (daily)",
            text: "DTSTART:19980101T090000\nRRULE:FREQ=DAILY;UNTIL=20000131T140000;BYMONTH=1"),
        .init(title: "Weekly for 10 occurrences", text: "DTSTART:19970902T090000\nRRULE:FREQ=WEEKLY;COUNT=10"),
        .init(
            title: "Weekly until December 24, 1997",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=WEEKLY;UNTIL=19971224T000000"),
        .init(
            title: "Every other week - forever", text: "DTSTART:19970902T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;WKST=SU"),
        .init(
            title: "Weekly on Tuesday and Thursday for five weeks (until)",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=WEEKLY;UNTIL=19971007T000000;WKST=SU;BYDAY=TU,TH"),
        .init(
            title: "Weekly on Tuesday and Thursday for five weeks (count)",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH"),
        .init(
            title: "Every other week on Monday, Wednesday, and Friday until December 24, 1997",
            text: "DTSTART:19970901T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;UNTIL=19971224T000000;WKST=SU;BYDAY=MO,WE,FR"),
        .init(
            title: "Every other week on Tuesday and Thursday, for 8 occurrences",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH"),
        .init(
            title: "Monthly on the first Friday for 10 occurrences",
            text: "DTSTART:19970905T090000\nRRULE:FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
            rfcStart: ["1997-09-05T09:00:00", "1997-10-03T09:00:00", "1997-11-07T09:00:00", "1997-12-05T09:00:00"]),
        .init(
            title: "Monthly on the first Friday until December 24, 1997",
            text: "DTSTART:19970905T090000\nRRULE:FREQ=MONTHLY;UNTIL=19971224T000000;BYDAY=1FR"),
        .init(
            title: "Every other month on the first and last Sunday of the month for 10 occurrences",
            text: "DTSTART:19970907T090000\nRRULE:FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU",
            rfcStart: ["1997-09-07T09:00:00", "1997-09-28T09:00:00", "1997-11-02T09:00:00", "1997-11-30T09:00:00"]),
        .init(
            title: "Monthly on the second-to-last Monday of the month for 6 months",
            text: "DTSTART:19970922T090000\nRRULE:FREQ=MONTHLY;COUNT=6;BYDAY=-2MO"),
        .init(
            title: "Monthly on the third-to-the-last day of the month, forever",
            text: "DTSTART:19970928T090000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-3"),
        .init(
            title: "Monthly on the 2nd and 15th of the month for 10 occurrences",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15"),
        .init(
            title: "Monthly on the first and last day of the month for 10 occurrences",
            text: "DTSTART:19970930T090000\nRRULE:FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1"),
        .init(
            title: "Every 18 months on the 10th thru 15th of the month for 10 occurrences",
            text: "DTSTART:19970910T090000\nRRULE:FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15"),
        .init(
            title: "Every Tuesday, every other month",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=MONTHLY;INTERVAL=2;BYDAY=TU"),
        .init(
            title: "Yearly in June and July for 10 occurrences",
            text: "DTSTART:19970610T090000\nRRULE:FREQ=YEARLY;COUNT=10;BYMONTH=6,7"),
        .init(
            title: "Every other year on January, February, and March for 10 occurrences",
            text: "DTSTART:19970310T090000\nRRULE:FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3"),
        .init(
            title: "Every third year on the 1st, 100th, and 200th day for 10 occurrences",
            text: "DTSTART:19970101T090000\nRRULE:FREQ=YEARLY;INTERVAL=3;COUNT=10;BYYEARDAY=1,100,200",
            rfcStart: ["1997-01-01T09:00:00", "1997-04-10T09:00:00", "1997-07-19T09:00:00", "2000-01-01T09:00:00"]),
        .init(
            title: "Every 20th Monday of the year, forever",
            text: "DTSTART:19970519T090000\nRRULE:FREQ=YEARLY;BYDAY=20MO",
            rfcStart: ["1997-05-19T09:00:00", "1998-05-18T09:00:00", "1999-05-17T09:00:00"]),
        .init(
            title: "Monday of week number 20, forever",
            text: "DTSTART:19970512T090000\nRRULE:FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
            rfcStart: ["1997-05-12T09:00:00", "1998-05-11T09:00:00", "1999-05-17T09:00:00"]),
        .init(
            title: "Every Thursday in March, forever",
            text: "DTSTART:19970313T090000\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=TH"),
        .init(
            title: "Every Thursday, but only during June, July, and August, forever",
            text: "DTSTART:19970605T090000\nRRULE:FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8"),
        .init(
            title: "Every Friday the 13th, forever",
            text: "DTSTART:19970902T090000\nEXDATE:19970902T090000\nRRULE:FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
            rfcStart: ["1998-02-13T09:00:00", "1998-03-13T09:00:00", "1998-11-13T09:00:00", "1999-08-13T09:00:00"]),
        .init(
            title: "The first Saturday that follows the first Sunday of the month, forever",
            text: "DTSTART:19970913T090000\nRRULE:FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13"),
        .init(
            title: "U.S. Presidential Election day, every 4 years",
            text: "DTSTART:19961105T090000\nRRULE:FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
            rfcStart: ["1996-11-05T09:00:00", "2000-11-07T09:00:00", "2004-11-02T09:00:00"]),
        .init(
            title: "The third instance of Tuesday, Wednesday or Thursday, for the next 3 months",
            text: "DTSTART:19970904T090000\nRRULE:FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
            rfcStart: ["1997-09-04T09:00:00", "1997-10-07T09:00:00", "1997-11-06T09:00:00"]),
        .init(
            title: "The second-to-last weekday of the month",
            text: "DTSTART:19970929T090000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
            rfcStart: ["1997-09-29T09:00:00", "1997-10-30T09:00:00", "1997-11-27T09:00:00", "1997-12-30T09:00:00"]),
        .init(
            title: "Every 3 hours from 9:00 AM to 5:00 PM on a specific day",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=HOURLY;INTERVAL=3;UNTIL=19970902T170000",
            rfcStart: ["1997-09-02T09:00:00", "1997-09-02T12:00:00", "1997-09-02T15:00:00"]),
        .init(
            title: "Every 15 minutes for 6 occurrences",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=MINUTELY;INTERVAL=15;COUNT=6"),
        .init(
            title: "Every hour and a half for 4 occurrences",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=MINUTELY;INTERVAL=90;COUNT=4",
            rfcStart: ["1997-09-02T09:00:00", "1997-09-02T10:30:00", "1997-09-02T12:00:00", "1997-09-02T13:30:00"]),
        .init(
            title: "Every 20 minutes from 9:00 AM to 4:40 PM every day (daily)",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16;BYMINUTE=0,20,40"),
        .init(
            title: "Every 20 minutes from 9:00 AM to 4:40 PM every day (minutely)",
            text: "DTSTART:19970902T090000\nRRULE:FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16"),
        .init(
            title: "WKST=MO changes the result",
            text: "DTSTART:19970805T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO",
            rfcStart: ["1997-08-05T09:00:00", "1997-08-10T09:00:00", "1997-08-19T09:00:00", "1997-08-24T09:00:00"]),
        .init(
            title: "WKST=SU changes the result",
            text: "DTSTART:19970805T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
            rfcStart: ["1997-08-05T09:00:00", "1997-08-17T09:00:00", "1997-08-19T09:00:00", "1997-08-31T09:00:00"]),
        .init(
            title: "An invalid date (February 30) is ignored",
            text: "DTSTART:20070115T090000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5",
            rfcStart: [
                "2007-01-15T09:00:00", "2007-01-30T09:00:00", "2007-02-15T09:00:00", "2007-03-15T09:00:00",
                "2007-03-30T09:00:00",
            ]),
    ]

    static let occurrencesCompared = 60

    /// dateutil's answers for every example, computed once in a single python process.
    static let oracle: [Int: RRuleOracle.Answer]? = {
        let cases = all.enumerated().map { index, example in
            RRuleOracle.Case(
                id: index, text: example.text, dtstart: nil, after: nil, inc: false, n: occurrencesCompared)
        }
        return try? RRuleOracle.run(cases, secondsPerCase: 5)
    }()
}

@Suite struct RRuleRFCExamplesTests {
    @Test(arguments: RRuleRFCExample.all.indices)
    func agreesWithDateutil(index: Int) throws {
        let example = RRuleRFCExample.all[index]
        let answers = try #require(RRuleRFCExample.oracle, "python3-dateutil oracle did not run")
        let answer = try #require(answers[index])
        #expect(answer.error == nil)
        #expect(!answer.timeout)
        let set = try RRuleSet.parse(example.text)
        let ours = set.occurrences(limit: RRuleRFCExample.occurrencesCompared).map(\.description)
        #expect(ours == answer.occ, "\(example.title)\n\(example.text)")
        #expect(Array(ours.prefix(example.rfcStart.count)) == example.rfcStart)
        #expect(!ours.isEmpty)
    }
}
