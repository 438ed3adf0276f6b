"""Settings from the same environment variables as the TypeScript side (src/settings/, docs/configuration.md)."""

from .encryption import ConfigError, codec_from_env, encryption_from_env

__all__ = ["ConfigError", "codec_from_env", "encryption_from_env"]
