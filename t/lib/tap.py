"""t/lib/tap.py - TAP output for the Python halves of the t/*.sh tests.

    from tap import Tap
    tap = Tap()
    tap.ok(good, "what was checked", "a diagnostic shown when it failed")
    tap.done()   # prints the plan and exits 1 when any check failed

The shell half puts $top_srcdir/t on PYTHONPATH.
"""
import sys


class Tap:
    def __init__(self):
        self.n = 0
        self.fails = 0

    def ok(self, good, what, detail=""):
        """One test line; the detail follows as a comment when it failed."""
        self.n += 1
        print(f"{'ok' if good else 'not ok'} {self.n} - {what}")
        if not good:
            self.fails += 1
            for line in str(detail).splitlines():
                print(f"# {line}")
        return good

    def done(self):
        """The plan, then the exit status."""
        print(f"1..{self.n}")
        sys.exit(1 if self.fails else 0)
