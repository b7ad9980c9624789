//! A `Deserializer` over a borrowed [`Value`] that knows where it failed.
//!
//! Arguments are deserialized from the `&Value` they were validated in (they must stay available
//! to word a failure). serde_json's own `&Value` deserializer says what failed but not where;
//! `serde_path_to_error` says where, but copies every object key into a `String` on the way,
//! success or not. [`Tracked`] visits exactly what serde_json's `&Value` deserializer visits,
//! with the same messages, and builds the path only while an error travels back up through it:
//! nothing is allocated for tracking on success. Using one deserializer on both paths also
//! compiles each arguments type's `Deserialize` impl once instead of twice (once for `&Value`,
//! once more for `serde_path_to_error` on failure), which is most of what a tool's actions cost
//! to compile.
//!
//! A tool's call owns its arguments object, and [`deserialize_in_place`] reads one that the fast
//! check accepted (flat, scalars only) without copying its strings: each moves into the
//! arguments type, as with serde_json's owned `Value` deserializer, after a copy of its bytes
//! into a small buffer on the stack ([`Undo`]). A failure puts the strings back, and the
//! borrowed path words it: the envelope never depends on which path ran. This saves an
//! allocation and a free per string: 5 % to 15 % of an in-process dispatch's time, depending on
//! the harness (BENCHMARKS.md, "Dispatch: strings moved").
//!
//! Paths follow `serde_path_to_error`'s rules: an element's index, an object value's key, the
//! key itself when a key fails (`unknown field`), and an enum variant's name for a failure
//! inside the variant's content. An error a visitor catches and drops takes its path with it.

use std::fmt;

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, EnumAccess, Expected, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Number, Value};

/// One step of the path to a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// An object's key, or the variant of an enum.
    Key(String),
    /// An array's index.
    Index(usize),
}

/// Why deserializing failed (serde's message, word for word as serde_json writes it for
/// serde's standard errors) and where.
#[derive(Debug)]
pub(crate) struct Failure(Box<FailureInner>);

#[derive(Debug)]
struct FailureInner {
    message: String,
    /// Innermost step first: each level adds its own step as the error passes through it.
    steps: Vec<Step>,
    /// Whether the failure is an object's key itself (the innermost step), which could not
    /// be read as the map's key type (`"300"` for a `u8` key), rather than a value.
    at_key: bool,
}

impl Failure {
    /// serde's message.
    pub(crate) fn message(&self) -> &str {
        &self.0.message
    }

    /// The path from the root of the arguments to the failure, outermost step first.
    pub(crate) fn path(&self) -> impl Iterator<Item = &Step> {
        self.0.steps.iter().rev()
    }

    /// Whether the failure is the last key of [`Failure::path`] itself, not its value.
    pub(crate) fn is_key(&self) -> bool {
        self.0.at_key
    }

    #[cold]
    fn at(mut self, step: Step) -> Failure {
        self.0.steps.push(step);
        self
    }

    /// [`Failure::at`] for a failure reading the key of `step`, not its value.
    #[cold]
    fn at_key(mut self, step: Step) -> Failure {
        self.0.at_key = self.0.steps.is_empty();
        self.at(step)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Failure {}

impl de::Error for Failure {
    #[cold]
    fn custom<T: fmt::Display>(message: T) -> Failure {
        Failure(Box::new(FailureInner {
            message: message.to_string(),
            steps: Vec::new(),
            at_key: false,
        }))
    }

    #[cold]
    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Failure {
        Failure::custom(format_args!(
            "invalid type: {}, expected {expected}",
            AsJson(unexpected)
        ))
    }

    #[cold]
    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Failure {
        Failure::custom(format_args!(
            "invalid value: {}, expected {expected}",
            AsJson(unexpected)
        ))
    }
}

/// An unexpected value in serde_json's words: `null` rather than serde's `unit value`, and
/// floats written as JSON writes them.
struct AsJson<'a>(Unexpected<'a>);

impl fmt::Display for AsJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Unexpected::Unit => f.write_str("null"),
            Unexpected::Float(value) => match Number::from_f64(value) {
                Some(number) => write!(f, "floating point `{number}`"),
                None => self.0.fmt(f),
            },
            other => other.fmt(f),
        }
    }
}

/// Deserializes `T` from `value`, saying where it failed when it does.
pub(crate) fn deserialize<'de, T: de::Deserialize<'de>>(value: &'de Value) -> Result<T, Failure> {
    T::deserialize(Tracked(value))
}

/// [`deserialize`] from an arguments object the caller owns: the object's own string values
/// are moved into `T` where serde_json's owned `Value` deserializer would move them
/// (`visit_string`), instead of being copied, which saves an allocation and a free for each.
/// Each is copied into `undo` first (a fixed buffer on the stack, no allocation); one that does
/// not fit is read in place, as [`deserialize`] reads it. Nested values are always read in
/// place.
///
/// On success the strings left in `args` are empty. On failure `args` may have lost strings
/// too: [`Undo::restore`] puts them back, after which [`deserialize`] on the object answers
/// as it always does, with the failure worded and located. (Failures here carry no promise:
/// a request this path does not answer, for a top level that is not an object read as a map
/// or a struct, fails here and is answered there.)
///
/// What a visitor sees differs in one way: `visit_string` with the string, where [`Tracked`]
/// calls `visit_borrowed_str`. serde makes the two equivalent (`Visitor::visit_string`: "It
/// is never correct to implement `visit_string` without implementing `visit_str`"), so only a
/// visitor breaking that contract can tell; it then sees what `serde_json::from_value` gives
/// it (review 17 built two such visitors to check).
pub(crate) fn deserialize_in_place<T: de::DeserializeOwned>(
    args: &mut Map<String, Value>,
    undo: &mut Undo,
) -> Result<T, Failure> {
    T::deserialize(Top { args, undo })
}

/// How many bytes of string values an [`Undo`] holds: enough for the identifiers and names
/// most calls send, small enough to clear without a call (a longer value is read in place).
const UNDO_BYTES: usize = 128;

/// How many string values an [`Undo`] holds.
const UNDO_STRINGS: usize = 4;

/// Copies of the string values [`deserialize_in_place`] moved out of an object, to put them
/// back when the arguments must be worded after all (a deserialization or rule failure). On
/// the stack and small: taking a string must cost less than the allocation it saves.
pub(crate) struct Undo {
    bytes: [u8; UNDO_BYTES],
    /// For each copy: the position of its entry in the object and where its bytes end.
    taken: [(u8, u8); UNDO_STRINGS],
    used: u8,
    count: u8,
}

