"""Configuration: Settings from the environment, and the channel policy file."""

from bot.config.channels import AccessRules, ChannelPolicy, ChannelRule, Prompt, load_policy, narrow
from bot.config.settings import Settings, load_settings

__all__ = [
    "AccessRules",
    "ChannelPolicy",
    "ChannelRule",
    "Prompt",
    "Settings",
    "load_policy",
    "load_settings",
    "narrow",
]
