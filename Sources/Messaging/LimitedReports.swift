import MessagingCore
import TransportCore

/// Reports one kind of occurrence that a peer can repeat at will (refused connections, ERROR
/// frames, refused files, joins): at once while under its `ReportLimiter`'s burst; otherwise
/// counted, and `summarise` gets the count once the limiter's period is over.
///
/// - Important: used on `scheduler`'s executor only; `summarise` runs there too. It should not
///   capture the owner of this object (a cycle through the scheduler).
public final class LimitedReports {
    private var limiter: ReportLimiter
    private let scheduler: any Scheduler
    private let summarise: (Int) -> Void

    public init(burst: Int = 20, period: Duration = .seconds(10), scheduler: any Scheduler, summarise: @escaping (Int) -> Void) {
        limiter = ReportLimiter(burst: burst, period: period)
        self.scheduler = scheduler
        self.summarise = summarise
    }

    /// Whether to report this occurrence now.
    public func admit() -> Bool {
        scheduler.assertOnExecutor()
        let hadSummaryDue = limiter.summaryDue != nil
        if limiter.admit(at: scheduler.now) { return true }
        if !hadSummaryDue, let due = limiter.summaryDue {
            scheduler.schedule(at: due, leeway: .milliseconds(100)) { [weak self] in
                guard let self else { return }
                let count = limiter.takeSuppressed()
                if count > 0 { summarise(count) }
            }
        }
        return false
    }
}
