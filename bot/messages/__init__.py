"""Every sentence Folio says to a person, in one place so tone and wording stay consistent.

Plain strings and small pure functions that fill them in. Slack mrkdwn is allowed; keep each to one or two lines
and end with what the person can do next.

Split by audience: `people` (wherever Folio answers), `slack` (Slack alone), `pages` (the viewer), `agents` (MCP),
`terminal` (the `folio` command), `operators`; `words` holds what they share. Import `from bot import messages` and
read `messages.NAME`, whichever module holds it.
"""

from bot.messages.agents import *  # noqa: F403
from bot.messages.operators import *  # noqa: F403
from bot.messages.pages import *  # noqa: F403
from bot.messages.people import *  # noqa: F403
from bot.messages.slack import *  # noqa: F403
from bot.messages.terminal import *  # noqa: F403
from bot.messages.words import *  # noqa: F403
