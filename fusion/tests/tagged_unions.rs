//! Enums with data as action arguments, as schemars writes them: a `oneOf` of one branch per
//! variant. When the arguments match no branch, the problem is reported inside the branch the
//! value is meant for, told apart by its tag (`kind` of `#[serde(tag = "kind")]`, `t` of
//! `#[serde(tag = "t", content = "c")]`) or by its one key (externally tagged): `shape.h` is
//! missing, not "the shape matches no allowed shape". When the tag itself is wrong or missing,
//! the line is the tag's, listing the values it takes.

#[path = "support/lines.rs"]
mod lines;

use fusion::testing::Tester;
use lines::pairs;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A shape, tagged by `kind`.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// A circle.
    Circle {
        /// The radius.
        r: f64,
    },
    /// A rectangle.
    Rect {
        /// The width.
        w: f64,
        /// The height.
        h: f64,
    },
    /// A point.
    Dot,
}

/// A command, externally tagged (serde's default).
#[derive(Deserialize, JsonSchema)]
pub enum Command {
    /// Moves.
    Move {
        /// How far.
        x: i32,
    },
    /// Waits some seconds.
    Wait(u32),
    /// Stops.
    Stop,
}

/// A setting, adjacently tagged.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
pub enum Setting {
    /// A level.
    Level(u8),
    /// A switch.
    Switch {
        /// On or off.
        on: bool,
    },
}

/// Whom to notify: untagged, told apart by the fields each form requires.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Target {
    /// By number.
    ById {
        /// The number.
        id: u64,
    },
    /// By name.
    ByName {
        /// The name.
        name: String,
    },
}

/// An address.
#[derive(Deserialize, JsonSchema)]
pub struct Address {
    /// The postal code (only validated here).
    #[allow(dead_code)]
    zip: String,
}

/// The arguments.
#[derive(Deserialize, JsonSchema)]
pub struct NotifyArgs {
    /// Whom.
    target: Target,
    /// Where, if anywhere.
    address: Option<Address>,
}

/// A span, checked by its own `TryFrom` (a check the schema cannot express).
#[derive(Deserialize, JsonSchema)]
#[serde(try_from = "RawSpan")]
pub struct Span {
    /// Where it starts.
    pub start: u32,
    /// Where it ends.
    pub end: u32,
}

/// A span as sent.
#[derive(Deserialize, JsonSchema)]
pub struct RawSpan {
    /// Where it starts, at most 100.
    #[schemars(range(max = 100))]
    start: u32,
    /// Where it ends.
    end: u32,
}

impl TryFrom<RawSpan> for Span {
    type Error = &'static str;

    fn try_from(raw: RawSpan) -> Result<Span, &'static str> {
        if raw.end < raw.start {
            return Err("the end comes before the start");
        }
        Ok(Span {
            start: raw.start,
            end: raw.end,
        })
    }
}

/// The arguments.
#[derive(Deserialize, JsonSchema)]
pub struct MarkArgs {
    /// The span to mark.
    span: Span,
}

/// The arguments.
#[derive(Deserialize, JsonSchema)]
pub struct DrawArgs {
    /// The shape.
    shape: Shape,
    /// A second shape, if any.
    #[serde(default)]
    second: Option<Shape>,
}

/// The arguments.
#[derive(Deserialize, JsonSchema)]
pub struct RunArgs {
    /// The command.
    command: Command,
}

/// The arguments.
#[derive(Deserialize, JsonSchema)]
pub struct SetArgs {
    /// The setting.
    setting: Setting,
}

#[derive(Clone, Copy, Default)]
struct Canvas;

