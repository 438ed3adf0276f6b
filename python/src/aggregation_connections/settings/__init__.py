"""Settings from the same environment variables as the TypeScript side (src/settings/, docs/configuration.md)."""

from .api_key_file import ApiKeyFileSettings, TemporalApiKeyFileError
from .client import ClientSettings, PriorityPolicy, TlsSettings, client_settings_from_env
from .encryption import ConfigError, codec_from_env, encryption_from_env

__all__ = [
    "ApiKeyFileSettings",
    "ClientSettings",
    "ConfigError",
    "PriorityPolicy",
    "TemporalApiKeyFileError",
    "TlsSettings",
    "client_settings_from_env",
    "codec_from_env",
    "encryption_from_env",
]
