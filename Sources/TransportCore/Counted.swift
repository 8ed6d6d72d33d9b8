/// A count and a noun that agree: "1 file", "2 files", "0 files". The one place messages
/// choose between singular and plural.
///
/// - Parameters:
///   - count: how many.
///   - singular: the noun for one, e.g. `file` or `line was`.
///   - plural: the noun for any other count; nil adds an `s` to `singular` (give it for
///     irregular nouns and phrases: `counted(n, "line was", "lines were")`).
public func counted(_ count: some BinaryInteger, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}
