"""The time zone of the gateway's day: `{{today}}` and the gateway's dated log file names."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from clawspec.errors import ConfigError

if TYPE_CHECKING:
    from clawspec.config.settings import Settings


def gateway_timezone(settings: Settings) -> tzinfo:
    """The zone `{{today}}` and log file names use (config `timezone`, else local)."""
    if settings.timezone:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(settings.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"timezone: unknown time zone '{settings.timezone}'") from None
    return datetime.now().astimezone().tzinfo  # type: ignore[return-value]
