// The list of sub-commands. Each is loaded only when used so `prazo --help` stays fast.
// (Commands are registered here as their issues land.)
export {};
