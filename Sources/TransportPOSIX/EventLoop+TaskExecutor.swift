/// A loop is also a task executor: a task started with `Task(executorPreference: loop)` runs
/// its nonisolated code on the loop's thread, as work handed over to the loop. Such a task
/// may use what is bound to the loop, and every hop between it and the loop's objects (a
/// continuation they resume, a `submit`) stays on that thread: no other thread is woken and
/// no eventfd is written. svc-publish prints its room's events this way (each event cost four
/// thread hand-offs while the printing task ran on Swift's pool: docs/BENCHMARKS.md, row 7).
///
/// A job the loop's own work hands over while it handles ready sockets, timers and tasks runs
/// at the end of that iteration, after the sends gathered before it are written: what a room
/// answers goes out before a task on the loop prints what came in. A job handed over from
/// another thread, or by the end-of-iteration work itself, runs in the next iteration, so
/// that a task which keeps handing itself over cannot keep the loop from its sockets.
///
/// - Important: such a task runs between the loop's other work, so it must not block (no
///   blocking read, no `runAndWait`), and it must end before `shutdown()`: jobs handed over
///   after the loop has stopped are dropped, and their task never resumes.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let run = { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
        if inEventLoop, !isEndingIteration {
            executeAtEndOfIteration(run)
        } else {
            execute(run)
        }
    }
}
