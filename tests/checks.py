"""The PASS/FAIL lines of the script tests (tests/test_*.py), which run_tests.py relays by
prefix: `PASS <prefix>:<name>` or `FAIL <prefix>:<name>`, and an exit status of 1 if any failed."""
import sys


class Checks:
    def __init__(self, prefix):
        self.prefix, self.failed = prefix, 0

    def __call__(self, ok, name):
        print(f"{'PASS' if ok else 'FAIL'} {self.prefix}:{name}")
        self.failed += 0 if ok else 1

    def exit(self):
        sys.exit(1 if self.failed else 0)
