//! One call, whatever the transport: the `Tool` trait and its prepared calls, dispatch of an
//! arguments object to an action, and the call path the server and the tester share (limits,
//! guards, the panic boundary, the trace span).

pub(crate) mod call;
pub(crate) mod dispatch;
pub(crate) mod tool;