/// A canvas.
#[fusion::tool]
impl Canvas {
    /// Draws a shape.
    #[action]
    fn draw(&self, args: DrawArgs) -> &'static str {
        if args.second.is_some() {
            return "two shapes";
        }
        match args.shape {
            Shape::Circle { .. } => "circle",
            Shape::Rect { .. } => "rect",
            Shape::Dot => "dot",
        }
    }

    /// Runs a command.
    #[action]
    fn run(&self, args: RunArgs) -> &'static str {
        match args.command {
            Command::Move { .. } => "move",
            Command::Wait(_) => "wait",
            Command::Stop => "stop",
        }
    }

    /// Notifies someone.
    #[action]
    fn notify(&self, args: NotifyArgs) -> &'static str {
        match (args.target, args.address) {
            (Target::ById { .. }, _) => "by id",
            (Target::ByName { .. }, _) => "by name",
        }
    }

    /// Marks a span.
    #[action]
    fn mark(&self, args: MarkArgs) -> u32 {
        args.span.end - args.span.start
    }

    /// Changes a setting.
    #[action]
    fn set(&self, args: SetArgs) -> &'static str {
        match args.setting {
            Setting::Level(_) => "level",
            Setting::Switch { .. } => "switch",
        }
    }
}

/// The `(field, line)` pairs of the validation error `name` answers with `arguments`.
async fn problems(name: &str, arguments: Value) -> Vec<(String, String)> {
    lines::problems(Canvas, name, arguments).await
}

#[tokio::test]
async fn every_variant_is_accepted() {
    let tester = Tester::new().tool(Canvas);
    for (name, arguments, answer) in [
        (
            "canvas.draw",
            json!({"shape": {"kind": "circle", "r": 1}}),
            "circle",
        ),
        (
            "canvas.draw",
            json!({"shape": {"kind": "rect", "w": 1, "h": 2}}),
            "rect",
        ),
        ("canvas.draw", json!({"shape": {"kind": "dot"}}), "dot"),
        (
            "canvas.run",
            json!({"command": {"Move": {"x": -1}}}),
            "move",
        ),
        ("canvas.run", json!({"command": {"Wait": 5}}), "wait"),
        ("canvas.run", json!({"command": "Stop"}), "stop"),
        (
            "canvas.set",
            json!({"setting": {"t": "Level", "c": 3}}),
            "level",
        ),
        (
            "canvas.set",
            json!({"setting": {"t": "Switch", "c": {"on": true}}}),
            "switch",
        ),
    ] {
        tester.call(name, arguments).await.assert_text(answer);
    }
}

#[tokio::test]
async fn internally_tagged_problems_are_found_in_the_tagged_variant() {
    assert_eq!(
        problems("canvas.draw", json!({"shape": {"kind": "rect", "w": 1}})).await,
        pairs(&[(
            "shape.h",
            "Missing required field. You sent: (missing). Expected a number."
        )])
    );
    assert_eq!(
        problems(
            "canvas.draw",
            json!({"shape": {"kind": "circle", "r": "big"}})
        )
        .await,
        pairs(&[("shape.r", "Wrong type. You sent: 'big'. Expected a number.")])
    );
}

#[tokio::test]
async fn a_wrong_or_missing_tag_is_the_tag_s_problem_with_the_values_it_takes() {
    assert_eq!(
        problems(
            "canvas.draw",
            json!({"shape": {"kind": "triangle", "r": 1}})
        )
        .await,
        pairs(&[(
            "shape.kind",
            "Value not allowed. You sent: 'triangle'. Expected one of: 'circle', 'rect', 'dot'."
        )])
    );
    assert_eq!(
        problems("canvas.draw", json!({"shape": {"r": 1}})).await,
        pairs(&[(
            "shape.kind",
            "Missing required field. You sent: (missing). Expected one of: 'circle', 'rect', 'dot'."
        )])
    );
}

#[tokio::test]
async fn the_tag_of_an_optional_union_is_found_through_its_wrapper() {
    let circle = json!({"kind": "circle", "r": 1});
    assert_eq!(
        problems(
            "canvas.draw",
            json!({"shape": circle, "second": {"kind": "hexagon"}})
        )
        .await,
        pairs(&[(
            "second.kind",
            "Value not allowed. You sent: 'hexagon'. Expected one of: 'circle', 'rect', 'dot'."
        )])
    );
    assert_eq!(
        problems(
            "canvas.draw",
            json!({"shape": circle, "second": {"kind": "rect", "w": 1}})
        )
        .await,
        pairs(&[(
            "second.h",
            "Missing required field. You sent: (missing). Expected a number."
        )])
    );
}

