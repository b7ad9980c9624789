//! Why the bearer layer refuses a request, and the answer it gives: the status and the
//! `WWW-Authenticate: Bearer` challenge of RFC 6750 section 3, naming the resource metadata
//! (RFC 9728 section 5.1) and the scopes to ask for.

use http::{HeaderValue, Response, StatusCode, header};
use jsonwebtoken::errors::ErrorKind;

pub(super) use super::principal::{is_scope_token, quoted};

/// Why a bearer token was refused: the `error_description` of the `invalid_token` challenge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.description())]
#[non_exhaustive]
pub enum InvalidToken {
    /// Not a readable JWT, or its claims lack `sub`; or an introspection answer's `exp` or
    /// `nbf` is not a number (RFC 7519 section 2, NumericDate).
    Malformed,
    /// The `typ` header does not mark an access token: not `at+jwt` (RFC 9068 section 2.1),
    /// so possibly an ID token or another JWT signed by the same keys.
    Type,
    /// The signature does not verify with the configured keys.
    Signature,
    /// The token's algorithm is not accepted, or does not suit the key.
    Algorithm,
    /// No configured key matches the token's `kid`.
    UnknownKey,
    /// Past `exp` (beyond the leeway).
    Expired,
    /// Before `nbf`.
    NotYetValid,
    /// `aud` does not name this resource.
    Audience,
    /// `iss` is not an accepted issuer.
    Issuer,
    /// A required claim (`exp`, `aud`, `sub`, and `iss` unless any issuer is accepted) is
    /// missing.
    MissingClaim,
    /// The authorization server's introspection endpoint says the token is not active
    /// (revoked, expired, or unknown to it; RFC 7662 section 2.2).
    Inactive,
}

impl InvalidToken {
    pub(super) fn from_kind(kind: &ErrorKind) -> InvalidToken {
        match kind {
            ErrorKind::InvalidSignature => InvalidToken::Signature,
            ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
                InvalidToken::Algorithm
            }
            ErrorKind::ExpiredSignature => InvalidToken::Expired,
            ErrorKind::ImmatureSignature => InvalidToken::NotYetValid,
            ErrorKind::InvalidAudience => InvalidToken::Audience,
            ErrorKind::InvalidIssuer => InvalidToken::Issuer,
            ErrorKind::MissingRequiredClaim(_) => InvalidToken::MissingClaim,
            _ => InvalidToken::Malformed,
        }
    }

    /// The `error_description` (RFC 6750 section 3): one sentence of printable ASCII without
    /// quotes or backslashes.
    pub fn description(self) -> &'static str {
        match self {
            InvalidToken::Malformed => "The access token is malformed",
            InvalidToken::Type => "The token is not typed as an access token (at+jwt)",
            InvalidToken::Signature => "The access token signature is invalid",
            InvalidToken::Algorithm => "The access token algorithm is not accepted",
            InvalidToken::UnknownKey => "The access token names an unknown key",
            InvalidToken::Expired => "The access token expired",
            InvalidToken::NotYetValid => "The access token is not valid yet",
            InvalidToken::Audience => "The access token was not issued for this resource",
            InvalidToken::Issuer => "The access token was issued by an untrusted issuer",
            InvalidToken::MissingClaim => "The access token lacks a required claim",
            InvalidToken::Inactive => "The access token is not active",
        }
    }
}

/// Why a request's credentials were not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// No bearer token (no `Authorization` header, or another scheme): a bare challenge.
    NoToken,
    /// `Bearer` with nothing after it.
    Empty,
    /// `Bearer` with a token that is not visible ASCII (RFC 6750 section 2.1).
    NotAscii,
    /// More than one `Authorization` header: which credentials count is ambiguous.
    SeveralCredentials,
    /// A token that failed validation.
    Invalid(InvalidToken),
    /// The token could not be checked: the introspection endpoint did not answer in time, or
    /// not with a JSON object. Not the caller's fault, so not `invalid_token`.
    Unavailable,
}

