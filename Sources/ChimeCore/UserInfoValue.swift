import Foundation

// TEMPORARY stand-in until the daemon-vocab branch lands its UserInfoValue; replaced at merge.
public enum UserInfoValue: Hashable, Sendable, Codable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([UserInfoValue])
    case dictionary([String: UserInfoValue])
}
