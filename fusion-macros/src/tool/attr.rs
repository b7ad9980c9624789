//! The options of `#[fusion::tool(...)]` and `#[action(...)]` (parsed with darling), and doc
//! comments turned into descriptions.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::{Flag, SpannedValue};
use proc_macro2::TokenStream;
use syn::{Attribute, Meta};

use super::guard::{ConcurrencyArgs, DurationLit, GuardArgs, RateLimitArgs, ScopesArg};
use crate::crate_path::CratePath;
use crate::errors::Errors;

/// `#[fusion::tool(name = "billing", title = "Billing", description = "…", discriminator = "op",
/// output_schema, input_schema = "as_written", read_only, concurrency(..), rate_limit(..),
/// timeout = "30s", crate = ::fu)]`.
#[derive(Debug, Default, FromMeta)]
pub(crate) struct ToolArgs {
    /// The MCP tool name; defaults to the type or function name in snake_case.
    pub(crate) name: Option<SpannedValue<String>>,
    /// The tool's title; defaults to its doc comment's summary.
    pub(crate) title: Option<SpannedValue<String>>,
    /// The tool's description; defaults to its doc comment.
    pub(crate) description: Option<String>,
    /// The behaviour hints of every action that does not state its own (darling flattens one
    /// field only: these four are gathered by [`ToolArgs::annotations`]).
    pub(crate) read_only: Option<bool>,
    /// `destructive`.
    pub(crate) destructive: Option<bool>,
    /// `idempotent`.
    pub(crate) idempotent: Option<bool>,
    /// `open_world`.
    pub(crate) open_world: Option<bool>,
    /// The field naming the action (`action` by default); multi-action tools only.
    pub(crate) discriminator: Option<SpannedValue<String>>,
    /// Declares the success type's schema as the MCP `outputSchema`; function tools only (an
    /// `impl` block's actions each say it with `#[action(output_schema)]`).
    pub(crate) output_schema: Flag,
    /// `errors(..)`: the error variants of a function tool's one action (an `impl` block's
    /// actions each say it with `#[action(errors(..))]`).
    pub(crate) errors: Option<SpannedValue<darling::util::PathList>>,
    /// How the input schema is published: `"portable"` or `"as_written"`; the server's
    /// setting when absent.
    pub(crate) input_schema: Option<SpannedValue<String>>,
    /// The path generated code names fusion by (`::fusion` by default).
    #[darling(default, rename = "crate")]
    pub(crate) krate: CratePath,
    /// The runtime guards of the whole tool.
    #[darling(flatten)]
    pub(crate) guards: GuardArgs,
}

/// `#[action(name = "list", description = "…", output_schema, blocking, task, strict_json,
/// read_only, destructive = false, …)]`.
///
/// Each option is one field, the guard options (`timeout`, `rate_limit`, `concurrency`,
/// `scopes`) included.
#[derive(Debug, Default, FromMeta)]
pub(crate) struct ActionArgs {
    /// The action name, the discriminator value; defaults to the method name.
    pub(crate) name: Option<SpannedValue<String>>,
    /// The action's title; defaults to its doc comment's summary.
    pub(crate) title: Option<SpannedValue<String>>,
    /// The action's description; defaults to its doc comment.
    pub(crate) description: Option<SpannedValue<String>>,
    /// Declares the success type's schema as the MCP `outputSchema` and answers successes
    /// with `structuredContent`.
    pub(crate) output_schema: Flag,
    /// The behaviour hints, written next to the other options (`#[action(read_only)]`).
    #[darling(flatten)]
    pub(crate) annotations: Annotations,
    /// `concurrency(max_active = .., max_queued = ..)` (darling flattens one field only; these
    /// three are gathered by [`ActionArgs::guards`]).
    pub(crate) concurrency: Option<ConcurrencyArgs>,
    /// `rate_limit(calls = .., per = "..")`.
    pub(crate) rate_limit: Option<RateLimitArgs>,
    /// `timeout = ".."`.
    pub(crate) timeout: Option<DurationLit>,
    /// `scopes("invoices:write", ..)`: the OAuth scopes a caller must hold.
    pub(crate) scopes: Option<ScopesArg>,
    /// `errors(BillingError::NotFound, ..)`: the variants of the action's error type it can
    /// return, its exact error contract (every variant when left out).
    pub(crate) errors: Option<darling::util::PathList>,
    /// `blocking`: a plain `fn` that may block, run on the blocking pool.
    pub(crate) blocking: Flag,
    /// `task`: the action may run as a task (MCP Tasks extension) for clients that support it;
    /// `task = required`: it runs only as a task.
    pub(crate) task: Option<TaskArg>,
    /// `strict_json`: arguments are taken strictly as sent, never decoded from a string
    /// holding JSON.
    pub(crate) strict_json: Flag,
    /// `max_result = 16000`: the action's result limit, in bytes of payload text.
    pub(crate) max_result: Option<usize>,
    /// `items = "invoices"`: where the result's list is in its JSON object.
    pub(crate) items: Option<String>,
    /// `page(offset = "offset", limit = "limit")`: the action's paging arguments.
    pub(crate) page: Option<PageArgs>,
}

