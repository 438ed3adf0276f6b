"""Start, answer and read aggregation connections from Python, byte-compatible with the TypeScript worker.

So far: the payload codec (``aggregation_connections.codec``), its settings from the same environment
variables as the TypeScript side (``aggregation_connections.settings``) and the contract's models
generated from the zod schemas (``aggregation_connections.contract``). See docs/python-pipeline.md.
"""
