//! The schemas generated code gives an action's definition, from schemars: its arguments'
//! input schema and its success value's output schema.

/// The JSON Schema of an arguments type as an object map (what schemars generates, with
/// `$defs`), for [`ActionDefinition::input_schema`](crate::ActionDefinition::input_schema).
pub fn schema_for<T: ::schemars::JsonSchema>()
-> ::serde_json::Map<::std::string::String, ::serde_json::Value> {
    match ::serde_json::to_value(::schemars::schema_for!(T)) {
        Ok(::serde_json::Value::Object(map)) => map,
        // A boolean schema (`true`): any object.
        _ => empty_object_schema(),
    }
}

/// The JSON Schema of an action's success type `T`, for
/// [`ActionDefinition::output_schema`](crate::ActionDefinition::output_schema)
/// (`#[action(output_schema)]`): schemars' *serialize* contract, because the server writes the
/// value (an `Option` field without `skip_serializing_if` is always present, and required), in
/// JSON Schema 2020-12 with `$defs`. Kept whatever its shape: a server checks that it is an
/// object schema (`serde_json::Value`'s, which accepts anything, is not) before advertising it.
pub fn output_schema_for<T: ::schemars::JsonSchema>()
-> ::serde_json::Map<::std::string::String, ::serde_json::Value> {
    let schema = ::schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    match ::serde_json::to_value(schema) {
        Ok(::serde_json::Value::Object(map)) => map,
        // A boolean schema: `{}` says the same (`true`), and is no object schema either.
        _ => ::serde_json::Map::new(),
    }
}

/// The schema of an action without arguments: an object with no properties.
pub fn empty_object_schema() -> ::serde_json::Map<::std::string::String, ::serde_json::Value> {
    let mut map = ::serde_json::Map::new();
    map.insert("type".into(), "object".into());
    map.insert(
        "properties".into(),
        ::serde_json::Value::Object(::serde_json::Map::new()),
    );
    map
}
