import CCanberra
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Plays the sounds of delivered notifications (`DeliverySound`) through one libcanberra context, on a
/// queue of its own: opening the context connects to the sound server and a play waits until its stream
/// is set up, which must never delay the timer or a delivery on the daemon's queue.
///
/// One sound at a time: a sound asked for while another plays is dropped, unless it is critical and the
/// one playing is not, which it then stops (a burst of due notifications is heard once, an alarm is
/// never drowned by a chime). A sound plays at most `maximumDuration`. At most one sound waits for the
/// queue; a newer one takes its place unless it is the lesser. `play` never waits.
///
/// Sounds carry `media.role` `event`, so the sound server's volume and mute for event sounds (the
/// desktop's "alert" or "system sounds" slider) and the output's own mute apply to them.
final class SoundPlayer: @unchecked Sendable {
    // @unchecked Sendable: `waiting` is behind its Mutex; every other field is read and written only on
    // `queue` (libcanberra's callback hops there before touching anything).

    /// The longest a sound plays: a theme's event sounds last a few seconds; a file an app names may not.
    static let maximumDuration: Duration = .seconds(30)

    private let queue = DispatchQueue(label: "chimed.sound", qos: .userInitiated)
    private let logger: Logger
    /// The sound waiting for the queue, and whether a job to play it is queued.
    private let waiting = Mutex<(sound: DeliverySound?, queued: Bool)>((nil, false))
    /// The open context; nil until the first sound, and after the sound server went away.
    private var context: CanberraContext?
    private var playing: (id: UInt32, sound: DeliverySound)?
    private var lastID: UInt32 = 0
    /// The failure last logged as a warning, so that a missing sound server is said once, not per sound.
    private var lastWarning: String?

    init(logger: Logger) {
        self.logger = logger
    }

    deinit {
        // Destroying the context calls the callbacks of the sounds still playing (`CA_ERROR_DESTROYED`),
        // which `finishedCallback` ignores, so nothing refers to this player afterwards.
        context = nil
    }

    /// Plays `sound` soon, on the player's queue; returns at once.
    func play(_ sound: DeliverySound) {
        let queueJob = waiting.withLock { state -> Bool in
            if let waiting = state.sound, waiting.critical, !sound.critical { return false }
            state.sound = sound
            defer { state.queued = true }
            return !state.queued
        }
        if queueJob { queue.async { self.playWaiting() } }
    }

    private func playWaiting() {
        let next = waiting.withLock { state -> DeliverySound? in
            defer { state = (nil, false) }
            return state.sound
        }
        guard let sound = next else { return }
        if let current = playing {
            guard sound.critical, !current.sound.critical else {
                logger.debug("a notification sound is playing; not playing \(sound.source) over it")
                return
            }
            try? context?.cancel(id: current.id)
            playing = nil
        }
        start(sound, reconnect: true)
    }

    private func start(_ sound: DeliverySound, reconnect: Bool) {
        let context: CanberraContext
        do {
            context = try openContext()
        } catch {
            warn("cannot play notification sounds: \(error)")
            return
        }
        lastID = lastID == UInt32.max ? 1 : lastID + 1
        let id = lastID
        do {
            try Self.play(sound, id: id, on: context, userData: Unmanaged.passUnretained(self).toOpaque())
        } catch let error as CanberraError where error.isDisconnected {
            // The sound server went away (or restarted) since the context was opened: a new one may find it.
            self.context = nil
            if reconnect { start(sound, reconnect: false) } else { warn("cannot play notification sounds: \(error)") }
            return
        } catch {
            // The notification is still heard: an app's sound the theme lacks, or a file that cannot be
            // played, gives way to the theme's own.
            if let fallback = sound.fallback, Self.mayFallBack(sound, after: error) {
                logger.info("cannot play the notification sound \(sound.source) (\(error)); playing \(fallback.source)")
                start(fallback, reconnect: reconnect)
            } else {
                warn("cannot play the notification sound \(sound.source): \(error)")
            }
            return
        }
        playing = (id, sound)
        lastWarning = nil
        logger.debug("playing the notification sound \(sound.source)")
        queue.asyncAfter(deadline: .now() + Self.maximumDuration.dispatchInterval) { [weak self] in
            self?.stopIfPlaying(id)
        }
    }

