/// A shell that `--generate-completion-script` writes a completion script for.
public enum CompletionShell: String, Sendable, Hashable, CaseIterable {
    case bash, zsh, fish
}

extension CommandSpec.Option {
    /// What a shell completion offers as an option's value. Kept with the option's
    /// declaration, so the help, the manual page and every shell's script say the same.
    public enum ValueCompletion: Sendable, Hashable {
        /// One of these words (e.g. `rename`, `fail`).
        case values([String])
        /// A path to a file.
        case file
        /// A path to a directory.
        case directory
    }
}
