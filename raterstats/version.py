"""Version of raterstats (single source, read by hatchling)."""

__version__ = "0.1.0"