    /// Whether `error` is about the sound itself, not the sound server, so that another sound may play.
    private static func mayFallBack(_ sound: DeliverySound, after error: any Error) -> Bool {
        switch sound.source {
        case .themed: (error as? CanberraError)?.isNotFound ?? false
        case .file: true
        }
    }

    /// The open context, opened now if it is not.
    private func openContext() throws(CanberraError) -> CanberraContext {
        if let context { return context }
        let made = try CanberraContext(properties: [
            CA_PROP_APPLICATION_NAME: "chimed", CA_PROP_APPLICATION_ID: "io.chime.Chime1",
            CA_PROP_CANBERRA_XDG_THEME_NAME: "freedesktop",
        ])
        try made.open()
        context = made
        return made
    }

    /// Starts `sound` as `id`. A file is opened here, checked to be a regular file, and handed to
    /// libcanberra as `/proc/self/fd/N`: the file that was checked is the one played, even if its path is
    /// changed meanwhile (a FIFO put in its place would block the queue for good).
    private static func play(
        _ sound: DeliverySound, id: UInt32, on context: CanberraContext, userData: UnsafeMutableRawPointer
    ) throws {
        var properties = [
            CA_PROP_MEDIA_ROLE: "event", CA_PROP_EVENT_DESCRIPTION: "Notification",
        ]
        if let decibels = DeliverySound.decibels(sound.volume) { properties[CA_PROP_CANBERRA_VOLUME] = decibels }
        switch sound.source {
        case .themed(let name):
            properties[CA_PROP_EVENT_ID] = name
            try context.play(id: id, properties: properties, finished: finishedCallback, userData: userData)
        case .file(let path):
            let fd = try Linux.openat(
                AT_FDCWD, path, flags: O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, subject: path)
            defer { try? Linux.close(fd) }
            guard try Linux.fileStatus(fd, subject: path).isRegular else {
                throw SoundFileError(path: path)
            }
            // libcanberra opens the file before ca_context_play_full returns: the descriptor may close then.
            properties[CA_PROP_MEDIA_FILENAME] = "/proc/self/fd/\(fd)"
            try context.play(id: id, properties: properties, finished: finishedCallback, userData: userData)
        }
    }

    private func finished(id: UInt32, code: Int32) {
        guard playing?.id == id else { return }
        playing = nil
        if Int(code) != CA_SUCCESS, Int(code) != CA_ERROR_CANCELED {
            logger.debug("a notification sound ended early: \(String(cString: ca_strerror(code)))")
        }
    }

    private func stopIfPlaying(_ id: UInt32) {
        guard playing?.id == id else { return }
        logger.debug("a notification sound played for \(Self.maximumDuration); stopping it")
        try? context?.cancel(id: id)
        playing = nil
    }

    private func warn(_ message: String) {
        if message == lastWarning {
            logger.debug("\(message)")
        } else {
            logger.warning("\(message)")
            lastWarning = message
        }
    }

    /// libcanberra's thread calls this when a sound ends; the player's queue takes it from there. A
    /// context being destroyed calls it with `CA_ERROR_DESTROYED` from its owner's `deinit`: ignored.
    private static let finishedCallback: CanberraContext.FinishCallback = { _, id, code, userData in
        guard let userData, Int(code) != CA_ERROR_DESTROYED else { return }
        let player = Unmanaged<SoundPlayer>.fromOpaque(userData).takeUnretainedValue()
        player.queue.async { player.finished(id: id, code: code) }
    }
}

/// A `sound-file` that is not a regular file (a folder, a FIFO, a device).
struct SoundFileError: Error, CustomStringConvertible {
    var path: String
    var description: String { "\(path) is not a regular file" }
}

extension DeliverySound.Source: CustomStringConvertible {
    var description: String {
        switch self {
        case .themed(let name): name
        case .file(let path): path
        }
    }
}
