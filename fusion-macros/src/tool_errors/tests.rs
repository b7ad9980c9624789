//! Unit tests of the derive's own diagnostics and expansion details; the behaviour of expanded
//! code is tested in `ui-tests/tests/tool_errors.rs`, the compiler's view in `ui_tool_errors.rs`.

use proc_macro2::{TokenStream, TokenTree};
use syn::parse_quote;

use super::attr::CANONICAL;

/// The messages of every `compile_error!` in `tokens`, in order.
fn errors(tokens: &TokenStream) -> Vec<String> {
    let mut found = Vec::new();
    let mut previous: Vec<TokenTree> = Vec::new();
    for token in tokens.clone() {
        if let TokenTree::Group(group) = &token {
            let is_error = matches!(
                previous.as_slice(),
                [.., TokenTree::Ident(name), TokenTree::Punct(bang)]
                    if name == "compile_error" && bang.as_char() == '!'
            );
            if is_error {
                let lit: syn::LitStr = syn::parse2(group.stream()).expect("a message");
                found.push(lit.value());
            } else {
                found.extend(errors(&group.stream()));
            }
        }
        previous.push(token);
    }
    found
}

fn expand(input: syn::DeriveInput) -> (Vec<String>, String) {
    let tokens = super::expand(input);
    (errors(&tokens), tokens.to_string())
}

