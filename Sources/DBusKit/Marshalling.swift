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

    /// Reads the whole body of `message`.
    static func read(from message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        return try readAll(&iter)
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