impl Undo {
    pub(crate) fn new() -> Undo {
        Undo {
            bytes: [0; UNDO_BYTES],
            taken: [(0, 0); UNDO_STRINGS],
            used: 0,
            count: 0,
        }
    }

    /// Copies `text`, the value at `position`, when there is room; `false` when there is not.
    #[inline]
    fn record(&mut self, position: usize, text: &str) -> bool {
        let start = usize::from(self.used);
        let end = start + text.len();
        let count = usize::from(self.count);
        let (Ok(at), Ok(end_byte)) = (u8::try_from(position), u8::try_from(end)) else {
            return false;
        };
        if count == UNDO_STRINGS || end > UNDO_BYTES {
            return false;
        }
        self.bytes[start..end].copy_from_slice(text.as_bytes());
        self.taken[count] = (at, end_byte);
        self.count += 1;
        self.used = end_byte;
        true
    }

    /// Puts every string taken from `args` back, as it was sent.
    #[cold]
    pub(crate) fn restore(&self, args: &mut Map<String, Value>) {
        let mut start = 0;
        let mut taken = self.taken[..usize::from(self.count)].iter().peekable();
        for (position, value) in args.values_mut().enumerate() {
            let Some(&&(at, end)) = taken.peek() else {
                break;
            };
            let end = usize::from(end);
            if usize::from(at) == position {
                let text = std::str::from_utf8(&self.bytes[start..end])
                    .expect("the bytes of a string, copied whole");
                *value = Value::String(text.to_owned());
                start = end;
                taken.next();
            }
        }
    }
}

/// The top of [`deserialize_in_place`]: the object, read as a map or a struct as [`Tracked`]
/// reads it (also behind `Option` or a newtype, which ask for the same object again). Every
/// other request fails, and is answered by [`deserialize`] after [`Undo::restore`].
struct Top<'de, 'u> {
    args: &'de mut Map<String, Value>,
    undo: &'u mut Undo,
}

impl<'de> Top<'de, '_> {
    fn visit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        let len = self.args.len();
        let fields = Fields {
            entries: Entries::Taking(self.args.iter_mut(), self.undo, 0),
            pending: None,
        };
        visit_fields(fields, len, visitor)
    }
}

