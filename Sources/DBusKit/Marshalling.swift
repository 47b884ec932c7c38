import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// Writes DBusValues into a libdbus message and reads them back. Internal: only DBusMessage uses it.
enum Marshalling {
    /// Appends `values` to the body of `message`; the values must have passed `validate()`.
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values {
            try append(value, to: &iter)
        }
    }

    private static func appendBasic<T: BitwiseCopyable>(_ type: Int32, _ value: T, to iter: inout DBusMessageIter)
        throws(DBusError)
    {
        var copy = value
        guard dbus_message_iter_append_basic(&iter, type, &copy) != 0 else { throw DBusError(.noMemory, "append") }
    }

    private static func appendString(_ type: Int32, _ text: String, to iter: inout DBusMessageIter) throws(DBusError) {
        let ok = text.withCString { pointer -> Bool in
            var p: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, type, &p) != 0
        }
        guard ok else { throw DBusError(.noMemory, "append string") }
    }

    private static func container(
        _ type: Int32, _ signature: String?, in iter: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        let opened: Bool
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) != 0 }
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub) != 0
        }
        guard opened else { throw DBusError(.noMemory, "open container") }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else {
            throw DBusError(.noMemory, "close container")
        }
    }

    static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
        switch value {
        case .byte(let v): try appendBasic(CDBUS_TYPE_BYTE, v, to: &iter)
        case .boolean(let v): try appendBasic(CDBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0), to: &iter)
        case .int16(let v): try appendBasic(CDBUS_TYPE_INT16, v, to: &iter)
        case .uint16(let v): try appendBasic(CDBUS_TYPE_UINT16, v, to: &iter)
        case .int32(let v): try appendBasic(CDBUS_TYPE_INT32, v, to: &iter)
        case .uint32(let v): try appendBasic(CDBUS_TYPE_UINT32, v, to: &iter)
        case .int64(let v): try appendBasic(CDBUS_TYPE_INT64, v, to: &iter)
        case .uint64(let v): try appendBasic(CDBUS_TYPE_UINT64, v, to: &iter)
        case .double(let v): try appendBasic(CDBUS_TYPE_DOUBLE, v, to: &iter)
        case .unixFD(let fd): try appendBasic(CDBUS_TYPE_UNIX_FD, fd.fileDescriptor, to: &iter)
        case .string(let s): try appendString(CDBUS_TYPE_STRING, s, to: &iter)
        case .objectPath(let p): try appendString(CDBUS_TYPE_OBJECT_PATH, p.rawValue, to: &iter)
        case .signature(let g): try appendString(CDBUS_TYPE_SIGNATURE, g.description, to: &iter)
        case .variant(let inner):
            try container(CDBUS_TYPE_VARIANT, inner.type.description, in: &iter) { (sub) throws(DBusError) in
                try append(inner, to: &sub)
            }
        case .array(let element, let items):
            try container(CDBUS_TYPE_ARRAY, element.description, in: &iter) { (sub) throws(DBusError) in
                for item in items { try append(item, to: &sub) }
            }
        case .bytes(let bytes):
            try container(CDBUS_TYPE_ARRAY, "y", in: &iter) { (sub) throws(DBusError) in
                let ok = bytes.withUnsafeBufferPointer { buffer -> Bool in
                    var start = buffer.baseAddress
                    return dbus_message_iter_append_fixed_array(&sub, CDBUS_TYPE_BYTE, &start, Int32(buffer.count)) != 0
                }
                guard ok else { throw DBusError(.noMemory, "append bytes") }
            }
        case .dictionary(let key, let valueType, let entries):
            try container(CDBUS_TYPE_ARRAY, "{\(key)\(valueType)}", in: &iter) { (sub) throws(DBusError) in
                for entry in entries {
                    try container(CDBUS_TYPE_DICT_ENTRY, nil, in: &sub) { (pair) throws(DBusError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            try container(CDBUS_TYPE_STRUCT, nil, in: &iter) { (sub) throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        }
    }

    /// About how many bytes the body of `message` takes on the wire, found without decoding it: the
    /// marshalled length of each array (which libdbus keeps in the message), each string's length, eight
    /// for any other value. It reads the top-level arguments and what a top-level variant or struct holds
    /// directly (never an array's elements), so it costs the same for a byte as for a hundred megabytes:
    /// a size can be checked before anything is decoded.
    static func bodyBytes(of message: OpaquePointer) -> Int {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return 0 }
        return bytes(&iter)
    }

    /// `bodyBytes(of:)` of a message in wire format (for tests).
    static func bodyBytes(serialized bytes: [UInt8]) throws(DBusError) -> Int {
        let raw = try demarshal(bytes)
        defer { dbus_message_unref(raw) }
        return bodyBytes(of: raw)
    }

    /// A libdbus message parsed from wire format and validated as libdbus validates what arrives on a
    /// socket; the caller owns it (one reference).
    ///
    /// The corresponding C function is `dbus_message_demarshal`.
    static func demarshal(_ bytes: [UInt8]) throws(DBusError) -> OpaquePointer {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let raw = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                dbus_message_demarshal($0, Int32(buffer.count), &error)
            }
        }
        guard let raw else { throw DBusError(takingC: &error, default: "not a valid D-Bus message") }
        return raw
    }

    private static func bytes(_ iter: inout DBusMessageIter) -> Int {
        var total = 0
        while true {
            switch dbus_message_iter_get_arg_type(&iter) {
            case CDBUS_TYPE_INVALID:
                return total
            case CDBUS_TYPE_ARRAY:
                // The length word, the padding to the first element, and the elements. libdbus tells the
                // length from an iterator inside the array, without reading an element.
                var inside = DBusMessageIter()
                dbus_message_iter_recurse(&iter, &inside)
                total += 8 + Int(cdbus_message_iter_get_array_len(&inside))
            case CDBUS_TYPE_STRING, CDBUS_TYPE_OBJECT_PATH, CDBUS_TYPE_SIGNATURE:
                var p: UnsafePointer<CChar>? = nil
                dbus_message_iter_get_basic(&iter, &p)
                total += 5 + (p.map { strlen($0) } ?? 0)
            case CDBUS_TYPE_VARIANT, CDBUS_TYPE_STRUCT, CDBUS_TYPE_DICT_ENTRY:
                // Bounded: libdbus accepts at most 64 nested containers and 255 bytes of signature.
                var sub = DBusMessageIter()
                dbus_message_iter_recurse(&iter, &sub)
                total += 8 + bytes(&sub)
            default:
                total += 8
            }
            guard dbus_message_iter_next(&iter) != 0 else { return total }
        }
    }

    /// Calls `body` with each element of the array that is top-level argument `index` of `message`, decoded
    /// one at a time, so that only one element's values exist at once.
    static func forEachElement(
        of message: OpaquePointer, argument index: Int, _ body: (DBusValue) throws(DBusError) -> Void
    ) throws(DBusError) {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else {
            throw DBusError(.invalidArgs, "the message has no argument \(index)")
        }
        for _ in 0..<index {
            guard dbus_message_iter_next(&iter) != 0 else {
                throw DBusError(.invalidArgs, "the message has no argument \(index)")
            }
        }
        guard dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_ARRAY else {
            throw DBusError(.invalidArgs, "argument \(index) is not an array")
        }
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
            try body(try readOne(&sub))
            dbus_message_iter_next(&sub)
        }
    }

    /// Reads the whole body of `message`; the array at top-level index `skipping` is left empty (its type
    /// kept), for a handler that streams it.
    static func read(from message: OpaquePointer, skipping: Int? = nil) throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        guard let skipping else { return try readAll(&iter) }
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != CDBUS_TYPE_INVALID {
            if values.count == skipping, dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_ARRAY {
                switch try currentType(&iter) {
                case .dictionary(let key, let value): values.append(.dictionary(key: key, value: value, []))
                case .array(let element): values.append(.array(element: element, []))
                case let other: throw DBusError(.invalidSignature, "array iterator with type \(other)")
                }
            } else {
                values.append(try readOne(&iter))
            }
            dbus_message_iter_next(&iter)
        }
        return values
    }

    private static func readAll(_ iter: inout DBusMessageIter) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != CDBUS_TYPE_INVALID {
            values.append(try readOne(&iter))
            dbus_message_iter_next(&iter)
        }
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var v = zero
        dbus_message_iter_get_basic(&iter, &v)
        return v
    }

    private static func string(_ iter: inout DBusMessageIter) -> String {
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        guard let p else { return "" }
        return String(cString: p)
    }

    /// The signature of the value the iterator points at (for arrays: the full `a...` type).
    private static func currentType(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusType {
        guard let raw = dbus_message_iter_get_signature(&iter) else { throw DBusError(.noMemory, "signature") }
        defer { dbus_free(raw) }
        do {
            return try DBusType(parsing: String(cString: raw))
        } catch {
            throw DBusError(.invalidSignature, error.description)
        }
    }

    private static func readOne(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic(&iter, UInt8(0)))
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(&iter, Int16(0)))
        case CDBUS_TYPE_UINT16: return .uint16(basic(&iter, UInt16(0)))
        case CDBUS_TYPE_INT32: return .int32(basic(&iter, Int32(0)))
        case CDBUS_TYPE_UINT32: return .uint32(basic(&iter, UInt32(0)))
        case CDBUS_TYPE_INT64: return .int64(basic(&iter, Int64(0)))
        case CDBUS_TYPE_UINT64: return .uint64(basic(&iter, UInt64(0)))
        case CDBUS_TYPE_DOUBLE: return .double(basic(&iter, Double(0)))
        case CDBUS_TYPE_UNIX_FD:
            // libdbus hands out a fresh duplicate that the reader owns.
            return .unixFD(DBusUnixFD(taking: basic(&iter, Int32(-1))))
        case CDBUS_TYPE_STRING: return .string(string(&iter))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(try DBusObjectPath(string(&iter)))
        case CDBUS_TYPE_SIGNATURE:
            do {
                return .signature(try DBusSignature(parsing: string(&iter)))
            } catch {
                throw DBusError(.invalidSignature, error.description)
            }
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try readOne(&sub))
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .structure(try readAll(&sub))
        case CDBUS_TYPE_ARRAY:
            let arrayType = try currentType(&iter)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            switch arrayType {
            case .dictionary(let key, let value):
                var entries: [DBusDictEntry] = []
                while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                    var pair = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &pair)
                    let k = try readOne(&pair)
                    dbus_message_iter_next(&pair)
                    let v = try readOne(&pair)
                    entries.append(DBusDictEntry(k, v))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: value, entries)
            case .array(.byte):
                // Read in one piece from the message's buffer.
                var pointer: UnsafeMutableRawPointer? = nil
                var count: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &pointer, &count)
                guard let pointer, count > 0 else { return .bytes([]) }
                return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
            case .array(let element):
                return .array(element: element, try readAll(&sub))
            default:
                throw DBusError(.invalidSignature, "array iterator with type \(arrayType)")
            }
        default:
            throw DBusError(.invalidSignature, "unexpected type code \(type) in message")
        }
    }
}
