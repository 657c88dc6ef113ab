"""What Colleague does in production: Prometheus metrics (`metrics`), OpenTelemetry traces (`tracing`),
JSON logs (`logs`), and the admin usage page's API (`usage`).

`setup.install(app, settings, db)` is the one call `create_app` makes; the chat and the agent loop report
through `observe` (its docstring lists their call-sites). Nothing is imported here, so the chat and the
loop can import `observe` without pulling in the routers.
"""
