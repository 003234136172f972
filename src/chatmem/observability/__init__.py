"""What a running process tells its operator: Prometheus metrics, structured logs, optional traces.

Why it exists: one place for the telemetry every part of the process reports into, so that
domains call small typed hooks (``rt.telemetry.turn_started(...)``) instead of each knowing
about Prometheus, logging formats or OpenTelemetry. Nothing here imports a feature package and
nothing is created at import time: the composition root builds one ``Telemetry`` per Runtime
(tests build several side by side, each with its own metric registry).
"""
