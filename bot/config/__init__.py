"""Configuration: Settings from the environment, and the channel policy file."""

from bot.config.channels import ChannelPolicy, ChannelRule, load_policy, narrow
from bot.config.settings import Settings, load_settings

__all__ = ["ChannelPolicy", "ChannelRule", "Settings", "load_policy", "load_settings", "narrow"]
