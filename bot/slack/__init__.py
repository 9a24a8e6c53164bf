"""Folio in Slack: the Bolt app, its listeners, `/ask` parsing and Block Kit rendering.

`bot.slack.app.build_app(...)` is the one wiring function; everything else here is a listener or a pure function.
"""
