import Foundation

/// The clock a rule's wall-clock times are read on, chosen explicitly per rule.
///
/// A reminder "every day at 9:00" usually means 9:00 wherever the user is, so the default is
/// `floating`: the rule is evaluated in whatever the system zone is at evaluation time and follows a
/// user who travels. A rule tied to a place ("the Berlin stand-up") uses `named` and fires at the same
/// instant wherever the machine is.
public enum RuleTimeZone: Codable, Hashable, Sendable {
    /// Wall-clock time of the system zone at evaluation time (the caller passes that zone).
    case floating
    /// A fixed IANA zone identifier such as `Europe/Berlin`.
    case named(String)

    /// The zone to evaluate in; nil when a named zone is unknown to this system, in which case the rule
    /// cannot fire (callers should validate names up front with `validated(_:)`).
    public func resolve(systemTimeZone: Zone) -> Zone? {
        switch self {
        case .floating:
            return systemTimeZone
        case .named(let identifier):
            return Zone(identifier: identifier)
        }
    }

    /// A named zone, checked against the system's tz database (`Zone(identifier:)`) so a typo fails at
    /// configuration time instead of silently never firing.
    public static func validated(_ identifier: String) throws -> RuleTimeZone {
        guard Zone(identifier: identifier) != nil else {
            throw RuleSyntaxError(
                grammar: "time zone", input: identifier, offset: 0, token: identifier,
                expected: "an IANA time zone name such as Europe/Berlin or America/New_York")
        }
        return .named(identifier)
    }
}
