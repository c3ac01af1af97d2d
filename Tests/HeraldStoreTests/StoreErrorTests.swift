import HeraldPostgres
import Testing

@testable import HeraldStore

@Suite("StoreError")
struct StoreErrorTests {
    @Test(arguments: [
        (PostgresError.Code.connectionLost, nil as String?, StoreError.Code.unavailable, true),
        (.connectionFailed, nil, .unavailable, true),
        (.timeout, "57014", .timeout, true),
        (.serializationFailure, "40P01", .contention, true),
        (.uniqueViolation, "23505", .conflict, false),
        (.serverError, "57P01", .unavailable, true),
        (.serverError, "53300", .unavailable, true),
        (.serverError, "25006", .unavailable, true),
        (.serverError, "22P02", .invalidData, false),
        (.serverError, "42P01", .schemaMismatch, false),
        (.serverError, "XX000", .database, false),
        (.closed, nil, .closed, false),
        (.decodingFailed, nil, .schemaMismatch, false),
    ])
    func classifiesDatabaseErrors(code: PostgresError.Code, sqlState: String?, expected: StoreError.Code, transient: Bool) {
        let error = StoreError(PostgresError(code: code, message: "m", sqlState: sqlState), operation: "Test.op")
        #expect(error.code == expected)
        #expect(error.isTransient == transient)
    }

    @Test func descriptionIsRedactedAndDebugDescriptionIsNot() {
        var underlying = PostgresError(code: .serverError, message: "server rejected", sqlState: "22P02", query: "SELECT $1::int")
        underlying.serverMessage = "invalid input syntax for type integer: \"secret-token\""
        let error = StoreError(underlying, operation: "DeviceRepository.setToken")
        #expect(error.description.contains("DeviceRepository.setToken"))
        #expect(error.description.contains("invalidData"))
        #expect(!error.description.contains("secret-token"))
        #expect(error.debugDescription.contains("secret-token"))
        #expect(error.debugDescription.contains("SELECT $1::int"))
    }
}
