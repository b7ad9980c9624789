//! The bearer layer's validation, challenge scopes and credentials, without HTTP.

use super::*;
use http::Response;
use jsonwebtoken::{EncodingKey, Header};
use serde_json::json;

const SECRET: &[u8] = b"a test secret of thirty-two bytes!!";
const RESOURCE: &str = "https://mcp.example.com/mcp";

fn auth() -> BearerAuth {
    BearerAuth::new(
        RESOURCE,
        "https://id.example.com",
        DecodingKey::from_secret(SECRET).unwrap(),
        Algorithm::HS256,
    )
}

/// `claims` signed as an access token (`typ: at+jwt`).
fn token(claims: Value) -> String {
    typed(Some("at+jwt"), claims)
}

fn typed(typ: Option<&str>, claims: Value) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.typ = typ.map(str::to_owned);
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(SECRET).unwrap()).unwrap()
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

fn good() -> Value {
    json!({
        "sub": "alice", "aud": RESOURCE, "iss": "https://id.example.com",
        "exp": now() + 600, "scope": "invoices:read charge",
    })
}

#[test]
fn a_good_token_gives_its_principal() {
    let principal = auth().validate(&token(good())).unwrap();
    assert_eq!(principal.subject(), "alice");
    assert_eq!(principal.scopes(), ["invoices:read", "charge"]);
}

#[test]
fn each_failed_check_is_named() {
    let with = |key: &str, value: Value| {
        let mut claims = good();
        claims[key] = value;
        auth().validate(&token(claims)).unwrap_err()
    };
    assert_eq!(with("exp", json!(now() - 3600)), InvalidToken::Expired);
    assert_eq!(with("nbf", json!(now() + 3600)), InvalidToken::NotYetValid);
    assert!(with("nbf", json!("soon")) == InvalidToken::Malformed);
    assert_eq!(
        with("aud", json!("https://other.example/mcp")),
        InvalidToken::Audience
    );
    assert_eq!(
        with("iss", json!("https://evil.example")),
        InvalidToken::Issuer
    );
    let mut no_sub = good();
    no_sub.as_object_mut().unwrap().remove("sub");
    assert_eq!(
        auth().validate(&token(no_sub)).unwrap_err(),
        InvalidToken::MissingClaim
    );
    let mut header = Header::new(Algorithm::HS256);
    header.typ = Some("at+jwt".to_owned());
    let forged = jsonwebtoken::encode(
        &header,
        &good(),
        &EncodingKey::from_secret(b"another secret of thirty-two bytes!").unwrap(),
    )
    .unwrap();
    assert_eq!(
        auth().validate(&forged).unwrap_err(),
        InvalidToken::Signature
    );
    assert_eq!(
        auth().validate("not.a.jwt").unwrap_err(),
        InvalidToken::Malformed
    );
}

#[test]
fn a_second_audience_is_accepted_when_configured() {
    let mut claims = good();
    claims["aud"] = json!("api://billing");
    assert!(auth().validate(&token(claims.clone())).is_err());
    assert!(
        auth()
            .audience("api://billing")
            .validate(&token(claims))
            .is_ok()
    );
}

#[test]
fn a_token_of_another_issuer_or_of_none_is_refused() {
    let mut evil = good();
    evil["iss"] = json!("https://evil.example");
    assert_eq!(
        auth().validate(&token(evil.clone())).unwrap_err(),
        InvalidToken::Issuer
    );
    let mut none = good();
    none.as_object_mut().unwrap().remove("iss");
    assert_eq!(
        auth().validate(&token(none.clone())).unwrap_err(),
        InvalidToken::MissingClaim
    );
    assert!(
        auth()
            .issuer("https://evil.example")
            .validate(&token(evil.clone()))
            .is_ok()
    );
    // Only when asked for by name.
    let any = BearerAuth::any_issuer(
        RESOURCE,
        DecodingKey::from_secret(SECRET).unwrap(),
        Algorithm::HS256,
    );
    assert!(any.validate(&token(evil)).is_ok());
    assert!(any.validate(&token(none)).is_ok());
}

