// Every tool that prints needs `TerminalSafe` and `MemberName`; they come with this module.
@_exported import SafeText
