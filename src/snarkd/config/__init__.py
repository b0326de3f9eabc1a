"""Settings, declared once (settings.py), validated once (loader.py), rendered for people (render.py).

The bottom layer beside formats/ and curves/: every other layer may read a Config
or call `default()`, and only this package reads snarkd's environment variables.
"""

from snarkd.config.kinds import Listen, parse_listen
from snarkd.config.loader import CONFIG_ENV, Config, ConfigError, config_path, default
from snarkd.config.sections import EngineConfig
from snarkd.config.settings import SETTINGS, Setting

__all__ = ["Config", "ConfigError", "EngineConfig", "Listen", "SETTINGS", "Setting", "CONFIG_ENV", "config_path", "default",
           "parse_listen"]
