"""HTTP fakes of the services Folio cannot run here (Slack, the Responses API, Azure AI Search).

Each listens on 127.0.0.1 in a background thread, speaks the service's wire format, and is driven by the real SDK.
"""

# How often a fake's server thread looks whether it was asked to stop (socketserver's `poll_interval`): closing a fake
# waits up to this long, and most tests close two or three fakes (at 0.05 s that was about 25 s of a quick run).
POLL_INTERVAL = 0.01