#[test]
fn only_access_tokens_typed_at_jwt_are_accepted() {
    for typ in [
        "at+jwt",
        "application/at+jwt",
        "AT+JWT",
        "Application/At+Jwt",
    ] {
        assert!(auth().validate(&typed(Some(typ), good())).is_ok(), "{typ}");
    }
    for typ in [Some("JWT"), None, Some("id+jwt"), Some("at+jwt2")] {
        assert_eq!(
            auth().validate(&typed(typ, good())).unwrap_err(),
            InvalidToken::Type,
            "{typ:?}"
        );
    }
    let untyped = auth().accept_untyped_jwt();
    for typ in [Some("at+jwt"), Some("JWT"), Some("application/jwt"), None] {
        assert!(untyped.validate(&typed(typ, good())).is_ok(), "{typ:?}");
    }
    assert_eq!(
        untyped
            .validate(&typed(Some("id+jwt"), good()))
            .unwrap_err(),
        InvalidToken::Type
    );
    // An ID token (typed JWT, `aud` the client id) is still refused for its audience.
    let mut id_token = good();
    id_token["aud"] = json!("billing-client");
    assert_eq!(
        untyped.validate(&typed(Some("JWT"), id_token)).unwrap_err(),
        InvalidToken::Audience
    );
}

#[test]
fn the_challenge_scopes_are_scope_tokens_each_once() {
    let auth = auth().scopes(["invoices:read", "charge", "invoices:read", "two words", ""]);
    assert_eq!(auth.config.scope, "invoices:read charge");
    let response: Response<()> = Refusal::NoToken.response("", &auth.config.scope);
    assert!(
        response.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap()
            .ends_with(", scope=\"invoices:read charge\""),
    );
}

#[test]
fn credentials_come_from_one_authorization_header() {
    let refusal = |values: &[&str]| {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::AUTHORIZATION, value.parse().unwrap());
        }
        auth().authenticate(&headers).err()
    };
    let sent = format!("Bearer {}", token(good()));
    assert_eq!(refusal(&[&sent]), None);
    assert_eq!(refusal(&[]), Some(Refusal::NoToken));
    assert_eq!(refusal(&["Basic YTpi"]), Some(Refusal::NoToken));
    assert_eq!(refusal(&["Bearer "]), Some(Refusal::Empty));
    // RFC 6750 section 2.1: a token is visible ASCII; other bytes make a malformed request.
    let accented = format!("Bearer {}é", token(good()));
    assert_eq!(refusal(&[&accented]), Some(Refusal::NotAscii));
    for spaced in ["Bearer a b", "Bearer a\tb"] {
        assert_eq!(refusal(&[spaced]), Some(Refusal::NotAscii), "{spaced:?}");
    }
    // Spaces around the token are not part of it.
    assert_eq!(refusal(&[&format!("Bearer  {} ", token(good()))]), None);
    assert_eq!(refusal(&["Basic é"]), Some(Refusal::NoToken));
    // RFC 6750 section 3.1: more than one set of credentials is a malformed request.
    for twice in [[sent.as_str(), &sent], [&sent, "Basic YTpi"]] {
        assert_eq!(refusal(&twice), Some(Refusal::SeveralCredentials));
    }
    let mut expired = good();
    expired["exp"] = json!(now() - 3600);
    assert_eq!(
        refusal(&[&format!("bearer {}", token(expired))]),
        Some(Refusal::Invalid(InvalidToken::Expired))
    );
}

#[test]
fn a_token_verified_once_is_not_verified_again_until_its_exp() {
    let auth = auth();
    let token = token(good());
    for _ in 0..3 {
        assert_eq!(auth.validate(&token).unwrap().subject(), "alice");
    }
    assert_eq!(auth.config.cache.misses(), 1);
    // Past `exp` but within the leeway: accepted, yet checked again on every request.
    let mut late = good();
    late["exp"] = json!(now() - 10);
    let late = self::token(late);
    for _ in 0..2 {
        assert!(auth.validate(&late).is_ok());
    }
    assert_eq!(auth.config.cache.misses(), 3);
    // A change of configuration forgets what was verified under the old one.
    let strict = auth.clone().audience("api://billing");
    assert!(strict.validate(&token).is_ok());
    assert_eq!(strict.config.cache.misses(), 1);
    // Refusals are not remembered.
    let mut expired = good();
    expired["exp"] = json!(now() - 3600);
    let expired = self::token(expired);
    for _ in 0..2 {
        assert_eq!(auth.validate(&expired).unwrap_err(), InvalidToken::Expired);
    }
    assert_eq!(auth.config.cache.misses(), 5);
    let off = auth.clone().token_cache(0);
    for _ in 0..2 {
        assert!(off.validate(&token).is_ok());
    }
    assert_eq!(off.config.cache.misses(), 2);
}
