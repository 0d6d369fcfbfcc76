"""Benchmarks: scripts run as ``python -m benchmarks.<name>`` from the clone, and importable
by the tests (pytest puts the clone on ``sys.path``); they are not part of the wheel."""
