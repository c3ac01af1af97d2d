/// Validates field values and assembles an ``Event``; shared by the XML and JSON readers so that
/// both formats accept exactly the same values and fail with the same reasons.
struct EventAssembler {
    let format: EventFormat
    let limits: DecodingLimits
    var id: String?
    var type: EventType?
    var dateTime: EventTimestamp?
    var filters: [EventFilter] = []
    var params: [EventParameter] = []
    var notes: [DecodingNote] = []

    func error(_ code: EventDecodingError.Code, _ field: String, _ reason: String, offset: Int? = nil, value: String? = nil) -> EventDecodingError {
        EventDecodingError(code: code, field: field, reason: reason, format: format, offset: offset, value: value)
    }

    mutating func setId(_ raw: String, field: String, offset: Int?) throws(EventDecodingError) {
        let value = raw.trimmingSpaces
        guard !value.isEmpty else { throw error(.invalidValue, field, "must not be empty", offset: offset) }
        guard value.utf8.count <= limits.maxEventIdBytes else {
            throw error(.limitExceeded, field, "longer than \(limits.maxEventIdBytes) bytes", offset: offset)
        }
        id = value
    }

    mutating func setType(_ raw: String, field: String, offset: Int?) throws(EventDecodingError) {
        guard let value = EventType(name: raw.trimmingSpaces) else {
            throw error(.invalidValue, field, "must be one of Message, News, Notification, System", offset: offset, value: raw)
        }
        type = value
    }

    mutating func setDateTime(_ raw: String, field: String, offset: Int?) throws(EventDecodingError) {
        do {
            dateTime = try EventTimestamp(iso8601: raw.trimmingSpaces)
        } catch {
            throw self.error(.invalidValue, field, "not an ISO 8601 date-time with offset (\(error.reason))", offset: offset, value: raw)
        }
    }

    /// `field` names the filter in error reasons and notes: built only when one is made.
    mutating func addFilter(name rawName: String, value rawValue: String, field: @autoclosure () -> String, offset: Int?) throws(EventDecodingError) {
        guard filters.count < limits.maxFilters else {
            throw error(.limitExceeded, field(), "more than \(limits.maxFilters) filters", offset: offset)
        }
        let name = rawName.trimmingSpaces
        guard !name.isEmpty else { throw error(.invalidValue, field(), "filter name must not be empty", offset: offset) }
        let value = rawValue.trimmingSpaces
        guard !value.isEmpty else { throw error(.invalidValue, field(), "filter value must not be empty", offset: offset) }
        let filterName = FilterName(rawValue: name)
        if !filterName.isKnown { notes.append(.unknownFilter(name: name, field: field())) }
        if filters.isEmpty { filters.reserveCapacity(4) }
        filters.append(EventFilter(name: filterName, value: value))
    }

    mutating func addParam(name: String, value: String, field: @autoclosure () -> String, offset: Int?) throws(EventDecodingError) {
        guard params.count < limits.maxParams else {
            throw error(.limitExceeded, field(), "more than \(limits.maxParams) parameters", offset: offset)
        }
        if params.isEmpty { params.reserveCapacity(4) }
        params.append(EventParameter(name: name, value: value))
    }

    /// The event, or the first required field that is missing (in document order of seed 000).
    func finish(idField: String, typeField: String, dateTimeField: String) throws(EventDecodingError) -> DecodedEvent {
        guard let id else { throw error(.missingField, idField, "required") }
        guard let type else { throw error(.missingField, typeField, "required") }
        guard let dateTime else { throw error(.missingField, dateTimeField, "required") }
        return DecodedEvent(event: Event(id: id, type: type, dateTime: dateTime, filters: filters, params: params), format: format, notes: notes)
    }
}