/// `task` (the action may run as a task), `task = required` (it runs only as one), or the
/// list form `task(required, deferred)`: `deferred`, the task starts when the action calls
/// `RequestContext::start_task`, its questions before that asked as a direct call's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TaskArg {
    /// `required`.
    pub(crate) required: bool,
    /// `deferred`.
    pub(crate) deferred: bool,
}

const TASK_FORMS: &str = "`task` takes no value (the action may run as a task), `task = required` (it runs only as one), or a list of `required`, `optional` and `deferred` (`task(required, deferred)`: the task starts when the action calls `ctx.start_task()`)";

impl TaskArg {
    /// Takes one word of the attribute; `false` for a word it does not know.
    fn word(&mut self, word: Option<String>) -> bool {
        match word.as_deref() {
            Some("optional") => self.required = false,
            Some("required") => self.required = true,
            Some("deferred") => self.deferred = true,
            _ => return false,
        }
        true
    }
}

impl FromMeta for TaskArg {
    fn from_word() -> darling::Result<TaskArg> {
        Ok(TaskArg::default())
    }

    fn from_expr(expr: &syn::Expr) -> darling::Result<TaskArg> {
        let word = match expr {
            syn::Expr::Path(path) => path.path.get_ident().map(ToString::to_string),
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Some(text.value()),
            _ => None,
        };
        let mut task = TaskArg::default();
        match task.word(word) {
            true => Ok(task),
            false => Err(darling::Error::custom(TASK_FORMS).with_span(expr)),
        }
    }

    fn from_list(items: &[NestedMeta]) -> darling::Result<TaskArg> {
        let mut task = TaskArg::default();
        for item in items {
            let word = match item {
                NestedMeta::Meta(Meta::Path(path)) => path.get_ident().map(ToString::to_string),
                _ => None,
            };
            if !task.word(word) {
                return Err(darling::Error::custom(TASK_FORMS).with_span(item));
            }
        }
        Ok(task)
    }
}

/// `page(offset = "offset", limit = "limit")`: the names of the paging arguments.
#[derive(Debug, Clone, FromMeta)]
pub(crate) struct PageArgs {
    pub(crate) offset: String,
    pub(crate) limit: String,
}

impl ToolArgs {
    /// The behaviour hints given on the tool.
    pub(crate) fn annotations(&self) -> Annotations {
        Annotations {
            read_only: self.read_only,
            destructive: self.destructive,
            idempotent: self.idempotent,
            open_world: self.open_world,
        }
    }
}

impl ActionArgs {
    /// The guard options.
    pub(crate) fn guards(&self) -> GuardArgs {
        GuardArgs {
            concurrency: self.concurrency.clone(),
            rate_limit: self.rate_limit.clone(),
            timeout: self.timeout,
            scopes: self.scopes.clone(),
        }
    }
}

