"""What Scripts/bench and Scripts/stress share: commands on a virtual LAN host, processes whose
output is watched line by line, and readings from /proc."""
import os
import signal
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAN = os.path.join(ROOT, "Scripts", "lan")


def run(command, **kwargs):
    return subprocess.run(command, check=True, **kwargs)


def on_host(lan, host, command):
    """COMMAND run on HOST of LAN, with that host's D-Bus (see Scripts/lan exec)."""
    return [LAN, "--lan", lan, "exec", host] + command


def release_bin():
    return subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()


class Watched:
    """A background process whose output lines are collected with their arrival times."""

    def __init__(self, command, stdin=subprocess.DEVNULL, stderr=subprocess.STDOUT):
        self.lines = []
        self.condition = threading.Condition()
        self.process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                        errors="surrogateescape")
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            with self.condition:
                self.lines.append((time.monotonic(), line.rstrip("\n")))
                self.condition.notify_all()
        with self.condition:
            self.condition.notify_all()

    def wait(self, timeout):
        """Waits for the process to exit and for its last line to be collected (the lines are
        read on another thread, which may not have reached them when the process is gone)."""
        self.process.wait(timeout)
        self.reader.join(timeout)

    def wait_for(self, predicate, timeout=20.0):
        """The arrival time of the first line matching predicate, or None."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while True:
                for stamp, line in self.lines:
                    if predicate(line):
                        return stamp
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    return None
                self.condition.wait(min(remaining, 0.05))

    def text(self):
        with self.condition:
            return [line for _, line in self.lines]

    def say(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def stop(self, sig=signal.SIGTERM, timeout=5):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def wall(command, **kwargs):
    """Seconds a command takes, start to exit; fails loudly if it fails."""
    start = time.monotonic()
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
    return time.monotonic() - start


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def cpu_ticks(pid):
    """User plus system time of a process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def checked_pid(pid, name):
    """`Scripts/lan exec` execs into the tool, so the PID is the tool's; check it."""
    with open(f"/proc/{pid}/comm") as comm:
        if comm.read().strip() != name[:15]:
            raise RuntimeError(f"process {pid} is not {name}")
    return pid
