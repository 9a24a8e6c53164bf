"""Folio: a Slack bot that answers questions about your documents and links every claim to its page."""

__version__ = "0.1.0"
