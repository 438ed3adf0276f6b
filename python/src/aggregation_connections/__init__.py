"""Start, answer and read aggregation connections from Python, byte-compatible with the TypeScript worker.

The async client with the pipeline's verbs (``aggregation_connections.client``), the payload codec
(``aggregation_connections.codec``), their settings from the same environment variables as the
TypeScript side (``aggregation_connections.settings``) and the contract's models generated from the zod
schemas (``aggregation_connections.contract``). See docs/python-pipeline.md.
"""
