extension TemplateCatalog {
    /// Renders `event` in the default culture on every platform that has a template for it
    /// there, so that a message with too few parameters or a broken text is refused whoever
    /// subscribes (the worker's and the partition ingest's check before anything is sent).
    public func validateInDefaultCulture(_ event: Event) throws(TemplateError) {
        for platform in Platform.allCases where (try? template(eventId: event.id, culture: defaultCulture, platform: platform)) != nil {
            _ = try render(event, culture: defaultCulture, platform: platform)
        }
    }
}
