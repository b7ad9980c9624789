//! One call, whatever the transport: the `Tool` trait and its prepared calls, a tool's
//! definition compiled (routing to an action, argument validators), the registry (the front
//! half a server and a tester share: the registered tools, checked once, a call resolved once
//! by the name a client used, their gates, the contract awareness, the response named as the
//! exposition names actions) and the call path (limits, guards, the panic boundary, the trace
//! span, the answer).

pub(crate) mod call;
pub(crate) mod compiled;
pub(crate) mod decoded;
pub(crate) mod fit;
pub(crate) mod names;
pub(crate) mod registry;
pub(crate) mod tool;
