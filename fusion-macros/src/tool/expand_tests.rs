//! The `#[tool]` expansion: output-schema actions render structured content, and every runtime
//! path it writes goes through the `crate` option, a bad value of which is reported on it.

use proc_macro2::TokenStream;
use quote::quote;

use crate::crate_path::assert_runtime_only_through;

/// An impl block with every kind of action: each probe, parameter and outcome the
/// expansion writes runtime paths for.
fn every_kind_of_action() -> TokenStream {
    quote! {
        impl<S: Store> Billing<S> where S: Send {
            #[action(read_only)]
            fn get(&self, args: Get, ctx: &RequestContext) -> Result<Invoice, BillingError> {}
            #[action]
            async fn list(args: List, ctx: RequestContext) -> Vec<Invoice> {}
            #[action(destructive, blocking)]
            fn purge(&self) {}
            #[action]
            fn count(&self) -> anyhow::Result<u32> {}
            #[action(output_schema)]
            fn total(&self) -> anyhow::Result<Total> {}
            #[action(output_schema)]
            fn summary(&self) -> Summary {}
        }
    }
}

#[test]
fn output_schema_actions_render_structured_content() {
    let out = super::super::expand(quote!(), every_kind_of_action()).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    // The schema is read off the return type, whatever it is called.
    assert_eq!(out.matches("__fusion_output_schema").count(), 2, "{out}");
    assert!(
        out.contains(
            "Outputs :: < anyhow :: Result < Total > > :: NEW) . __fusion_output_schema ()"
        ),
        "{out}"
    );
    assert_eq!(out.matches("respond_structured").count(), 2, "{out}");
    assert_eq!(
        out.matches("output_schema : :: core :: option :: Option :: None")
            .count(),
        4,
        "{out}"
    );
}

#[test]
fn the_runtime_is_fusion_by_default() {
    let out = super::super::expand(quote!(), every_kind_of_action());
    assert_runtime_only_through(&out, ":: fusion");
}

#[test]
fn every_runtime_path_goes_through_the_crate_option() {
    for krate in [quote!(crate = ::my::rt), quote!(crate = "::my::rt")] {
        let out = super::super::expand(krate, every_kind_of_action());
        assert!(!out.to_string().contains("compile_error"), "{out}");
        assert_runtime_only_through(&out, ":: my :: rt");
    }
    let out = super::super::expand(
        quote!(name = "weather", crate = fu),
        quote!(
            async fn get_weather(args: Place) -> Result<String, anyhow::Error> {}
        ),
    );
    assert!(!out.to_string().contains("compile_error"), "{out}");
    assert_runtime_only_through(&out, "fu");
}

