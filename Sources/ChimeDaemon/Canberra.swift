import CCanberra

/// A libcanberra call that failed: which call, and the `CA_ERROR_*` code it returned.
struct CanberraError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C function, such as `ca_context_open`.
    var call: String
    /// The negative `CA_ERROR_*` code.
    var code: Int32

    var description: String { "\(call) failed: \(String(cString: ca_strerror(code)))" }

    /// The sound is in no theme folder, or the file is missing.
    var isNotFound: Bool { Int(code) == CA_ERROR_NOTFOUND }
    /// The connection to the sound server broke: a new context may work.
    var isDisconnected: Bool { Int(code) == CA_ERROR_DISCONNECTED || Int(code) == CA_ERROR_STATE }

    static func check(_ code: Int32, _ call: String) throws(CanberraError) {
        guard Int(code) == CA_SUCCESS else { throw CanberraError(call: call, code: code) }
    }
}

/// One libcanberra context: a connection to the sound server (PulseAudio, or PipeWire's) made by
/// `open`, through which sounds play asynchronously. Not thread-safe in the way chimed needs (a play
/// blocks while the stream is set up), so its owner calls it from one queue.
final class CanberraContext {
    /// Called by libcanberra's own thread when a sound ended, failed or was cancelled; with the
    /// `CA_ERROR_*` code (`CA_SUCCESS`: played to its end).
    typealias FinishCallback = ca_finish_callback_t

    private let context: OpaquePointer

    /// A context whose properties (`application.name`, …) every sound carries.
    ///
    /// The corresponding C functions are `ca_context_create` and `ca_context_change_props_full`.
    init(properties: [String: String]) throws(CanberraError) {
        var made: OpaquePointer?
        try CanberraError.check(ca_context_create(&made), "ca_context_create")
        guard let made else { throw CanberraError(call: "ca_context_create", code: Int32(CA_ERROR_OOM)) }
        context = made
        do {
            try Self.withPropertyList(properties) { (list) throws(CanberraError) in
                try CanberraError.check(ca_context_change_props_full(made, list), "ca_context_change_props_full")
            }
        } catch {
            ca_context_destroy(made)
            throw error
        }
    }

    deinit { ca_context_destroy(context) }

    /// Connects to the sound server; may block until it answers.
    ///
    /// The corresponding C function is `ca_context_open`.
    func open() throws(CanberraError) {
        try CanberraError.check(ca_context_open(context), "ca_context_open")
    }

    /// Starts a sound (`event.id` or `media.filename` among `properties`) as `id`; returns once its stream
    /// is set up, and `finished` is called when it ends.
    ///
    /// The corresponding C function is `ca_context_play_full`.
    func play(
        id: UInt32, properties: [String: String], finished: FinishCallback, userData: UnsafeMutableRawPointer?
    ) throws(CanberraError) {
        try Self.withPropertyList(properties) { (list) throws(CanberraError) in
            try CanberraError.check(
                ca_context_play_full(context, id, list, finished, userData), "ca_context_play_full")
        }
    }

    /// Stops the sounds playing as `id`; their `finished` is called with `CA_ERROR_CANCELED`.
    ///
    /// The corresponding C function is `ca_context_cancel`.
    func cancel(id: UInt32) throws(CanberraError) {
        try CanberraError.check(ca_context_cancel(context, id), "ca_context_cancel")
    }

    /// A `ca_proplist` of `properties` for the length of `body`.
    private static func withPropertyList(
        _ properties: [String: String], _ body: (OpaquePointer) throws(CanberraError) -> Void
    ) throws(CanberraError) {
        var made: OpaquePointer?
        try CanberraError.check(ca_proplist_create(&made), "ca_proplist_create")
        guard let list = made else { throw CanberraError(call: "ca_proplist_create", code: Int32(CA_ERROR_OOM)) }
        defer { ca_proplist_destroy(list) }
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            try CanberraError.check(ca_proplist_sets(list, key, value), "ca_proplist_sets")
        }
        try body(list)
    }
}
