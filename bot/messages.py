"""Every sentence Folio says to a person, in one place so tone and wording stay consistent.

Plain strings and small pure functions that fill them in. Slack mrkdwn is allowed; keep each to one or two lines
and end with what the person can do next.
"""

from __future__ import annotations

# --- answers -----------------------------------------------------------------------------------------------------
NO_MODEL = "No model is set up, so these are the passages that match best, quoted as they stand."
MODEL_DOWN = "The model is not answering right now, so these are the passages that match best, quoted as they stand."
NOT_IN_DOCUMENTS = "The documents I can search do not answer this."
HISTORY_RESTORED = "The earlier context of this thread had expired; I restored it from the saved history."
HISTORY_EXPIRED = "The history of this thread has expired, so I answered it as a new question."

# --- failures ----------------------------------------------------------------------------------------------------
SEARCH_DOWN = "Search is not available right now. Please try again in a few minutes; if it keeps failing, tell an admin."
STORE_DOWN = "I could not reach my conversation store. Please try again in a minute; if it keeps failing, tell an admin."
UNEXPECTED = "Something went wrong on my side and I could not answer. Please try again; if it keeps failing, tell an admin."