#[test]
fn the_stub_of_a_tool_with_errors_goes_through_the_crate_option_too() {
    // An error in the item: the options were read.
    let out = super::super::expand(
        quote!(crate = ::my::rt),
        quote!(impl Billing { #[action] fn list(&mut self) {} }),
    );
    assert!(out.to_string().contains("compile_error"), "{out}");
    assert_runtime_only_through(&out, ":: my :: rt");
    // An error in the options themselves: `crate` is still found.
    let out = super::super::expand(
        quote!(nme = "billing", crate = ::my::rt),
        quote!(impl Billing { #[action] fn list(&self) {} }),
    );
    assert!(out.to_string().contains("Unknown field: `nme`"), "{out}");
    assert_runtime_only_through(&out, ":: my :: rt");
}

#[test]
fn a_bad_crate_option_is_reported_on_its_value() {
    let out = super::super::expand(
        quote!(crate = 5),
        quote!(
            fn ping() {}
        ),
    );
    let text = out.to_string();
    assert!(
        text.contains(
            "expected the path to fusion, as in `crate = \\\"::fu\\\"` or `crate = ::fu`"
        ),
        "{text}"
    );
    assert!(!text.contains(" at crate"), "{text}");
}

#[test]
fn prepare_takes_the_tool_by_arc_and_handlers_own_it() {
    let out = super::super::expand(quote!(), every_kind_of_action()).to_string();
    assert!(
        out.contains("fn prepare (self : :: std :: sync :: Arc < Self >"),
        "{out}"
    );
    assert!(
        out.contains(
            ":: fusion :: __private :: PreparedCall , :: fusion :: __private :: ToolResponse"
        ),
        "no lifetime on the prepared call: {out}"
    );
    // `&self` actions borrow from the `Arc` the handler moved in; synchronous ones go to the
    // `sync` constructor, or `blocking` when declared so, asynchronous ones to `new`.
    assert!(
        out.contains("PreparedCall :: sync (move | __fusion_context |"),
        "{out}"
    );
    assert!(
        out.contains("PreparedCall :: blocking (move | __fusion_context |"),
        "{out}"
    );
    assert!(
        out.contains("Self :: get (& self , __fusion_args , & __fusion_context)"),
        "{out}"
    );
    assert!(out.contains("Self :: purge (& self)"), "{out}");
    assert!(
        out.contains("PreparedCall :: new (move | __fusion_context | async move"),
        "{out}"
    );
    // A function without a receiver names no `self`.
    assert!(
        out.contains("Self :: list (__fusion_args , __fusion_context) . await"),
        "{out}"
    );
}

#[test]
fn titles_come_from_the_option_or_the_doc_summary() {
    let out = super::super::expand(
        quote!(read_only),
        quote! {
            /// Invoices.
            ///
            /// All of them.
            impl Billing {
                /// Gets one invoice.
                #[action(read_only = false)]
                fn get(&self) {}
                #[action(title = "List them all")]
                fn list(&self) {}
                #[action(description = "Counts.")]
                fn count(&self) {}
            }
        },
    )
    .to_string();
    let title = |t: &str| {
        format!(
            "title : :: core :: option :: Option :: Some (:: std :: string :: String :: from (\"{t}\"))"
        )
    };
    assert!(out.contains(&title("Invoices")), "{out}");
    assert!(out.contains(&title("Gets one invoice")), "{out}");
    assert!(out.contains(&title("List them all")), "{out}");
    // No doc comment: no title, even with a description.
    assert_eq!(
        out.matches("title : :: core :: option :: Option :: None")
            .count(),
        1,
        "{out}"
    );
    // The tool's hint fills each action's unset one; the action's own wins.
    let read_only = |v: bool| format!("read_only : :: core :: option :: Option :: Some ({v})");
    assert_eq!(out.matches(&read_only(true)).count(), 2, "{out}");
    assert_eq!(out.matches(&read_only(false)).count(), 1, "{out}");
}

#[test]
fn a_function_tool_and_its_action_share_the_title() {
    let out = super::super::expand(
        quote!(title = "Weather"),
        quote! {
            /// Gets the weather.
            fn get_weather() {}
        },
    )
    .to_string();
    assert_eq!(
        out.matches("title : :: core :: option :: Option :: Some (:: std :: string :: String :: from (\"Weather\"))")
            .count(),
        2,
        "{out}"
    );
}

#[test]
fn a_tool_says_how_its_input_schema_is_published() {
    let item = quote! { fn deploy() {} };
    let out = super::super::expand(quote!(input_schema = "as_written"), item.clone()).to_string();
    assert!(out.contains("InputSchemas :: AsWritten"), "{out}");
    let out = super::super::expand(quote!(), item.clone()).to_string();
    assert!(
        !out.contains("fn input_schemas"),
        "the server's setting: {out}"
    );
    let out = super::super::expand(quote!(input_schema = "verbatim"), item).to_string();
    assert!(
        out.contains("`input_schema` is `\\\"portable\\\"`"),
        "{out}"
    );
}

#[test]
fn task_support_is_optional_required_or_deferred_and_anything_else_is_refused() {
    let out = super::super::expand(
        quote!(),
        quote! {
            impl Exports {
                #[action(task)]
                async fn optional(&self) {}
                #[action(task = required)]
                async fn required(&self) {}
                #[action(task(required, deferred))]
                async fn deferred(&self) {}
                #[action]
                async fn direct(&self) {}
            }
        },
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    let flags = |task, required, deferred| {
        format!("task : {task} , task_required : {required} , task_deferred : {deferred} ,")
    };
    assert_eq!(out.matches(&flags(true, false, false)).count(), 1, "{out}");
    assert_eq!(out.matches(&flags(true, true, false)).count(), 1, "{out}");
    assert_eq!(out.matches(&flags(true, true, true)).count(), 1, "{out}");
    assert_eq!(out.matches(&flags(false, false, false)).count(), 1, "{out}");

    for wrong in [quote!(task = always), quote!(task(sometimes))] {
        let out = super::super::expand(
            quote!(),
            quote!(impl Exports { #[action(#wrong)] async fn export(&self) {} }),
        )
        .to_string();
        assert!(out.contains("`task = required`"), "{out}");
    }
}
