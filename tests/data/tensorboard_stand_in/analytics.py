"""Test stand-in for Segment's analytics-python, which Debian does not package (README.md).

Determined's harness (determined.exec.harness, what a legacy entrypoint runs) imports it to send
usage data when DET_SEGMENT_ENABLED is "true", which no test sets: nothing is ever sent.
"""
write_key = None
max_retries = 0


def track(*args, **kwargs):
    """Sends nothing."""