/// MCP tool annotations (MCP specification 2025-06-18, "Tool annotations"). A bare word means
/// `true` (`read_only`); `read_only = false` states the opposite; leaving one out leaves the
/// hint unset.
#[derive(Debug, Default, Clone, Copy, FromMeta)]
pub(crate) struct Annotations {
    /// `readOnlyHint`.
    pub(crate) read_only: Option<bool>,
    /// `destructiveHint`.
    pub(crate) destructive: Option<bool>,
    /// `idempotentHint`.
    pub(crate) idempotent: Option<bool>,
    /// `openWorldHint`.
    pub(crate) open_world: Option<bool>,
}

impl Annotations {
    /// These hints, each unset one taken from `fallback` (the tool's, for an action).
    pub(crate) fn or(self, fallback: Annotations) -> Annotations {
        Annotations {
            read_only: self.read_only.or(fallback.read_only),
            destructive: self.destructive.or(fallback.destructive),
            idempotent: self.idempotent.or(fallback.idempotent),
            open_world: self.open_world.or(fallback.open_world),
        }
    }
}

/// Parses the attribute's own arguments (the tokens inside `#[fusion::tool(...)]`).
pub(crate) fn tool_args(args: TokenStream, errors: &mut Errors) -> ToolArgs {
    let parsed = NestedMeta::parse_meta_list(args).map_err(darling::Error::from);
    let Some(items) = errors.handle(parsed) else {
        return ToolArgs::default();
    };
    let parsed = ToolArgs::from_list(&items);
    errors.handle(parsed).unwrap_or_else(|| ToolArgs {
        // The stub still names the runtime through the user's path (see `CratePath::find`).
        krate: CratePath::find(&items).unwrap_or_default(),
        ..ToolArgs::default()
    })
}

/// Whether `attr` is an `#[action]` marker.
pub(crate) fn is_action(attr: &Attribute) -> bool {
    attr.path().is_ident("action")
}

/// Parses the `#[action]` attributes of one method: `None` when it has none (an ordinary
/// method), the options otherwise. A repeated `#[action]` is an error.
pub(crate) fn action_args(attrs: &[Attribute], errors: &mut Errors) -> Option<ActionArgs> {
    let mut found: Option<ActionArgs> = None;
    for attr in attrs.iter().filter(|a| is_action(a)) {
        if found.is_some() {
            errors.at(attr, "duplicate `#[action]` attribute");
            continue;
        }
        let args = match &attr.meta {
            Meta::Path(_) => ActionArgs::default(),
            // darling parses the list's tokens into its nested-meta form itself.
            Meta::List(list) => {
                let parsed = NestedMeta::parse_meta_list(list.tokens.clone())
                    .map_err(darling::Error::from)
                    .and_then(|items| ActionArgs::from_list(&items));
                errors.handle(parsed).unwrap_or_default()
            }
            Meta::NameValue(nv) => {
                errors.at(
                    nv.eq_token,
                    "expected `#[action]` or `#[action(...)]`, found `#[action = ...]`",
                );
                ActionArgs::default()
            }
        };
        found = Some(args);
    }
    found
}

/// The doc comment of an item as a description: the `#[doc]` lines joined with newlines, the
/// common indentation removed, runs of blank lines kept as one paragraph break, the whole
/// trimmed. `None` when there is no doc comment.
pub(crate) fn docs(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) = &nv.value
        {
            // `split`, not `lines`: an empty `///` line is a paragraph break to keep.
            let value = text.value();
            let block = value.contains('\n');
            lines.extend(value.split('\n').map(|l| {
                let line = l.trim_end_matches('\r');
                // A block comment's lines (`/** … */`) often start with ` * `.
                match line.trim_start().strip_prefix('*') {
                    Some(rest) if block && (rest.is_empty() || rest.starts_with(' ')) => {
                        rest.to_owned()
                    }
                    _ => line.to_owned(),
                }
            }));
        }
    }
    let text = join_doc_lines(&lines);
    (!text.is_empty()).then_some(text)
}

/// The default title of an item: the first sentence of its doc comment's summary (the first
/// paragraph, as [`docs`] joins it, on one line), without its period. `None` without a doc
/// comment.
///
/// A sentence rather than the first line, so a summary wrapped over two lines is not cut
/// mid-sentence, and a summary of two sentences gives a label, not a paragraph. The period
/// goes because a title is a label (MCP: a name for user interfaces, like `Get an invoice`),
/// while a doc summary is a sentence; an ellipsis stays.
pub(crate) fn doc_title(attrs: &[Attribute]) -> Option<String> {
    docs(attrs).map(|docs| summary(&docs))
}