#[tokio::test]
async fn externally_tagged_problems_are_found_in_the_variant_named_by_the_key() {
    assert_eq!(
        problems("canvas.run", json!({"command": {"Move": {"x": "left"}}})).await,
        pairs(&[(
            "command.Move.x",
            "Wrong type. You sent: 'left'. Expected an integer."
        )])
    );
    assert_eq!(
        problems("canvas.run", json!({"command": {"Wait": -5}})).await,
        pairs(&[(
            "command.Wait",
            "Number too small. You sent: -5. Expected a number >= 0."
        )])
    );
}

#[tokio::test]
async fn adjacently_tagged_problems_are_found_in_the_variant_named_by_the_tag() {
    assert_eq!(
        problems(
            "canvas.set",
            json!({"setting": {"t": "Switch", "c": {"on": "yes"}}})
        )
        .await,
        pairs(&[(
            "setting.c.on",
            "Wrong type. You sent: 'yes'. Expected a boolean (true or false)."
        )])
    );
    assert_eq!(
        problems("canvas.set", json!({"setting": {"t": "Volume", "c": 3}})).await,
        pairs(&[(
            "setting.t",
            "Value not allowed. You sent: 'Volume'. Expected one of: 'Level', 'Switch'."
        )])
    );
}

#[tokio::test]
async fn untagged_forms_are_told_apart_by_the_fields_they_require() {
    let tester = Tester::new().tool(Canvas);
    tester
        .call(
            "canvas.notify",
            json!({"target": {"name": "ada"}, "address": null}),
        )
        .await
        .assert_text("by name");
    assert_eq!(
        problems(
            "canvas.notify",
            json!({"target": {"id": "seven"}, "address": null})
        )
        .await,
        pairs(&[(
            "target.id",
            "Wrong type. You sent: 'seven'. Expected an integer."
        )])
    );
    // Neither form's field: the forms are spelled out, not "an object".
    assert_eq!(
        problems(
            "canvas.notify",
            json!({"target": {"nam": "ada"}, "address": null})
        )
        .await,
        pairs(&[(
            "target",
            "Does not match any allowed shape. You sent: {\"nam\":\"ada\"}. Expected one of: \
             an object with 'id'; an object with 'name'."
        )])
    );
}

#[tokio::test]
async fn a_value_of_a_type_no_branch_takes_is_a_wrong_type() {
    assert_eq!(
        problems("canvas.notify", json!({"target": {"id": 1}, "address": 5})).await,
        pairs(&[(
            "address",
            "Wrong type. You sent: 5. Expected an object or null."
        )])
    );
    // An `Option` of a struct: the struct's own problems, at their paths.
    assert_eq!(
        problems(
            "canvas.notify",
            json!({"target": {"id": 1}, "address": {"zip": 1}})
        )
        .await,
        pairs(&[("address.zip", "Wrong type. You sent: 1. Expected a string.")])
    );
}

#[tokio::test]
async fn a_check_of_the_type_s_own_above_a_schema_problem_is_kept() {
    // serde's line for a tagged enum names the enum, above the schema's precise line, and is
    // dropped (above); a `TryFrom` check is another problem, and both are reported.
    assert_eq!(
        problems("canvas.mark", json!({"span": {"start": 500, "end": 1}})).await,
        pairs(&[
            (
                "span",
                "Invalid value: the end comes before the start. You sent: \
                 {\"end\":1,\"start\":500}. Expected a value this field accepts."
            ),
            (
                "span.start",
                "Number too large. You sent: 500. Expected a number <= 100."
            ),
        ])
    );
}
