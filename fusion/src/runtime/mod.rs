//! One call, whatever the transport: the `Tool` trait and its prepared calls, dispatch of an
//! arguments object to an action, the call path (limits, guards, the panic boundary, the
//! trace span), and the registry: the front half a server and a tester share (the registered
//! tools, checked once, looked up by the name a client used, their gates, the contract
//! awareness, the response named as the exposition names actions).

pub(crate) mod call;
pub(crate) mod decoded;
pub(crate) mod dispatch;
pub(crate) mod fit;
pub(crate) mod names;
pub(crate) mod registry;
pub(crate) mod tool;