impl Refusal {
    /// The answer: an empty body, the status and the challenge. `metadata_url` is the
    /// `resource_metadata` of every challenge; `scope` (space-separated; empty: left out) the
    /// `scope` of the 401 challenges, the scopes a client asks for when it signs in.
    pub(super) fn response<B: Default>(&self, metadata_url: &str, scope: &str) -> Response<B> {
        let scope = if scope.is_empty() {
            String::new()
        } else {
            format!(", scope={}", quoted(scope))
        };
        let metadata = format!("resource_metadata={}", quoted(metadata_url));
        let invalid_request = |description: &str| {
            format!(
                "Bearer error=\"invalid_request\", error_description={}, {metadata}",
                quoted(description)
            )
        };
        // RFC 6750 section 3.1: a request lacking credentials gets no error code; a malformed
        // one gets `invalid_request` and 400 (asking for a scope would not fix it); a token
        // failing validation gets `invalid_token` and 401.
        let (status, challenge) = match self {
            Refusal::NoToken => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer {metadata}{scope}"),
            ),
            Refusal::Empty => (
                StatusCode::BAD_REQUEST,
                invalid_request("The bearer token is empty"),
            ),
            Refusal::NotAscii => (
                StatusCode::BAD_REQUEST,
                invalid_request("The bearer token is not visible ASCII"),
            ),
            Refusal::SeveralCredentials => (
                StatusCode::BAD_REQUEST,
                invalid_request("The request carries more than one Authorization header"),
            ),
            // RFC 7662 leaves an unreachable authorization server to the resource server; a
            // 401 would make the client drop a token that may be good. Try again later.
            Refusal::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, String::new()),
            Refusal::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Bearer error=\"invalid_token\", error_description={}, {metadata}{scope}",
                    quoted(why.description())
                ),
            ),
        };
        let mut response = Response::new(B::default());
        *response.status_mut() = status;
        if let Refusal::Unavailable = self {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        } else if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const METADATA: &str = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";

    fn answer(refusal: &Refusal, scope: &str) -> (StatusCode, String) {
        let response: Response<()> = refusal.response(METADATA, scope);
        let challenge = response.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap();
        (response.status(), challenge.to_owned())
    }

    #[test]
    fn each_refusal_has_its_status_and_challenge() {
        assert_eq!(
            answer(&Refusal::NoToken, ""),
            (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{METADATA}\"")
            )
        );
        assert_eq!(
            answer(&Refusal::Invalid(InvalidToken::Expired), ""),
            (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Bearer error=\"invalid_token\", error_description=\"The access token \
                     expired\", resource_metadata=\"{METADATA}\""
                )
            )
        );
        for malformed in [
            Refusal::Empty,
            Refusal::NotAscii,
            Refusal::SeveralCredentials,
        ] {
            let (status, challenge) = answer(&malformed, "charge");
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert!(
                challenge.starts_with("Bearer error=\"invalid_request\", error_description=\""),
                "{challenge}"
            );
            assert!(!challenge.contains("scope="), "{challenge}");
        }
    }

    #[test]
    fn the_401_challenges_name_the_scopes_to_ask_for() {
        assert_eq!(
            answer(&Refusal::NoToken, "invoices:read charge").1,
            format!("Bearer resource_metadata=\"{METADATA}\", scope=\"invoices:read charge\"")
        );
        let (status, challenge) = answer(&Refusal::Invalid(InvalidToken::Type), "charge");
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\"")
                && challenge.ends_with(", scope=\"charge\""),
            "{challenge}"
        );
    }

    #[test]
    fn quotes_and_backslashes_in_the_metadata_url_are_escaped() {
        let url = r#"https://mcp.example.com/a"b\c"#;
        for refusal in [
            Refusal::NoToken,
            Refusal::Empty,
            Refusal::Invalid(InvalidToken::Expired),
        ] {
            let response: Response<()> = refusal.response(url, "");
            let challenge = response.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .unwrap();
            assert!(
                challenge.ends_with(r#"resource_metadata="https://mcp.example.com/a\"b\\c""#),
                "{challenge}"
            );
        }
    }

    #[test]
    fn scope_tokens_have_the_rfc_6749_syntax() {
        for scope in [
            "charge",
            "invoices:write",
            "https://api.example/x.read",
            "a!#[]~",
        ] {
            assert!(is_scope_token(scope), "{scope}");
        }
        for scope in ["", "a b", "a\"b", "a\\b", "é", "a\tb"] {
            assert!(!is_scope_token(scope), "{scope}");
        }
    }

    #[test]
    fn descriptions_are_printable_ascii_without_quotes() {
        use InvalidToken::*;
        let all = [
            Malformed,
            Type,
            Signature,
            Algorithm,
            UnknownKey,
            Expired,
            NotYetValid,
            Audience,
            Issuer,
            MissingClaim,
            Inactive,
        ];
        for why in all {
            let text = why.description();
            assert!(
                text.bytes()
                    .all(|b| matches!(b, 0x20..=0x21 | 0x23..=0x5B | 0x5D..=0x7E)),
                "{text}"
            );
        }
    }
}
