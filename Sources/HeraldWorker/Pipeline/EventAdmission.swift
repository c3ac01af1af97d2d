import HeraldAMQP
import HeraldCore

/// The first step of every consumed message, in the planner and in the partition ingest alike:
/// its message key, its event, and the event's metadata from the template catalog. A message
/// that fails it goes to the dead-letter queue with the code and reason given here.
enum EventAdmission {
    enum Verdict {
        case admitted(Event, EventMetadata)
        case refused(DeadLetterCode, reason: String, eventId: String?)
    }

    /// `decoded`: the event decoded beforehand (``TrackedMessage/decoded``); nil decodes it here.
    static func admit(
        _ delivery: AMQPDelivery, decoded: Result<Event, EventDecodingError>? = nil, decoder: EventDecoder, catalog: TemplateCatalog
    ) -> Verdict {
        let event: Event
        switch decoded ?? decode(delivery, decoder: decoder) {
        case .success(let decoded): event = decoded
        case .failure(let error): return .refused(.undecodable, reason: error.description, eventId: nil)
        }
        guard let metadata = catalog.metadata(forEventId: event.id) else {
            return .refused(.unknownEvent, reason: "no template defines event id \(event.id.prefix(128))", eventId: event.id)
        }
        return .admitted(event, metadata)
    }

    static func decode(_ delivery: AMQPDelivery, decoder: EventDecoder) -> Result<Event, EventDecodingError> {
        Result { () throws(EventDecodingError) in try decoder.decode(delivery.body, contentType: delivery.properties.contentType).event }
    }
}
