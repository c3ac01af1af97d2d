/// An FCM error answer, rendered by ``GoogleErrorBody``.
struct FCMRejection: Error, Equatable {
    let status: Int
    let canonical: String
    let message: String
    var errorCode: String?
    var field: String?
    var retryAfter: Int?

    static func invalid(_ message: String, errorCode: String? = nil, field: String? = nil) -> FCMRejection {
        FCMRejection(status: 400, canonical: "INVALID_ARGUMENT", message: message, errorCode: errorCode, field: field)
    }

    var response: ServerResponse {
        GoogleErrorBody.api(status: status, canonical: canonical, message: message, errorCode: errorCode, field: field, retryAfter: retryAfter)
    }
}
