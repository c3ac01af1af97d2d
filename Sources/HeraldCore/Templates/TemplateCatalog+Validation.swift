extension TemplateCatalog {
    /// Renders `event` in the default culture on every platform that has a template for it
    /// there, so that a message with too few parameters or a broken text is refused whoever
    /// subscribes (the worker's and the partition ingest's check before anything is sent).
    ///
    /// The verdict depends only on the event id and the number of parameters (rendering
    /// substitutes values; what can fail is a missing template text, a text that did not
    /// compile, or a placeholder beyond the parameters), so it is remembered per pair.
    public func validateInDefaultCulture(_ event: Event) throws(TemplateError) {
        let key = Memo.Validation(eventId: event.id, parameterCount: event.params.count)
        if let verdict = memo.validated(key) {
            if let error = verdict { throw error }
            return
        }
        do {
            for platform in Platform.allCases where (try? template(eventId: event.id, culture: defaultCulture, platform: platform)) != nil {
                _ = try render(event, culture: defaultCulture, platform: platform)
            }
            memo.store(key, TemplateError?.none)
        } catch {
            memo.store(key, error)
            throw error
        }
    }
}
