import MessagingCore

extension Message.Capabilities {
    /// What a peer from before `.streamedFiles` announces: its offers name the SHA-256 and its
    /// `FILE_END` carries none. Tests of that older exchange (and of what a newer peer does
    /// with an older one) say HELLO with these.
    public static let beforeStreamedFiles = Message.Capabilities.all.subtracting(.streamedFiles)
}
