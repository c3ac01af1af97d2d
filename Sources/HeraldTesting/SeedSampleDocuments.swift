import Foundation

/// The samples of seed 000 ("Формат XML сообщений" / "Формат сообщения в БД", and the `.resx`
/// example of "Формат входящего уведомления").
///
/// The seed's XML, verbatim (inside the SQL `INSERT`), has an OCR glitch on one line:
///
///     <EventDateTime>2014-04-30T17:32:47.4123771+03:00/EventDateTime>
///
/// (the `<` of the end tag is missing). ``xml`` is the corrected document; ``xmlAsPrinted``
/// keeps the glitch and must be rejected with a field-naming error.
///
/// The seed's JSON sample is cut at the top by the page break: it starts at
/// `}, { "Name" : "ZoneId", "Value" : "w1" }`, and ends with `1` where `]` was printed.
/// ``json`` restores the head from the XML sample's fields (EventId, EventType, EventDateTime,
/// the three UserId filters, CultureId) in the same style, and `]` at the end.
public enum SeedSampleDocuments {
    public static let xml = """
        <PushNotification>
         <EventId>EVENT 006</EventId>
         <EventType>Message</EventType>
         <EventDateTime>2014-04-30T17:32:47.4123771+03:00</EventDateTime>
         <EventFilters>
          <Filter name="UserId" value="119973638970" />
          <Filter name="UserId" value="119973638971" />
          <Filter name="UserId" value="119973638972" />
          <Filter name="CultureId" value="ru-RU" />
          <Filter name="ZoneId" value="w1" />
          <Filter name="ZoneId" value="yessplay" />
          <Filter name="BranchId" value="101" />
         </EventFilters>
         <EventParams>
          <EventParam name="n1" value="v1" />
          <EventParam name="n2" value="v2" />
          <EventParam name="n3" value="v3" />
         </EventParams>
        </PushNotification>
        """

    public static let xmlAsPrinted = xml.replacingOccurrences(of: "+03:00</EventDateTime>", with: "+03:00/EventDateTime>")

    public static let json = """
        {
            "EventId" : "EVENT 006",
            "EventType" : "Message",
            "EventDateTime" : "2014-04-30T17:32:47.4123771+03:00",
            "EventFilters" : [{
                    "Name" : "UserId",
                    "Value" : "119973638970"
              }, {
                    "Name" : "UserId",
                    "Value" : "119973638971"
              }, {
                    "Name" : "UserId",
                    "Value" : "119973638972"
              }, {
                    "Name" : "CultureId",
                    "Value" : "ru-RU"
              }, {
                    "Name" : "ZoneId",
                    "Value" : "w1"
              }, {
                    "Name" : "ZoneId",
                    "Value" : "yessplay"
              }, {
                    "Name" : "BranchId",
                    "Value" : "101"
              }
            ],
            "EventParams" : [{
                    "Name" : "n1",
                    "Value" : "v1"
              }, {
                    "Name" : "n2",
                    "Value" : "v2"
              }, {
                    "Name" : "n3",
                    "Value" : "v3"
               }
            ]
        }
        """

    /// A `.resx` file in the seed's own format: its one example resource (the event `balance`),
    /// a body and no title, in a `<root>` as .NET writes it.
    public static let resx = """
        <?xml version="1.0" encoding="utf-8"?>
        <root>
          <data name="balance" xml:space="preserve">
                    <value>Баланс пользователя {0}: {1}</value>
                    </data>
        </root>
        """
}
