import Foundation

/// The sandbox's admin endpoint, served on both ports under `/_sandbox/`, so that scripts and
/// tests in other processes can steer it:
///
/// - `GET /_sandbox/stats`: counters (accepted pushes, provider tokens, access tokens, per
///   token, per connection) as JSON;
/// - `PUT /_sandbox/tokens/<token>` with a ``TokenBehavior`` as JSON: script a token;
///   `DELETE /_sandbox/tokens/<token>`: forget it;
/// - `POST /_sandbox/apns/expire-provider-tokens`: refuse every provider token issued so far;
/// - `POST /_sandbox/fcm/revoke-access-tokens`: forget every access token (next sends get 401);
/// - `PUT /_sandbox/response-delay` with `{"delay_ms": 30}`: answer pushes that much later;
/// - `PUT /_sandbox/apns/outage` (or `fcm/outage`) with a ``ProviderFault`` as JSON, e.g.
///   `{"status": 503, "fraction": 0.5}` or `{"status": 0, "delay_ms": 2000}`: a provider-wide
///   outage or slow answers; `DELETE` the same path ends it.
struct SandboxAdminRoutes: Sendable {
    let sandbox: RunningSandbox

    static let prefix = "/_sandbox/"

    func handle(_ request: ServerRequest) -> ServerResponse {
        let path = String(request.path.dropFirst(Self.prefix.count))
        switch (request.method, path) {
        case ("GET", "stats"):
            return .json(GoogleErrorBody.encode(sandbox.statisticsJSON()))
        case ("POST", "apns/expire-provider-tokens"):
            sandbox.apns.expireProviderTokens(issuedBefore: sandbox.configuration.clock().addingTimeInterval(1))
            return ServerResponse(status: 204)
        case ("PUT", "response-delay"), ("POST", "response-delay"):
            struct Delay: Decodable { var delay_ms: Double }
            guard let delay = try? JSONDecoder().decode(Delay.self, from: Data(request.body)), delay.delay_ms >= 0, delay.delay_ms <= 600_000 else {
                return .text("expected {\"delay_ms\": <0 to 600000>}\n", status: 400)
            }
            sandbox.responseDelay = .microseconds(Int64((delay.delay_ms * 1000).rounded()))
            return ServerResponse(status: 204)
        case ("PUT", "apns/outage"), ("POST", "apns/outage"), ("PUT", "fcm/outage"), ("POST", "fcm/outage"):
            let provider: RecordedPush.Provider = path.hasPrefix("apns") ? .apns : .fcm
            let fault: ProviderFault
            do {
                fault = try JSONDecoder().decode(ProviderFault.self, from: Data(request.body))
            } catch {
                return .text("expected {\"status\": 500|503|0, \"fraction\": 0..1, \"delay_ms\": 0..600000}: \(error)\n", status: 400)
            }
            if let problem = fault.problem { return .text("\(problem)\n", status: 400) }
            sandbox.setFault(fault, for: provider)
            return ServerResponse(status: 204)
        case ("DELETE", "apns/outage"), ("DELETE", "fcm/outage"):
            sandbox.setFault(nil, for: path.hasPrefix("apns") ? .apns : .fcm)
            return ServerResponse(status: 204)
        case ("POST", "fcm/revoke-access-tokens"):
            sandbox.fcm.oauth.revokeAccessTokens()
            return ServerResponse(status: 204)
        case (let method, let route) where route.hasPrefix("tokens/"):
            let token = String(route.dropFirst("tokens/".count)).removingPercentEncoding ?? ""
            guard !token.isEmpty else { return .text("no token in the path\n", status: 400) }
            switch method {
            case "PUT", "POST":
                do {
                    let behavior = try JSONDecoder().decode(TokenBehavior.self, from: Data(request.body))
                    sandbox.behaviors.set(behavior, for: token)
                    return ServerResponse(status: 204)
                } catch {
                    return .text("not a token behaviour: \(error)\n", status: 400)
                }
            case "DELETE":
                sandbox.behaviors.set(nil, for: token)
                return ServerResponse(status: 204)
            default:
                return .text("use PUT or DELETE\n", status: 405)
            }
        default:
            return .text("unknown admin route\n", status: 404)
        }
    }
}
