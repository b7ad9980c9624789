//! Contract deltas as a `<validation_error>` lists them in its `<contract_awareness>` section:
//! the class of a change, where it applies and its sentence.

/// How a change affects a caller that learned the old contract, highest first (the derived
/// order sorts [`DeltaClass::Breaking`] first). A [`diff`](crate::contract::diff()) classifies
/// every change this way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeltaClass {
    /// A call that was valid can now fail: a tool or action removed or renamed, a required
    /// field added, a field removed (unknown fields are rejected), a field's type changed, an
    /// enum value removed, an action becoming destructive or losing read-only, the
    /// discriminator renamed, a scope an action requires added.
    Breaking,
    /// A call may behave differently: the idempotent or open-world hint changed, an error code
    /// added to an action (or its flags changed), a constraint tightened, any other schema
    /// change, an output schema changed or removed.
    Risky,
    /// Old calls keep working: a tool or action added, an optional field added, a required
    /// field becoming optional, an enum value added, an error code removed, an action
    /// becoming read-only or no longer destructive, a hint set to its MCP default, an output
    /// schema added, a required scope removed.
    Safe,
    /// Text only: a tool, action or field description, a tool or action title.
    Cosmetic,
}

crate::envelope::code::wire_strings! {
    DeltaClass, "delta class",
    /// `BREAKING`, `RISKY`, `SAFE` or `COSMETIC`.
    as_str,
    /// Parses the wire strings of [`DeltaClass::as_str`] (exact, uppercase).
    from_str,
    Breaking => "BREAKING",
    Risky => "RISKY",
    Safe => "SAFE",
    Cosmetic => "COSMETIC",
}

/// One delta as a validation error shows it: its class, where it applies and its sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopedDelta {
    /// BREAKING or RISKY in the envelopes a fusion server writes (it lists no other).
    pub class: DeltaClass,
    /// `tool.action` (flat exposition: the flat tool name `tool_action`), or `tool` for a
    /// change to the tool as a whole.
    pub scope: String,
    /// One sentence with the before and after values.
    pub text: String,
}