#[test]
fn every_mistake_is_reported_at_once() {
    let (errors, tokens) = expand(parse_quote! {
        enum BillingError {
            #[tool_error(NOT_FUOND)]
            InvoiceNotFound,
            #[tool_error(CONFLICT, severity = "fatal")]
            AlreadyPaid,
            Locked,
            #[tool_error(NOT_FOUND, recovery = "retry with {idd}")]
            Missing { id: String, #[detail] other: String, #[detail(key = "other")] again: String },
            #[tool_error(internal, actions(list_invoices))]
            Database(#[retry_after] u64),
        }
    });
    assert_eq!(
        errors,
        [
            "unknown error code `NOT_FUOND`; did you mean `NOT_FOUND`?",
            "unknown severity `fatal`; expected one of `warning`, `error`, `critical`",
            "`{idd}` in `recovery`: `Missing` has no field `idd`; did you mean `id`?",
            "missing error code on `Locked`; add `#[tool_error(NOT_FOUND)]` or \
             `#[tool_error(code = \"…\")]`",
            "duplicate detail key `other` in `Missing`",
            "`actions` does not combine with `internal`; an internal error shows the model only a \
             fixed message and its error id",
            "`#[retry_after]` does not combine with `internal`; an internal error shows the model \
             only a fixed message and its error id",
            "bare action `list_invoices` needs its tool; write `Tool::list_invoices` or add \
             `#[tool_error(tool = Tool)]` on the type",
        ]
    );
    // Stub impls keep the type usable, so the real errors are the only ones.
    assert!(
        tokens.contains(":: fusion :: __private :: ToolErrors for BillingError"),
        "{tokens}"
    );
    assert!(tokens.contains("unimplemented"), "{tokens}");
}

#[test]
fn a_failed_attribute_does_not_also_report_a_missing_code() {
    let (errors, _) = expand(parse_quote! {
        enum E {
            #[tool_error(NOT_FOUND, severty = "warning")]
            A,
        }
    });
    assert_eq!(
        errors,
        ["Unknown field: `severty`. Did you mean `severity`?"]
    );
}

#[test]
fn keys_must_sit_where_they_belong() {
    let (errors, _) = expand(parse_quote! {
        #[tool_error(NOT_FOUND, recovery = "x", tool = Billing)]
        enum E {
            #[tool_error(NOT_FOUND, tool = Billing)]
            A,
        }
    });
    assert_eq!(
        errors,
        [
            "an error code goes on each variant, not on the enum",
            "`recovery` goes on each variant, not on the enum",
            "`tool` goes on the enum, not on a variant",
        ]
    );
    // A struct is its own single contract: both kinds of keys are fine there.
    let (errors, _) = expand(parse_quote! {
        #[tool_error(NOT_FOUND, recovery = "x", tool = Billing, actions(list))]
        struct S;
    });
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn codes_are_checked() {
    let (errors, _) = expand(parse_quote! {
        enum E {
            #[tool_error(not_found)]
            A,
            #[tool_error(NOT_FOUND, CONFLICT)]
            B,
            #[tool_error(NOT_FOUND, code = "ALREADY_PAID")]
            C,
            #[tool_error(code = "")]
            D,
            #[tool_error(WHATEVER)]
            F,
        }
    });
    assert_eq!(
        errors,
        [
            "unknown key `not_found`; canonical error codes are uppercase: `NOT_FOUND`",
            "duplicate error code; give each variant exactly one",
            "duplicate error code; give each variant exactly one",
            "empty error code",
            "unknown error code `WHATEVER`; bare codes are the canonical ones (`NOT_FOUND`, \
             `CONFLICT`, …), write a custom code as `code = \"WHATEVER\"`",
        ]
    );
}

#[test]
fn recovery_templates_are_checked() {
    let (errors, _) = expand(parse_quote! {
        enum E {
            #[tool_error(NOT_FOUND, recovery = "call {} again")]
            A(String),
            #[tool_error(NOT_FOUND, recovery = "call {1} again")]
            B(String),
            #[tool_error(NOT_FOUND, recovery = "call {0:>1$} again")]
            C(String, usize),
            #[tool_error(NOT_FOUND, recovery = "call {0 again")]
            D(String),
            #[tool_error(NOT_FOUND, recovery = "call } again")]
            F(String),
            #[tool_error(NOT_FOUND, recovery = "call {x}")]
            G,
        }
    });
    assert_eq!(
        errors,
        [
            "`{}` in `recovery` names no field; write the field, as in `{id}` or `{0}`",
            "`{1}` in `recovery`: `B` has no field `1`",
            "`{0:>1$}` in `recovery`: width and precision arguments (`$`, `*`) are not supported",
            "unclosed `{` in `recovery`; write `{{` for a literal brace",
            "unmatched `}` in `recovery`; write `}}` for a literal brace",
            "`{x}` in `recovery`: `G` has no fields",
        ]
    );
}

#[test]
fn field_attributes_are_checked() {
    let (errors, _) = expand(parse_quote! {
        enum E {
            #[tool_error(NOT_FOUND)]
            A(#[detail] String),
            #[tool_error(NOT_FOUND)]
            B { #[retry_after(secs)] a: u64, #[detail(name = "x")] b: u64 },
            #[tool_error(NOT_FOUND)]
            C { #[retry_after] a: u64, #[retry_after] b: u64 },
        }
    });
    assert_eq!(
        errors,
        [
            "`#[retry_after]` takes no arguments",
            "Unknown field: `name`. Available values: `key`",
            "`#[detail]` on a tuple field needs a key: `#[detail(key = \"…\")]`",
            "a second `#[retry_after]` in `C`; an error has one retry delay",
        ]
    );
}

#[test]
fn recovery_placeholders_become_positional_arguments() {
    let (errors, tokens) = expand(parse_quote! {
        enum E {
            #[tool_error(NOT_FOUND, recovery = "{{literal}} {b:?} then {a} then {b}")]
            A { a: u8, b: u8 },
            #[tool_error(NOT_FOUND, recovery = "only {{braces}}")]
            B,
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        tokens.contains(
            r#"format ! ("{{literal}} {0:?} then {1} then {0}" , __fusion_1 , __fusion_0)"#
        ),
        "{tokens}"
    );
    // Without placeholders the text is a plain literal, braces unescaped.
    assert!(
        tokens.contains(r#". suggest ("only {braces}")"#),
        "{tokens}"
    );
}

#[test]
fn actions_are_looked_up_by_method_name() {
    let (errors, tokens) = expand(parse_quote! {
        #[tool_error(tool = Billing)]
        enum E {
            #[tool_error(NOT_FOUND, actions(list_invoices, crate::tools::Invoices::search, r#type))]
            A,
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        tokens.contains("< Billing > :: __fusion_action_named (\"list_invoices\")"),
        "{tokens}"
    );
    assert!(
        tokens.contains("< crate :: tools :: Invoices > :: __fusion_action_named (\"search\")"),
        "{tokens}"
    );
    assert!(
        tokens.contains("< Billing > :: __fusion_action_named (\"type\")"),
        "{tokens}"
    );
}

#[test]
fn a_generic_tool_type_is_named_as_a_qualified_path() {
    let (errors, tokens) = expand(parse_quote! {
        #[tool_error(tool = "Gen<u8>")]
        enum E {
            #[tool_error(NOT_FOUND, actions(g))]
            A,
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        tokens.contains("< Gen < u8 > > :: __fusion_action_named (\"g\")"),
        "{tokens}"
    );
}

#[test]
fn generic_types_get_the_bounds_the_envelope_needs() {
    let (errors, tokens) = expand(parse_quote! {
        enum E<'a, T, D: Copy> where T: Clone {
            #[tool_error(NOT_FOUND, recovery = "{id:?} {n:x}")]
            A { #[detail] id: T, n: Vec<T>, plain: &'a str },
            #[tool_error(TIMEOUT)]
            B(#[retry_after] D, #[detail(key = "k")] &'a str),
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    let where_clause = "where T : Clone , E < 'a , T , D > : :: core :: fmt :: Display , \
                        T : :: core :: fmt :: Display , T : :: core :: fmt :: Debug , \
                        Vec < T > : :: core :: fmt :: LowerHex , \
                        D : :: fusion :: __private :: RetryAfterSecs ,";
    assert!(tokens.contains(where_clause), "{tokens}");
    // Fields of concrete types need no bound: `&'a str` is not mentioned.
    assert!(!tokens.contains("& 'a str :"), "{tokens}");
}

#[test]
fn canonical_table_matches_error_code_variants() {
    use heck::ToUpperCamelCase;
    for (wire, variant) in CANONICAL {
        assert_eq!(wire.to_lowercase().to_upper_camel_case(), variant);
    }
}

/// Every section and probe the derive writes runtime paths for, on a concrete type and on a
/// generic one (whose where clause and internal envelope differ).
fn every_section(krate: TokenStream) -> [syn::DeriveInput; 3] {
    [
        parse_quote! {
            #[tool_error(crate = #krate, tool = Billing, category = "not_found")]
            enum BillingError {
                #[tool_error(NOT_FOUND, severity = "warning", recovery = "list {id}", actions(list))]
                Missing { #[detail] id: String, #[retry_after] after: u64 },
                #[tool_error(code = "ALREADY_PAID", retryable = false)]
                Paid,
                #[tool_error(internal, severity = "critical")]
                Database(std::io::Error),
            }
        },
        parse_quote! {
            #[tool_error(crate = #krate)]
            enum Generic<T, D> {
                #[tool_error(TIMEOUT, recovery = "{0:?}")]
                Slow(#[detail(key = "k")] T, #[retry_after] D),
                #[tool_error(internal)]
                Other(T),
            }
        },
        parse_quote! {
            #[tool_error(CONFLICT, crate = #krate, category = "validation")]
            struct Stale;
        },
    ]
}

#[test]
fn the_runtime_is_fusion_by_default() {
    for input in every_section(quote::quote!(::fusion)) {
        let (errors, _) = expand(input.clone());
        assert!(errors.is_empty(), "{errors:?}");
        crate::crate_path::assert_runtime_only_through(&super::expand(input), ":: fusion");
    }
}

#[test]
fn every_runtime_path_goes_through_the_crate_option() {
    for krate in [quote::quote!("::my::rt"), quote::quote!(::my::rt)] {
        for input in every_section(krate.clone()) {
            let (errors, _) = expand(input.clone());
            assert!(errors.is_empty(), "{errors:?}");
            crate::crate_path::assert_runtime_only_through(&super::expand(input), ":: my :: rt");
        }
    }
}

#[test]
fn the_stubs_go_through_the_crate_option_too() {
    let inputs: [syn::DeriveInput; 3] = [
        // An error in a variant: the type's attribute was read.
        parse_quote! {
            #[tool_error(crate = fu)]
            enum E { #[tool_error(NOT_FUOND)] A }
        },
        // An error next to `crate` itself: it is still found.
        parse_quote! {
            #[tool_error(crate = fu, severty = "warning")]
            enum E { #[tool_error(NOT_FOUND)] A }
        },
        parse_quote! {
            #[tool_error(crate = "fu")]
            union U { a: u8 }
        },
    ];
    for input in inputs {
        let (errors, _) = expand(input.clone());
        assert_eq!(errors.len(), 1, "{errors:?}");
        crate::crate_path::assert_runtime_only_through(&super::expand(input), "fu");
    }
}

#[test]
fn crate_goes_on_the_type() {
    let (errors, _) = expand(parse_quote! {
        enum E {
            #[tool_error(NOT_FOUND, crate = fu)]
            A,
        }
    });
    assert_eq!(errors, ["`crate` goes on the enum, not on a variant"]);
    let (errors, _) = expand(parse_quote! {
        #[tool_error(crate = "fu::<T>")]
        enum E {
            #[tool_error(NOT_FOUND)]
            A,
        }
    });
    assert_eq!(
        errors,
        ["`fu::<T>` is not a path; `crate` takes the path to fusion, as in `crate = \"::fu\"`"]
    );
}