/// Requests [`Top`] leaves to [`deserialize`], with the parameters each takes before the visitor.
macro_rules! elsewhere {
    ($($method:ident($($ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $(_: $ty,)* _: V) -> Result<V::Value, Failure> {
            Err(read_in_place())
        }
    )*};
}

/// Why [`Top`] did not answer a request (never shown: the caller answers it in place).
#[cold]
fn read_in_place() -> Failure {
    de::Error::custom("read in place")
}

impl<'de> Deserializer<'de> for Top<'de, '_> {
    type Error = Failure;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        self.visit(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        self.visit(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Failure> {
        self.visit(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Failure> {
        if name == RAW_VALUE {
            return Err(read_in_place());
        }
        visitor.visit_newtype_struct(self)
    }

    elsewhere! {
        deserialize_bool(); deserialize_i8(); deserialize_i16(); deserialize_i32();
        deserialize_i64(); deserialize_i128(); deserialize_u8(); deserialize_u16();
        deserialize_u32(); deserialize_u64(); deserialize_u128(); deserialize_f32();
        deserialize_f64(); deserialize_char(); deserialize_str(); deserialize_string();
        deserialize_bytes(); deserialize_byte_buf(); deserialize_unit(); deserialize_seq();
        deserialize_identifier(); deserialize_ignored_any();
        deserialize_unit_struct(&'static str);
        deserialize_tuple(usize);
        deserialize_tuple_struct(&'static str, usize);
        deserialize_enum(&'static str, &'static [&'static str]);
    }
}

/// A string value taken out of its object (and copied into the [`Undo`]): handed over by value
/// wherever serde_json's owned `Value` deserializer hands a string over, and put back into
/// its place for every other request, which [`Tracked`] then answers as it always does (the
/// same visits, the same messages).
struct Taken<'de> {
    text: String,
    slot: &'de mut Value,
}

impl<'de> Taken<'de> {
    /// The string at `position` taken out of `value`, or `value` itself when it is not a string
    /// or its copy does not fit in `undo`.
    #[inline]
    fn from(
        value: &'de mut Value,
        position: usize,
        undo: &mut Undo,
    ) -> Result<Taken<'de>, &'de mut Value> {
        let Value::String(text) = value else {
            return Err(value);
        };
        if !undo.record(position, text) {
            return Err(value);
        }
        let text = std::mem::take(text);
        Ok(Taken { text, slot: value })
    }

    fn put_back(self) -> Tracked<'de> {
        let Taken { text, slot } = self;
        *slot = Value::String(text);
        Tracked(slot)
    }
}

/// Requests [`Taken`] hands the string over for.
macro_rules! hand_over {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
            visitor.visit_string(self.text)
        }
    )*};
}

/// Requests [`Taken`] answers through [`Tracked`], the string put back, with the parameters
/// each takes before the visitor.
macro_rules! put_back {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Failure> {
            self.put_back().$method($($arg,)* visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for Taken<'de> {
    type Error = Failure;

    hand_over! {
        deserialize_any deserialize_char deserialize_str deserialize_string deserialize_bytes
        deserialize_byte_buf deserialize_identifier
    }

    put_back! {
        deserialize_bool(); deserialize_i8(); deserialize_i16(); deserialize_i32();
        deserialize_i64(); deserialize_i128(); deserialize_u8(); deserialize_u16();
        deserialize_u32(); deserialize_u64(); deserialize_u128(); deserialize_f32();
        deserialize_f64(); deserialize_unit(); deserialize_seq(); deserialize_map();
        deserialize_unit_struct(name: &'static str);
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Failure> {
        if name == RAW_VALUE {
            return self.put_back().deserialize_newtype_struct(name, visitor);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        visitor.visit_unit()
    }
}

/// serde_json's `&Value` deserializer, with a path on failure.
#[derive(Clone, Copy)]
pub(crate) struct Tracked<'de>(&'de Value);

/// Typed requests answered by another method of the same deserializer, as serde_json's
/// `&Value` deserializer answers them.
macro_rules! forward {
    ($($target:ident: $($method:ident)*;)*) => {$($(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
            self.$target(visitor)
        }
    )*)*};
}

impl<'de> Deserializer<'de> for Tracked<'de> {
    type Error = Failure;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => visit_number(n, visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(map) => visit_object(map, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Failure> {
        let (variant, content) = match self.0 {
            Value::String(variant) => (variant.as_str(), None),
            Value::Object(map) => {
                let mut entries = map.iter();
                match (entries.next(), entries.next()) {
                    (Some((variant, content)), None) => (variant.as_str(), Some(content)),
                    _ => {
                        return Err(de::Error::invalid_value(
                            Unexpected::Map,
                            &"map with a single key",
                        ));
                    }
                }
            }
            other => {
                return Err(de::Error::invalid_type(unexpected(other), &"string or map"));
            }
        };
        visitor.visit_enum(Enum { variant, content })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Failure> {
        // serde_json's `raw_value` feature, which any crate in the build may turn on: a
        // `RawValue` asks for this newtype and takes the value's JSON text, as serde_json's
        // `&Value` deserializer hands it over.
        if name == RAW_VALUE {
            return visitor.visit_map(RawJson(Some(self.0.to_string())));
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        visitor.visit_unit()
    }

    // The typed requests accept only the JSON types serde_json's `&Value` deserializer accepts
    // for them, so a visitor that would take something else (a field identifier taking an
    // index) sees what it sees with serde_json.
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(*b),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Failure> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(map) => visit_object(map, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    forward! {
        number: deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
            deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
            deserialize_f32 deserialize_f64;
        deserialize_str: deserialize_char deserialize_string deserialize_identifier;
        deserialize_bytes: deserialize_byte_buf;
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Failure> {
        self.deserialize_unit(visitor)
    }
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Failure> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Failure> {
        self.deserialize_seq(visitor)
    }
}

impl<'de> Tracked<'de> {
    fn number<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            Value::Number(n) => visit_number(n, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }
}

/// The newtype name serde_json's `RawValue` deserializes as (`serde_json::raw::TOKEN`).
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// A value's JSON text as a `RawValue` reads it: one entry, keyed by [`RAW_VALUE`].
struct RawJson(Option<String>);

impl<'de> MapAccess<'de> for RawJson {
    type Error = Failure;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Failure> {
        if self.0.is_none() {
            return Ok(None);
        }
        seed.deserialize(de::value::BorrowedStrDeserializer::new(RAW_VALUE))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Failure> {
        match self.0.take() {
            Some(json) => seed.deserialize(de::IntoDeserializer::into_deserializer(json)),
            None => Err(de::Error::custom("value is missing")),
        }
    }
}

/// "invalid type: {what value is}, expected {what the visitor expects}".
#[cold]
fn invalid_type(value: &Value, expected: &dyn Expected) -> Failure {
    de::Error::invalid_type(unexpected(value), expected)
}

/// A number as serde_json visits it: a non-negative integer as `u64`, a negative one as `i64`,
/// anything else as `f64`.
fn visit_number<'de, V: Visitor<'de>>(n: &Number, visitor: V) -> Result<V::Value, Failure> {
    if let Some(u) = n.as_u64() {
        visitor.visit_u64(u)
    } else if let Some(i) = n.as_i64() {
        visitor.visit_i64(i)
    } else {
        visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
    }
}

fn visit_array<'de, V: Visitor<'de>>(items: &'de [Value], visitor: V) -> Result<V::Value, Failure> {
    let mut elements = Elements {
        items: items.iter(),
        index: 0,
    };
    let value = visitor.visit_seq(&mut elements)?;
    if elements.items.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(
            items.len(),
            &"fewer elements in array",
        ))
    }
}

fn visit_object<'de, V: Visitor<'de>>(
    map: &'de Map<String, Value>,
    visitor: V,
) -> Result<V::Value, Failure> {
    visit_fields(
        Fields {
            entries: Entries::Shared(map.iter()),
            pending: None,
        },
        map.len(),
        visitor,
    )
}

/// Visits an object's `fields` (of which there are `len`), refusing a visitor that leaves
/// some unread as serde_json does.
fn visit_fields<'de, V: Visitor<'de>>(
    mut fields: Fields<'de, '_>,
    len: usize,
    visitor: V,
) -> Result<V::Value, Failure> {
    let value = visitor.visit_map(&mut fields)?;
    if fields.entries.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in map"))
    }
}

/// What serde calls `value` in "invalid type" messages.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

struct Elements<'de> {
    items: std::slice::Iter<'de, Value>,
    index: usize,
}

impl<'de> SeqAccess<'de> for Elements<'de> {
    type Error = Failure;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Failure> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        match seed.deserialize(Tracked(item)) {
            Ok(value) => Ok(Some(value)),
            Err(failure) => Err(failure.at(Step::Index(index))),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// An object's entries as a [`MapAccess`]: one type for both ways of reading them, so a
/// struct's `visit_map` is compiled once.
struct Fields<'de, 'u> {
    entries: Entries<'de, 'u>,
    /// The entry whose key was just visited, waiting for its value.
    pending: Option<(&'de String, Pending<'de>)>,
}

enum Entries<'de, 'u> {
    /// Read where they are (every object but the top of [`deserialize_in_place`]).
    Shared(serde_json::map::Iter<'de>),
    /// The top of [`deserialize_in_place`]: string values are moved out, each copied into
    /// the [`Undo`] first; the number is the next entry's position.
    Taking(serde_json::map::IterMut<'de>, &'u mut Undo, usize),
}

impl Entries<'_, '_> {
    fn len(&self) -> usize {
        match self {
            Entries::Shared(entries) => entries.len(),
            Entries::Taking(entries, ..) => entries.len(),
        }
    }
}

enum Pending<'de> {
    Shared(&'de Value),
    /// A value that may be taken, at this position of the object.
    Taking(&'de mut Value, usize),
}

impl<'de> MapAccess<'de> for Fields<'de, '_> {
    type Error = Failure;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Failure> {
        let (key, value) = match &mut self.entries {
            Entries::Shared(entries) => match entries.next() {
                Some((key, value)) => (key, Pending::Shared(value)),
                None => return Ok(None),
            },
            Entries::Taking(entries, _, position) => match entries.next() {
                Some((key, value)) => {
                    *position += 1;
                    (key, Pending::Taking(value, *position - 1))
                }
                None => return Ok(None),
            },
        };
        self.pending = Some((key, value));
        match seed.deserialize(Key(key)) {
            Ok(key) => Ok(Some(key)),
            Err(failure) => Err(failure.at_key(Step::Key(key.clone()))),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Failure> {
        let Some((key, value)) = self.pending.take() else {
            return Err(de::Error::custom("value is missing"));
        };
        let result = match value {
            Pending::Shared(value) => seed.deserialize(Tracked(value)),
            Pending::Taking(value, position) => {
                let Entries::Taking(_, undo, _) = &mut self.entries else {
                    unreachable!("a value to take comes from entries being taken")
                };
                match Taken::from(value, position, undo) {
                    Ok(taken) => seed.deserialize(taken),
                    Err(value) => seed.deserialize(Tracked(value)),
                }
            }
        };
        result.map_err(|failure| failure.at(Step::Key(key.clone())))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An object's key (or an enum's variant name): a borrowed string, or a number or boolean
/// written as a string for maps keyed by those types, as serde_json reads keys.
struct Key<'de>(&'de str);

impl<'de> Key<'de> {
    /// A key read as a JSON number, for maps keyed by numbers, exactly as serde_json reads
    /// it: by its own parser (so `u128` keys beyond `u64`, `f32` keys rounded once, and the
    /// parser's messages with their position), and only when the key starts like a number
    /// and nothing follows it, not even whitespace.
    fn numeric<T>(
        self,
        parse: impl FnOnce(
            &mut serde_json::Deserializer<serde_json::de::StrRead<'de>>,
        ) -> Result<T, serde_json::Error>,
    ) -> Result<T, Failure> {
        if !matches!(self.0.as_bytes().first(), Some(b'0'..=b'9' | b'-')) {
            return Err(not_a_numeric_key());
        }
        let mut parser = serde_json::Deserializer::from_str(self.0);
        let number = parse(&mut parser).map_err(de::Error::custom)?;
        // `end` accepts trailing whitespace; serde_json's key reader does not. A number never
        // ends with whitespace, so a key that does has something after its number.
        if self.0.ends_with([' ', '\n', '\r', '\t']) || parser.end().is_err() {
            return Err(not_a_numeric_key());
        }
        Ok(number)
    }
}

/// serde_json's message for a map key that is not a number in quotes.
#[cold]
fn not_a_numeric_key() -> Failure {
    de::Error::custom("invalid value: expected key to be a number in quotes")
}

/// A numeric key request, handed to serde_json's parser (see [`Key::numeric`]).
macro_rules! numeric_key {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
            self.numeric(|parser| parser.$method(visitor))
        }
    )*};
}

impl<'de> Deserializer<'de> for Key<'de> {
    type Error = Failure;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(de::Error::invalid_type(Unexpected::Str(other), &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Failure> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Failure> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Failure> {
        // As serde_json: serde's own string deserializer, which takes unit variants only (a
        // failure is at the key, with no variant step).
        de::IntoDeserializer::<Failure>::into_deserializer(self.0)
            .deserialize_enum(name, variants, visitor)
    }

    numeric_key! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map
        struct identifier ignored_any
    }
}

/// An enum written as `"variant"` or `{"variant": content}`.
struct Enum<'de> {
    variant: &'de str,
    content: Option<&'de Value>,
}

impl<'de> EnumAccess<'de> for Enum<'de> {
    type Error = Failure;
    type Variant = Variant<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Variant<'de>), Failure> {
        // An unknown variant fails at the enum's own path, as with serde_path_to_error.
        // serde_json hands the name to serde's string deserializer (`visit_str`, nothing else).
        let variant = seed.deserialize(de::IntoDeserializer::<Failure>::into_deserializer(
            self.variant,
        ))?;
        Ok((
            variant,
            Variant {
                name: self.variant,
                content: self.content,
            },
        ))
    }
}

/// A variant's content; a failure inside it is at the variant's name.
struct Variant<'de> {
    name: &'de str,
    content: Option<&'de Value>,
}

impl<'de> Variant<'de> {
    fn inside(&self, failure: Failure) -> Failure {
        failure.at(Step::Key(self.name.to_owned()))
    }

    /// The content, or the error serde_json gives when a variant that needs content has none.
    fn content(&self, expected: &dyn Expected) -> Result<&'de Value, Failure> {
        self.content
            .ok_or_else(|| self.inside(de::Error::invalid_type(Unexpected::UnitVariant, expected)))
    }
}

impl<'de> VariantAccess<'de> for Variant<'de> {
    type Error = Failure;

    fn unit_variant(self) -> Result<(), Failure> {
        match self.content {
            Some(content) => {
                <()>::deserialize(Tracked(content)).map_err(|failure| self.inside(failure))
            }
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Failure> {
        let content = self.content(&"newtype variant")?;
        seed.deserialize(Tracked(content))
            .map_err(|failure| self.inside(failure))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Failure> {
        match self.content(&"tuple variant")? {
            Value::Array(items) if items.is_empty() => {
                visitor.visit_unit().map_err(|f| self.inside(f))
            }
            Value::Array(items) => visit_array(items, visitor).map_err(|f| self.inside(f)),
            other => Err(self.inside(de::Error::invalid_type(unexpected(other), &"tuple variant"))),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Failure> {
        match self.content(&"struct variant")? {
            Value::Object(map) => visit_object(map, visitor).map_err(|f| self.inside(f)),
            other => Err(self.inside(de::Error::invalid_type(
                unexpected(other),
                &"struct variant",
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// serde_path_to_error's path as [`Step`]s, to compare with ours.
    pub(super) fn steps_of(path: &serde_path_to_error::Path) -> Vec<Step> {
        path.iter()
            .filter_map(|segment| match segment {
                serde_path_to_error::Segment::Seq { index } => Some(Step::Index(*index)),
                serde_path_to_error::Segment::Map { key }
                | serde_path_to_error::Segment::Enum { variant: key } => {
                    Some(Step::Key(key.clone()))
                }
                serde_path_to_error::Segment::Unknown => None,
            })
            .collect()
    }

    /// Deserializes with [`Tracked`] and with serde_json's own `&Value` deserializer (wrapped
    /// in serde_path_to_error for the path), and checks both say the same.
    fn same<T>(value: Value) -> Result<T, (String, Vec<Step>)>
    where
        T: for<'de> Deserialize<'de> + PartialEq + fmt::Debug,
    {
        let ours = deserialize::<T>(&value).map_err(|f| {
            (
                f.message().to_owned(),
                f.path().cloned().collect::<Vec<_>>(),
            )
        });
        let theirs = serde_path_to_error::deserialize::<_, T>(&value)
            .map_err(|e| (e.inner().to_string(), steps_of(e.path())));
        assert_eq!(ours, theirs, "on {value}");
        ours
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Charge {
        amount: u32,
        currency: Currency,
        lines: Vec<Line>,
        note: Option<String>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    enum Currency {
        #[serde(rename = "EUR")]
        Eur,
        #[serde(rename = "USD")]
        Usd,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Line {
        sku: String,
        qty: u8,
    }

    fn charge() -> Value {
        json!({"amount": 5, "currency": "EUR", "lines": [{"sku": "a", "qty": 1}], "note": null})
    }

    #[test]
    fn valid_arguments_deserialize_as_with_serde_json() {
        let ok = same::<Charge>(charge()).unwrap();
        assert_eq!(ok.amount, 5);
        assert_eq!(ok.currency, Currency::Eur);
        assert_eq!(ok.lines[0].sku, "a");
        assert_eq!(ok.note, None);
        // serde_json accepts a struct written as an array of its fields.
        assert_eq!(
            same::<Charge>(json!([5, "USD", [], "n"])).unwrap().amount,
            5
        );
    }

    #[test]
    fn failures_carry_serde_json_messages_and_serde_path_to_error_paths() {
        let mut cases = Vec::new();
        for (pointer, bad) in [
            ("/amount", json!("5")),
            ("/amount", json!(5_000_000_000u64)),
            ("/amount", json!(-1)),
            ("/amount", json!(1.5)),
            ("/currency", json!("EURO")),
            ("/currency", json!(3)),
            ("/lines", json!({})),
            ("/lines/0/qty", json!(300)),
            ("/lines/0/sku", json!(null)),
            ("/lines/0", json!(["a", 1, 2])),
            ("/note", json!(true)),
        ] {
            let mut value = charge();
            *value.pointer_mut(pointer).unwrap() = bad;
            cases.push(value);
        }
        let mut unknown = charge();
        unknown["amuont"] = json!(1);
        cases.push(unknown);
        let mut missing = charge();
        missing["lines"][0].as_object_mut().unwrap().remove("qty");
        cases.push(missing);
        cases.push(json!([5, "EUR", [], null, 9]));
        cases.push(json!("charge"));
        for value in cases {
            let (message, _) = same::<Charge>(value.clone()).expect_err(&value.to_string());
            assert!(!message.is_empty());
        }
    }

    #[test]
    fn the_path_names_the_failing_element() {
        let mut value = charge();
        value["lines"] = json!([{"sku": "a", "qty": 1}, {"sku": "b", "qty": "two"}]);
        let (message, path) = same::<Charge>(value).unwrap_err();
        assert_eq!(
            path,
            [
                Step::Key("lines".into()),
                Step::Index(1),
                Step::Key("qty".into())
            ]
        );
        assert_eq!(message, "invalid type: string \"two\", expected u8");
    }

    #[derive(Debug, PartialEq, Deserialize)]
    enum Shape {
        Point,
        Circle(f64),
        Pair(u8, u8),
        Rect { w: u8, h: u8 },
    }

    #[test]
    fn enums_of_every_kind_match_serde_json() {
        assert_eq!(same::<Shape>(json!("Point")), Ok(Shape::Point));
        assert_eq!(same::<Shape>(json!({"Point": null})), Ok(Shape::Point));
        assert_eq!(same::<Shape>(json!({"Circle": 2})), Ok(Shape::Circle(2.0)));
        assert_eq!(
            same::<Shape>(json!({"Pair": [1, 2]})),
            Ok(Shape::Pair(1, 2))
        );
        assert_eq!(
            same::<Shape>(json!({"Rect": {"w": 1, "h": 2}})),
            Ok(Shape::Rect { w: 1, h: 2 })
        );
        for bad in [
            json!("Hexagon"),
            json!({"Point": 1}),
            json!("Circle"),
            json!({"Circle": "big"}),
            json!({"Pair": [1]}),
            json!({"Pair": 1}),
            json!({"Rect": {"w": 1, "h": 900}}),
            json!({"Rect": [1, 2, 3]}),
            json!({"Rect": {"w": 1}, "Point": null}),
            json!({}),
            json!(7),
        ] {
            let (_, path) = same::<Shape>(bad.clone()).expect_err(&bad.to_string());
            if bad == json!({"Rect": {"w": 1, "h": 900}}) {
                assert_eq!(path, [Step::Key("Rect".into()), Step::Key("h".into())]);
            }
        }
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "kind")]
    enum Tagged {
        Card { last4: String },
        Bank { iban: String },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Loose {
        Number(u32),
        Text(String),
    }

    #[test]
    fn buffered_enums_and_maps_match_serde_json() {
        assert_eq!(
            same::<Tagged>(json!({"kind": "Card", "last4": "4242"})),
            Ok(Tagged::Card {
                last4: "4242".into()
            })
        );
        assert!(same::<Tagged>(json!({"kind": "Cash"})).is_err());
        assert!(same::<Tagged>(json!({"kind": "Bank"})).is_err());
        assert_eq!(same::<Loose>(json!(3)), Ok(Loose::Number(3)));
        assert_eq!(same::<Loose>(json!("x")), Ok(Loose::Text("x".into())));
        assert!(same::<Loose>(json!([1])).is_err());

        let numbers = same::<BTreeMap<u32, bool>>(json!({"1": true, "20": false})).unwrap();
        assert_eq!(numbers.get(&20), Some(&false));
        // serde_path_to_error records a key only once it was visited as a string; this names
        // the key that failed (the only difference from it).
        let bad_key = deserialize::<BTreeMap<u32, bool>>(&json!({"x": true})).unwrap_err();
        assert_eq!(
            bad_key.message(),
            serde_json::from_value::<BTreeMap<u32, bool>>(json!({"x": true}))
                .unwrap_err()
                .to_string()
        );
        assert_eq!(bad_key.path().collect::<Vec<_>>(), [&Step::Key("x".into())]);
        assert!(same::<HashMap<String, u8>>(json!({"a": 1, "b": -1})).is_err());
        assert_eq!(
            same::<HashMap<bool, u8>>(json!({"true": 1}))
                .unwrap()
                .get(&true),
            Some(&1)
        );
    }

    #[test]
    fn scalars_and_containers_match_serde_json() {
        assert_eq!(same::<i64>(json!(-3)), Ok(-3));
        assert_eq!(same::<f32>(json!(1)), Ok(1.0));
        assert_eq!(same::<char>(json!("x")), Ok('x'));
        assert!(same::<char>(json!("xy")).is_err());
        assert_eq!(same::<()>(json!(null)), Ok(()));
        assert!(same::<()>(json!(false)).is_err());
        assert_eq!(same::<(u8, String)>(json!([1, "a"])), Ok((1, "a".into())));
        assert!(same::<(u8, String)>(json!([1])).is_err());
        assert!(same::<(u8,)>(json!([1, 2])).is_err());
        assert_eq!(same::<Option<Vec<u8>>>(json!([1, 2])), Ok(Some(vec![1, 2])));
        assert_eq!(same::<Value>(charge()), Ok(charge()));
        assert_eq!(same::<u128>(json!(7)), Ok(7));
    }

    /// Arbitrary JSON with the keys and values the test types use, so that some of it
    /// deserializes and much of it fails at some depth.
    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-300i64..300).prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            prop::sample::select(vec!["EUR", "USD", "Point", "Circle", "x", "7", "true"])
                .prop_map(Value::from),
        ];
        let key = prop::sample::select(vec![
            "amount", "currency", "lines", "note", "sku", "qty", "Rect", "Pair", "Circle", "w",
            "h", "kind", "7", "true",
        ]);
        leaf.prop_recursive(4, 32, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..6).prop_map(|pairs| {
                    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                }),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        #[test]
        fn arbitrary_json_deserializes_as_serde_json_says(value in any_json()) {
            // `same` asserts the outcome, the message and the path agree.
            let _ = same::<Charge>(value.clone());
            let _ = same::<Vec<Shape>>(Value::Array(vec![value.clone()]));
            let _ = same::<Option<Tagged>>(value.clone());
            let _ = same::<Loose>(value.clone());
            let _ = same::<BTreeMap<String, Vec<Option<u8>>>>(value);
        }
    }
}

/// Every shape of `Deserialize` impl serde derives or std provides, and map keys of every
/// kind, against serde_json's `&Value` deserializer (outcome and message) and
/// serde_path_to_error (path). The one known difference: a map key that fails is named in the
/// path here, where serde_path_to_error names it only if it was read as a string.
#[cfg(test)]
mod equivalence {
    #![allow(dead_code)]
    use std::borrow::Cow;
    use std::collections::{BTreeMap, HashMap};

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// Records in `out` how `T` from `value` differs from serde_json, if it does.
    fn cmp<T>(label: &str, value: Value, out: &mut Vec<String>)
    where
        T: for<'de> Deserialize<'de> + fmt::Debug,
    {
        let ours = deserialize::<T>(&value)
            .map(|v| format!("{v:?}"))
            .map_err(|f| {
                (
                    f.message().to_owned(),
                    f.path().cloned().collect::<Vec<_>>(),
                )
            });
        let plain = T::deserialize(&value)
            .map(|v| format!("{v:?}"))
            .map_err(|e| e.to_string());
        let theirs = serde_path_to_error::deserialize::<_, T>(&value)
            .map(|v| format!("{v:?}"))
            .map_err(|e| (e.inner().to_string(), super::tests::steps_of(e.path())));
        let ok_plain = match (&ours, &plain) {
            (Ok(a), Ok(b)) => a == b,
            (Err((a, _)), Err(b)) => a == b,
            _ => false,
        };
        let key_path_only = label.starts_with("key") && ok_plain;
        if !ok_plain || (ours != theirs && !key_path_only) {
            out.push(format!(
                "{label} on {value}:\n   ours  {ours:?}\n   plain {plain:?}\n   p2e   {theirs:?}"
            ));
        }
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "kind")]
    enum Internal {
        A { x: u8 },
        B(Inner),
        C,
    }
    #[derive(Debug, Deserialize)]
    struct Inner {
        y: u8,
        z: Option<Vec<u8>>,
    }
    #[derive(Debug, Deserialize)]
    #[serde(tag = "t", content = "c")]
    enum Adjacent {
        A { x: u8 },
        B(u8),
        C,
        D(u8, u8),
    }
    #[derive(Debug, Deserialize)]
    #[serde(untagged)]
    enum Untagged {
        A { x: u8 },
        B(Vec<u8>),
    }
    #[derive(Debug, Deserialize)]
    struct Flat {
        a: u8,
        #[serde(flatten)]
        rest: Inner,
    }
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct FlatDeny {
        a: u8,
        #[serde(flatten)]
        rest: HashMap<String, u8>,
    }
    #[derive(Debug, Deserialize)]
    struct Defaults {
        #[serde(default)]
        a: u8,
        b: Option<Option<u8>>,
        #[serde(default)]
        c: Option<Option<u8>>,
    }
    #[derive(Debug, Deserialize)]
    struct Values {
        v: Value,
        m: Map<String, Value>,
    }
    #[derive(Debug, Deserialize)]
    struct Borrow<'a> {
        s: &'a str,
        #[serde(borrow)]
        c: Cow<'a, str>,
        o: Cow<'a, str>,
    }
    #[derive(Debug, Deserialize)]
    struct Unit;
    #[derive(Debug, Deserialize)]
    struct New(u8);
    #[derive(Debug, Deserialize)]
    struct Tup(u8, String);
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Renamed {
        first_name: String,
        #[serde(alias = "ln")]
        last_name: String,
    }
    mod as_string {
        use serde::{Deserialize, Deserializer};
        pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
            let s = String::deserialize(d)?;
            s.parse().map_err(serde::de::Error::custom)
        }
    }
    #[derive(Debug, Deserialize)]
    struct With {
        #[serde(with = "as_string")]
        n: u32,
    }
    #[derive(Debug, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
    enum KeyEnum {
        A,
        B(u8),
    }
    #[derive(Debug, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
    struct KeyNew(u32);
    #[derive(Debug, Deserialize)]
    enum Other {
        A,
        #[serde(other)]
        Rest,
    }
    #[derive(Debug, Deserialize)]
    enum E {
        U,
        N(u8),
        T(u8, u8),
        S { a: u8 },
    }

    #[test]
    fn derived_std_and_key_types_match_serde_json() {
        let mut out = Vec::new();
        let o = &mut out;
        for v in [
            json!({"kind":"A","x":300}),
            json!({"kind":"B","y":1,"z":[1,"a"]}),
            json!({"kind":"C","q":1}),
            json!({"kind":3}),
            json!({"x":1}),
            json!({"kind":"C"}),
            json!(["A", 1]),
        ] {
            cmp::<Internal>("internal", v.clone(), o);
            cmp::<Vec<Internal>>("vec internal", json!([v]), o);
        }
        for v in [
            json!({"t":"A","c":{"x":300}}),
            json!({"t":"B","c":"x"}),
            json!({"t":"C"}),
            json!({"t":"C","c":1}),
            json!({"t":"D","c":[1]}),
            json!({"c":1,"t":"B"}),
            json!({"t":"Z"}),
            json!({"t":"A","c":{"x":1},"u":1}),
            json!(["B", 2]),
        ] {
            cmp::<Adjacent>("adjacent", v.clone(), o);
            cmp::<BTreeMap<String, Adjacent>>("map adjacent", json!({"k": v}), o);
        }
        for v in [
            json!({"x":300}),
            json!([1, 300]),
            json!("s"),
            json!({"x":1}),
        ] {
            cmp::<Untagged>("untagged", v, o);
        }
        for v in [
            json!({"a":1,"y":2}),
            json!({"a":1,"y":"x"}),
            json!({"a":"1","y":2}),
            json!({"a":1}),
        ] {
            cmp::<Flat>("flat", v, o);
        }
        for v in [
            json!({"a":1,"y":2}),
            json!({"a":1,"y":"x"}),
            json!({"a":1,"b":-1}),
        ] {
            cmp::<FlatDeny>("flatdeny", v, o);
        }
        for v in [
            json!({}),
            json!({"b":null,"c":null}),
            json!({"b":1,"c":"x"}),
            json!({"a":null}),
        ] {
            cmp::<Defaults>("defaults", v, o);
        }
        for v in [
            json!({"v":[1,{"a":null}],"m":{"x":1}}),
            json!({"v":1,"m":[1]}),
            json!({"v":1.5e300,"m":{"n":-0.0}}),
        ] {
            cmp::<Values>("values", v, o);
        }
        for v in [
            json!({"s":"a","c":"b","o":"c"}),
            json!({"s":1,"c":"b","o":"c"}),
            json!({"s":"a","c":["b"],"o":"c"}),
        ] {
            let a = deserialize::<Borrow>(&v)
                .map(|b| format!("{b:?}"))
                .map_err(|e| e.to_string());
            let b = Borrow::deserialize(&v)
                .map(|b| format!("{b:?}"))
                .map_err(|e| e.to_string());
            if a != b {
                o.push(format!("borrow {v}: {a:?} vs {b:?}"));
            }
        }
        for v in [
            json!(u64::MAX),
            json!(i64::MIN),
            json!(-0.0),
            json!(1.0),
            json!(1e300),
            json!(0.1),
            json!(-1),
            json!(256),
            json!(4294967296u64),
            json!(1.5),
        ] {
            cmp::<u8>("u8", v.clone(), o);
            cmp::<i8>("i8", v.clone(), o);
            cmp::<u64>("u64", v.clone(), o);
            cmp::<i64>("i64", v.clone(), o);
            cmp::<f32>("f32", v.clone(), o);
            cmp::<f64>("f64", v.clone(), o);
            cmp::<u128>("u128", v.clone(), o);
            cmp::<i128>("i128", v.clone(), o);
            cmp::<usize>("usize", v.clone(), o);
            cmp::<std::num::NonZeroU8>("nz", v.clone(), o);
            cmp::<char>("char", v.clone(), o);
            cmp::<bool>("bool", v.clone(), o);
        }
        cmp::<Vec<u8>>("huge", Value::Array(vec![json!(1); 100_000]), o);
        let mut huge = vec![json!(1); 100_000];
        huge.push(json!(-1));
        cmp::<Vec<u8>>("huge bad", Value::Array(huge), o);
        for k in [
            "1",
            "-1",
            "1 ",
            " 1",
            "01",
            "1.0",
            "1e2",
            "+1",
            "-",
            "",
            "300",
            "-129",
            "18446744073709551616",
            "340282366920938463463374607431768211455",
            "-170141183460469231731687303715884105728",
            "1e400",
            "NaN",
            "0x1",
            "1\n",
            "\t1",
        ] {
            let v = json!({k: true});
            cmp::<BTreeMap<u8, bool>>("key u8", v.clone(), o);
            cmp::<BTreeMap<i8, bool>>("key i8", v.clone(), o);
            cmp::<BTreeMap<u64, bool>>("key u64", v.clone(), o);
            cmp::<BTreeMap<i64, bool>>("key i64", v.clone(), o);
            cmp::<BTreeMap<u128, bool>>("key u128", v.clone(), o);
            cmp::<BTreeMap<i128, bool>>("key i128", v.clone(), o);
            cmp::<HashMap<KeyNew, bool>>("key newtype", v.clone(), o);
            let vf = json!({k: 1});
            cmp::<BTreeMap<String, u8>>("key str", vf.clone(), o);
            cmp::<HashMap<char, u8>>("key char", vf.clone(), o);
        }
        for k in [
            "0.1",
            "16777217",
            "1e38",
            "3.4028236e38",
            "1.00000005960464477539062500000000001",
            "7.038531e-26",
        ] {
            let v = json!({k: true});
            // serde_json parses an `f32` key straight to `f32` (rounded once).
            let ours = deserialize::<HashMap<OrdF32, bool>>(&v)
                .map(|m| m.keys().next().map(|k| k.0.to_bits()));
            let theirs = HashMap::<OrdF32, bool>::deserialize(&v)
                .map(|m| m.keys().next().map(|k| k.0.to_bits()));
            if ours.as_ref().ok() != theirs.as_ref().ok() || ours.is_ok() != theirs.is_ok() {
                o.push(format!(
                    "f32 key {k}: ours {:?} theirs {:?}",
                    ours.map_err(|e| e.to_string()),
                    theirs.map_err(|e| e.to_string())
                ));
            }
        }
        for k in ["true", "True", "1", ""] {
            cmp::<BTreeMap<bool, u8>>("key bool", json!({k: 1}), o);
        }
        for k in ["A", "B", "C"] {
            cmp::<BTreeMap<KeyEnum, u8>>("key enum", json!({k: 1}), o);
        }
        for v in [json!(null), json!([]), json!({}), json!(1)] {
            cmp::<Unit>("unit", v.clone(), o);
            cmp::<New>("new", v.clone(), o);
            cmp::<Tup>("tup", v.clone(), o);
        }
        for v in [
            json!([1, "a"]),
            json!([1]),
            json!([1, "a", 2]),
            json!({"0": 1}),
        ] {
            cmp::<Tup>("tup", v, o);
        }
        for v in [
            json!({"firstName":"a","ln":"b"}),
            json!({"first_name":"a","lastName":"b"}),
            json!({"firstName":1,"ln":"b"}),
            json!({"firstName":"a","ln":"b","lastName":"c"}),
        ] {
            cmp::<Renamed>("renamed", v, o);
        }
        for v in [json!({"n":"12"}), json!({"n":"x"}), json!({"n":12})] {
            cmp::<With>("with", v, o);
        }
        for v in [json!("A"), json!("Z"), json!({"Z": 1}), json!({"A": 1})] {
            cmp::<Other>("other", v, o);
        }
        for v in [
            json!("U"),
            json!({"U":[]}),
            json!({"U":{}}),
            json!("N"),
            json!("T"),
            json!("S"),
            json!({"T":[]}),
            json!({"T":{}}),
            json!({"S":[]}),
            json!({"S":[1]}),
            json!({"S":[1, 2]}),
            json!({"N":null}),
            json!({"T":null}),
            json!({"S":{"a":1,"b":2}}),
            json!({"S":{"a":1,"a":2}}),
        ] {
            cmp::<E>("enum", v.clone(), o);
            cmp::<Vec<E>>("vec enum", json!([1, v]), o);
            cmp::<Vec<E>>("vec enum", json!([v]), o);
        }
        for v in [json!(null), json!(1), json!([null])] {
            cmp::<Option<Option<u8>>>("optopt", v.clone(), o);
            cmp::<Vec<Option<Option<u8>>>>("optopt", v, o);
        }
        for v in [json!([1, 2]), json!("ab"), json!([1, 300])] {
            cmp::<serde_bytes_like::Bytes>("bytes", v, o);
        }
        for v in [
            json!({"secs":1,"nanos":2}),
            json!({"secs":-1,"nanos":2}),
            json!([1, 2]),
            json!("127.0.0.1:80"),
            json!("bad"),
        ] {
            cmp::<std::time::Duration>("duration", v.clone(), o);
            cmp::<std::net::SocketAddr>("sock", v.clone(), o);
            cmp::<std::path::PathBuf>("path", v.clone(), o);
            cmp::<std::ops::Range<u8>>("range", v.clone(), o);
            cmp::<std::time::SystemTime>("systime", v.clone(), o);
            cmp::<Box<str>>("boxstr", v.clone(), o);
            cmp::<std::ffi::CString>("cstring", v.clone(), o);
        }
        for v in [json!("A"), json!({"1": null}), json!("1")] {
            cmp::<OddVariant>("odd variant", v.clone(), o);
            cmp::<NumberedVariant>("numbered variant", v, o);
        }
        if !out.is_empty() {
            panic!("{} mismatches:\n{}", out.len(), out.join("\n"));
        }
    }

    /// An enum whose variant name is read as a borrowed `&str` or as a number: serde_json
    /// hands variant names to serde's string deserializer, which offers neither.
    #[derive(Debug)]
    struct OddVariant(String);
    impl<'de> Deserialize<'de> for OddVariant {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = OddVariant;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an odd enum")
                }
                fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<OddVariant, A::Error> {
                    let (name, rest) = data.variant::<&'de str>()?;
                    rest.unit_variant()?;
                    Ok(OddVariant(name.to_owned()))
                }
            }
            d.deserialize_enum("OddVariant", &[], V)
        }
    }
    #[derive(Debug)]
    struct NumberedVariant(u8);
    impl<'de> Deserialize<'de> for NumberedVariant {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = NumberedVariant;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a numbered enum")
                }
                fn visit_enum<A: EnumAccess<'de>>(
                    self,
                    data: A,
                ) -> Result<NumberedVariant, A::Error> {
                    let (n, rest) = data.variant::<u8>()?;
                    rest.unit_variant()?;
                    Ok(NumberedVariant(n))
                }
            }
            d.deserialize_enum("NumberedVariant", &[], V)
        }
    }

    #[derive(Debug, PartialEq)]
    struct OrdF32(f32);
    impl Eq for OrdF32 {}
    impl std::hash::Hash for OrdF32 {
        fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
            self.0.to_bits().hash(h)
        }
    }
    impl<'de> Deserialize<'de> for OrdF32 {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            f32::deserialize(d).map(OrdF32)
        }
    }

    mod serde_bytes_like {
        use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
        use std::fmt;
        #[derive(Debug)]
        pub(super) struct Bytes(pub(super) Vec<u8>);
        impl<'de> Deserialize<'de> for Bytes {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = Bytes;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("bytes")
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Bytes, E> {
                        Ok(Bytes(s.as_bytes().to_vec()))
                    }
                    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Bytes, A::Error> {
                        let mut v = Vec::new();
                        while let Some(b) = a.next_element()? {
                            v.push(b)
                        }
                        Ok(Bytes(v))
                    }
                }
                d.deserialize_byte_buf(V)
            }
        }
    }
}
/// `RawValue` (serde_json's `raw_value` feature, on in this crate's tests as a user's crate
/// may turn it on) takes the value's JSON text, as with serde_json's `&Value` deserializer.
#[cfg(test)]
mod raw_value {
    #![allow(dead_code)]
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use serde_json::value::RawValue;
    #[derive(Debug, Deserialize)]
    struct R {
        a: u8,
        raw: Box<RawValue>,
        opt: Option<Box<RawValue>>,
    }
    #[test]
    fn raw_values_deserialize_as_with_serde_json() {
        for v in [
            json!({"a":1,"raw":{"x":[1,2]},"opt":null}),
            json!({"a":1,"raw":"s","opt":[true]}),
            json!({"a":"x","raw":1}),
        ] {
            let ours = deserialize::<R>(&v)
                .map(|r| format!("{r:?}"))
                .map_err(|e| e.to_string());
            let theirs = R::deserialize(&v)
                .map(|r| format!("{r:?}"))
                .map_err(|e| e.to_string());
            assert_eq!(ours, theirs);
        }
    }
}