/// See [`doc_title`]; separate so it can be tested without syntax trees.
fn summary(docs: &str) -> String {
    let paragraph = docs.split("\n\n").next().unwrap_or_default();
    // A Markdown heading (`# Billing`) is the title without its marker.
    let paragraph = paragraph.trim_start_matches('#').trim_start();
    let line = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
    // A sentence ends at a period followed by a space (`v1.2` does not end one), unless the
    // word it ends is an abbreviation (`e.g.`, `i.e.`, `etc.`, `vs.`).
    let is_abbreviation = |word: &str| {
        word.contains('.') || matches!(word.to_ascii_lowercase().as_str(), "etc" | "vs" | "cf")
    };
    let end = line.match_indices(". ").map(|(at, _)| at).find(|&at| {
        let word = line[..at].rsplit(' ').next().unwrap_or_default();
        !is_abbreviation(word)
    });
    let sentence = match end {
        Some(end) => &line[..=end],
        None => &line,
    };
    match sentence.strip_suffix('.') {
        Some(rest) if !rest.ends_with('.') => rest.to_owned(),
        _ => sentence.to_owned(),
    }
}

/// See [`docs`]; separate so it can be tested without syntax trees.
fn join_doc_lines(lines: &[String]) -> String {
    // Counted in characters, not bytes: an indentation may be a non-breaking space (2 bytes).
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.chars().take_while(|c| c.is_whitespace()).count())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    let mut blank = false;
    for line in lines {
        let start = line
            .char_indices()
            .nth(indent)
            .map_or(line.len(), |(i, _)| i);
        let line = line[start..].trim_end();
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        out.push_str(line);
        blank = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join(lines: &[&str]) -> String {
        join_doc_lines(&lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn doc_lines_lose_the_space_after_the_slashes() {
        assert_eq!(
            join(&[" Lists invoices.", " Newest first."]),
            "Lists invoices.\nNewest first."
        );
    }

    #[test]
    fn blank_lines_become_one_paragraph_break_and_the_ends_are_trimmed() {
        assert_eq!(
            join(&["", " First.", "", "", " Second.", " ", ""]),
            "First.\n\nSecond."
        );
    }

    #[test]
    fn deeper_indentation_is_kept() {
        assert_eq!(join(&[" Steps:", "   - one"]), "Steps:\n  - one");
    }

    #[test]
    fn indentation_is_counted_in_characters() {
        // A non-breaking space is 2 bytes; the line used to be dropped.
        assert_eq!(
            join(&["\u{a0}indented with nbsp", " normal line"]),
            "indented with nbsp\nnormal line"
        );
        assert_eq!(join(&["\u{a0}\u{a0}é", " x"]), "\u{a0}é\nx");
    }

    #[test]
    fn block_doc_comments_lose_their_stars() {
        let item: syn::ItemFn = syn::parse_quote! {
            /**
             * Adds two numbers.
             *
             * Both must be finite; *really*.
             */
            fn add() {}
        };
        assert_eq!(
            docs(&item.attrs).as_deref(),
            Some("Adds two numbers.\n\nBoth must be finite; *really*.")
        );
        // A line comment that starts with `*` keeps it (a Markdown list).
        let item: syn::ItemFn = syn::parse_quote! {
            /// * one
            /// * two
            fn list() {}
        };
        assert_eq!(docs(&item.attrs).as_deref(), Some("* one\n* two"));
    }

    #[test]
    fn a_title_is_the_first_sentence_without_its_period() {
        assert_eq!(summary("Lists invoices."), "Lists invoices");
        assert_eq!(
            summary("Lists invoices.\n\nNewest first."),
            "Lists invoices"
        );
        // A summary wrapped over lines is one title, not its first line.
        assert_eq!(
            summary("Lists the invoices of a customer,\nnewest first.\n\nMore."),
            "Lists the invoices of a customer, newest first"
        );
        // The first sentence: a title is a label.
        assert_eq!(
            summary("The balance of one invoice. Declares an output schema."),
            "The balance of one invoice"
        );
        assert_eq!(summary("Get an invoice"), "Get an invoice");
        assert_eq!(summary("Waits..."), "Waits...");
        assert_eq!(summary("Is it paid?"), "Is it paid?");
        assert_eq!(summary("Uses `v1.2`."), "Uses `v1.2`");
        assert_eq!(
            summary("Gets e.g. the invoice. Then more."),
            "Gets e.g. the invoice"
        );
        assert_eq!(
            summary("Lists notes, drafts etc. in order."),
            "Lists notes, drafts etc. in order"
        );
        assert_eq!(summary("# Billing\n\nInvoices."), "Billing");
    }

    #[test]
    fn a_title_needs_a_doc_comment() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Gets one invoice.
            ///
            /// By id.
            fn get() {}
        };
        assert_eq!(doc_title(&item.attrs).as_deref(), Some("Gets one invoice"));
        let item: syn::ItemFn = syn::parse_quote! {
            #[inline]
            fn get() {}
        };
        assert_eq!(doc_title(&item.attrs), None);
    }

    #[test]
    fn tool_hints_fill_the_actions_unset_ones() {
        let tool = Annotations {
            read_only: Some(true),
            open_world: Some(false),
            ..Annotations::default()
        };
        let action = Annotations {
            read_only: Some(false),
            destructive: Some(false),
            ..Annotations::default()
        };
        let merged = action.or(tool);
        assert_eq!(merged.read_only, Some(false));
        assert_eq!(merged.destructive, Some(false));
        assert_eq!(merged.idempotent, None);
        assert_eq!(merged.open_world, Some(false));
    }

    #[test]
    fn no_docs_is_empty() {
        assert_eq!(join(&[]), "");
        assert_eq!(join(&["", "  "]), "");
    }

    #[test]
    fn doc_attributes_are_read_in_order() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Adds two numbers.
            ///
            /// Both must be finite.
            #[inline]
            fn add() {}
        };
        assert_eq!(
            docs(&item.attrs).as_deref(),
            Some("Adds two numbers.\n\nBoth must be finite.")
        );
    }

    #[test]
    fn action_options_parse_words_and_booleans() {
        let item: syn::ItemFn = syn::parse_quote! {
            #[action(name = "list", read_only, destructive = false)]
            fn list_all() {}
        };
        let mut errors = Errors::default();
        let args = action_args(&item.attrs, &mut errors).unwrap();
        assert!(errors.finish().is_none());
        assert_eq!(args.name.as_deref().map(String::as_str), Some("list"));
        assert_eq!(args.annotations.read_only, Some(true));
        assert_eq!(args.annotations.destructive, Some(false));
        assert_eq!(args.annotations.idempotent, None);
        assert!(!args.output_schema.is_present());
    }

    #[test]
    fn output_schema_is_a_bare_word() {
        let item: syn::ItemFn = syn::parse_quote! {
            #[action(output_schema, read_only)]
            fn get() {}
        };
        let mut errors = Errors::default();
        let args = action_args(&item.attrs, &mut errors).unwrap();
        assert!(errors.finish().is_none());
        assert!(args.output_schema.is_present());
        assert_eq!(args.annotations.read_only, Some(true));

        let item: syn::ItemFn = syn::parse_quote! {
            #[action(output_schema = true)]
            fn get() {}
        };
        let mut errors = Errors::default();
        action_args(&item.attrs, &mut errors);
        assert!(errors.finish().is_some());
    }

    #[test]
    fn unknown_action_options_suggest_the_closest() {
        let item: syn::ItemFn = syn::parse_quote! {
            #[action(read_onyl)]
            fn list_all() {}
        };
        let mut errors = Errors::default();
        action_args(&item.attrs, &mut errors);
        let message = errors.finish().unwrap().to_string();
        assert!(message.contains("`read_onyl`"), "{message}");
        assert!(message.contains("`read_only`"), "{message}");
    }
}
